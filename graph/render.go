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
func (c *Compiled[S]) DOT(name string, kinds map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n", dotQuote(name))
	b.WriteString("  rankdir=TB;\n")
	b.WriteString("  nodesep=0.6;\n")
	b.WriteString("  ranksep=0.5;\n")
	b.WriteString("  edge [fontsize=11];\n")
	fmt.Fprintf(&b, "  %s [shape=circle, label=\"start\"];\n", dotQuote(START))
	fmt.Fprintf(&b, "  %s [shape=doublecircle, label=\"end\"];\n", dotQuote(END))
	for _, id := range c.order {
		label := id
		if k := kinds[id]; k != "" && k != id {
			label = id + "\n(" + k + ")"
		}
		shape := "box"
		if c.nodes[id].join != nil {
			shape = "invtrapezium"
		}
		fmt.Fprintf(&b, "  %s [shape=%s, label=%s];\n", dotQuote(id), shape, dotQuote(label))
	}
	for _, e := range c.Edges() {
		switch {
		case e.FanOut:
			fmt.Fprintf(&b, "  %s -> %s [style=bold, color=\"#1f5fbf\", label=\" fork \"];\n", dotQuote(e.From), dotQuote(e.To))
		case e.Route == "":
			fmt.Fprintf(&b, "  %s -> %s;\n", dotQuote(e.From), dotQuote(e.To))
		default:
			fmt.Fprintf(&b, "  %s -> %s [label=%s];\n", dotQuote(e.From), dotQuote(e.To), dotQuote(" "+e.Route+" "))
		}
	}
	b.WriteString("}\n")
	return b.String()
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
func (c *Compiled[S]) Mermaid(kinds map[string]string) string {
	ids := map[string]string{START: "start", END: "finish"}
	for i, id := range c.order {
		ids[id] = fmt.Sprintf("n%d", i)
	}
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	b.WriteString("  start((start))\n")
	for _, id := range c.order {
		label := mermaidEscape(id)
		if k := kinds[id]; k != "" && k != id {
			label += "<br/>(" + mermaidEscape(k) + ")"
		}
		if c.nodes[id].join != nil {
			fmt.Fprintf(&b, "  %s[/\"%s\"\\]\n", ids[id], label)
		} else {
			fmt.Fprintf(&b, "  %s[\"%s\"]\n", ids[id], label)
		}
	}
	b.WriteString("  finish(((end)))\n")
	for _, e := range c.Edges() {
		switch {
		case e.FanOut:
			fmt.Fprintf(&b, "  %s ==>|fork| %s\n", ids[e.From], ids[e.To])
		case e.Route == "":
			fmt.Fprintf(&b, "  %s --> %s\n", ids[e.From], ids[e.To])
		default:
			fmt.Fprintf(&b, "  %s -->|\"%s\"| %s\n", ids[e.From], mermaidEscape(e.Route), ids[e.To])
		}
	}
	return b.String()
}

func mermaidEscape(s string) string { return mermaidEscaper.Replace(s) }
