package graph

import (
	"fmt"
	"strings"
)

// DOT renders the graph in Graphviz DOT. Output order is stable (START, then
// nodes in declaration order); ids and labels are quoted and escaped. kinds,
// when non-nil, adds each node's kind to its label. Route labels are padded
// with a space each side and drawn smaller than node labels, and nodes are
// spaced apart, so the labels of neighbouring edges (a loop's "continue"
// beside a bypass's "failed") do not run together. Fan-out edges are bold,
// blue and labelled "fork"; join nodes are inverted trapezia.
//
// Nodes that run a graph inside themselves (Nested) get it drawn in a
// cluster of its own, its ids prefixed with the node's id and "/", joined
// to the node by a dashed edge.
func (c *Compiled[S]) DOT(name string, kinds map[string]string, nested ...Nested) string {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n", dotQuote(name))
	b.WriteString("  rankdir=TB;\n")
	b.WriteString("  nodesep=0.6;\n")
	b.WriteString("  ranksep=0.5;\n")
	b.WriteString("  edge [fontsize=11];\n")
	c.dotBody(&b, "", "  ", kinds, nested)
	b.WriteString("}\n")
	return b.String()
}

// Nested is a graph drawn inside a node of another: the pipeline a
// subgraph or map node runs.
type Nested struct {
	// Node is the node of the outer graph that runs the graph.
	Node string
	// Label says how it runs it ("subgraph", "map: per item").
	Label string
	// Graph is the inner graph; Kinds its nodes' kinds; Nested its own
	// nested graphs.
	Graph  Drawable
	Kinds  map[string]string
	Nested []Nested
}

// Drawable is a compiled graph of any state type, for Nested.
type Drawable interface {
	dotBody(b *strings.Builder, prefix, indent string, kinds map[string]string, nested []Nested)
	mermaidBody(b *strings.Builder, prefix, indent string, kinds map[string]string, nested []Nested)
}

// dotBody writes the nodes and edges of c, ids prefixed with prefix, then
// its nested graphs as clusters.
func (c *Compiled[S]) dotBody(b *strings.Builder, prefix, indent string, kinds map[string]string, nested []Nested) {
	q := func(id string) string { return dotQuote(prefix + id) }
	fmt.Fprintf(b, "%s%s [shape=circle, label=\"start\"];\n", indent, q(START))
	fmt.Fprintf(b, "%s%s [shape=doublecircle, label=\"end\"];\n", indent, q(END))
	for _, id := range c.order {
		label := id
		if k := kinds[id]; k != "" && k != id {
			label = id + "\n(" + k + ")"
		}
		shape := "box"
		if c.nodes[id].join != nil {
			shape = "invtrapezium"
		}
		fmt.Fprintf(b, "%s%s [shape=%s, label=%s];\n", indent, q(id), shape, dotQuote(label))
	}
	for _, e := range c.Edges() {
		switch {
		case e.FanOut:
			fmt.Fprintf(b, "%s%s -> %s [style=bold, color=\"#1f5fbf\", label=\" fork \"];\n", indent, q(e.From), q(e.To))
		case e.Route == "":
			fmt.Fprintf(b, "%s%s -> %s;\n", indent, q(e.From), q(e.To))
		default:
			fmt.Fprintf(b, "%s%s -> %s [label=%s];\n", indent, q(e.From), q(e.To), dotQuote(" "+e.Route+" "))
		}
	}
	for _, n := range nested {
		if n.Graph == nil {
			continue
		}
		inner := prefix + n.Node + "/"
		fmt.Fprintf(b, "%ssubgraph %s {\n", indent, dotQuote("cluster_"+inner))
		fmt.Fprintf(b, "%s  label=%s;\n%s  style=dashed;\n", indent, dotQuote(n.Node+": "+n.Label), indent)
		n.Graph.dotBody(b, inner, indent+"  ", n.Kinds, n.Nested)
		fmt.Fprintf(b, "%s}\n", indent)
		fmt.Fprintf(b, "%s%s -> %s [style=dashed, label=\" runs \"];\n", indent, q(n.Node), dotQuote(inner+START))
	}
}

// dotEscaper and mermaidEscaper are immutable and safe for concurrent use.
var (
	dotEscaper     = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	mermaidEscaper = strings.NewReplacer(`"`, "#quot;", "<", "#lt;", ">", "#gt;")
)

func dotQuote(s string) string { return `"` + dotEscaper.Replace(s) + `"` }

// Mermaid renders the graph as a Mermaid flowchart with route labels, in a
// stable order. Node ids are mapped to safe identifiers (n0, n1, ...).
// Fan-out edges are thick and labelled "fork"; join nodes are trapezoids.
//
// Nodes that run a graph inside themselves (Nested) get it drawn in a
// Mermaid subgraph, joined to the node by a dotted edge.
func (c *Compiled[S]) Mermaid(kinds map[string]string, nested ...Nested) string {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	c.mermaidBody(&b, "", "  ", kinds, nested)
	return b.String()
}

// mermaidBody writes the nodes and edges of c, ids prefixed with prefix,
// then its nested graphs as Mermaid subgraphs.
func (c *Compiled[S]) mermaidBody(b *strings.Builder, prefix, indent string, kinds map[string]string, nested []Nested) {
	ids := map[string]string{START: prefix + "start", END: prefix + "finish"}
	for i, id := range c.order {
		ids[id] = fmt.Sprintf("%sn%d", prefix, i)
	}
	fmt.Fprintf(b, "%s%s((start))\n", indent, ids[START])
	for _, id := range c.order {
		label := mermaidEscape(id)
		if k := kinds[id]; k != "" && k != id {
			label += "<br/>(" + mermaidEscape(k) + ")"
		}
		if c.nodes[id].join != nil {
			fmt.Fprintf(b, "%s%s[/\"%s\"\\]\n", indent, ids[id], label)
		} else {
			fmt.Fprintf(b, "%s%s[\"%s\"]\n", indent, ids[id], label)
		}
	}
	fmt.Fprintf(b, "%s%s(((end)))\n", indent, ids[END])
	for _, e := range c.Edges() {
		switch {
		case e.FanOut:
			fmt.Fprintf(b, "%s%s ==>|fork| %s\n", indent, ids[e.From], ids[e.To])
		case e.Route == "":
			fmt.Fprintf(b, "%s%s --> %s\n", indent, ids[e.From], ids[e.To])
		default:
			fmt.Fprintf(b, "%s%s -->|\"%s\"| %s\n", indent, ids[e.From], mermaidEscape(e.Route), ids[e.To])
		}
	}
	for _, n := range nested {
		id, ok := ids[n.Node]
		if !ok || n.Graph == nil {
			continue
		}
		inner := id + "_"
		fmt.Fprintf(b, "%ssubgraph %sg[\"%s\"]\n", indent, inner, mermaidEscape(n.Node+": "+n.Label))
		n.Graph.mermaidBody(b, inner, indent+"  ", n.Kinds, n.Nested)
		fmt.Fprintf(b, "%send\n", indent)
		fmt.Fprintf(b, "%s%s -.->|runs| %sstart\n", indent, id, inner)
	}
}

func mermaidEscape(s string) string { return mermaidEscaper.Replace(s) }
