package graph

import (
	"fmt"
	"html"
	"strings"
	"unicode/utf8"
)

// SVG layout sizes, in pixels.
const (
	svgCharW  = 7.2
	svgBoxH   = 40.0
	svgLayerH = 90.0
	svgGapX   = 40.0
	svgMargin = 30.0
)

// SVG draws the graph as a self-contained SVG image titled name; kinds and
// nested add to the node labels as for DOT. It is RenderSVG of the graph's
// nodes and edges.
func (c *Compiled[S]) SVG(name string, kinds map[string]string, nested ...Nested) string {
	return RenderSVG(name, c.Nodes(), c.Edges(), kinds, nested)
}

// RenderSVG draws a graph as a self-contained SVG without Graphviz: nodes in
// layers by their distance from START, top to bottom, END last; forward
// edges straight, edges back up (cycles) curved on the right; route labels
// at the middle of their edge; fan-out edges bold blue, labelled fork; a
// node that runs a pipeline inside itself (nested) names it. kinds, when
// non-nil, adds each node's kind to its label. Each node is a <g
// class="node" data-node="ID" id="node-ID">, so a page can highlight the
// running node. The output is stable for the same input, and every id and
// label is escaped. The server's graph endpoint and 'planner graph --format
// svg' both draw with it.
func RenderSVG(name string, nodes []string, edges []Edge, kinds map[string]string, nested []Nested) string {
	runs := map[string]string{}
	for _, n := range nested {
		runs[n.Node] = n.Label
	}
	depth := map[string]int{START: 0}
	queue := []string{START}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, e := range edges {
			if e.From != n || e.To == END {
				continue
			}
			if _, seen := depth[e.To]; !seen {
				depth[e.To] = depth[n] + 1
				queue = append(queue, e.To)
			}
		}
	}
	maxDepth := 0
	for _, id := range nodes {
		if _, ok := depth[id]; !ok { // unreachable: validation forbids it, but draw it anyway
			depth[id] = 1
		}
		maxDepth = max(maxDepth, depth[id])
	}
	depth[END] = maxDepth + 1
	layers := make([][]string, maxDepth+2)
	for _, id := range append(append([]string{START}, nodes...), END) {
		layers[depth[id]] = append(layers[depth[id]], id)
	}
	label := func(id string) string {
		if r := runs[id]; r != "" {
			return id + " (" + r + ")"
		}
		if k := kinds[id]; k != "" && k != id {
			return id + " (" + k + ")"
		}
		return id
	}
	width := func(id string) float64 { return float64(utf8.RuneCountInString(label(id)))*svgCharW + 24 }
	layerW := make([]float64, len(layers))
	total := 0.0
	for i, l := range layers {
		for j, id := range l {
			if j > 0 {
				layerW[i] += svgGapX
			}
			layerW[i] += width(id)
		}
		total = max(total, layerW[i])
	}
	type box struct{ x, y, w float64 }
	pos := map[string]box{}
	for i, l := range layers {
		x := svgMargin + (total-layerW[i])/2
		for _, id := range l {
			pos[id] = box{x, svgMargin + 20 + float64(i)*svgLayerH, width(id)}
			x += width(id) + svgGapX
		}
	}
	w := total + 2*svgMargin + 80
	h := svgMargin*2 + 20 + float64(len(layers)-1)*svgLayerH + svgBoxH
	var b strings.Builder
	esc := html.EscapeString
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12" role="img" aria-label="%s">`+"\n",
		w, h, w, h, esc(name))
	b.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>` + "\n")
	fmt.Fprintf(&b, `<title>%s</title>`+"\n", esc(name))
	for _, e := range edges {
		from, to := pos[e.From], pos[e.To]
		x1, y1 := from.x+from.w/2, from.y+svgBoxH
		x2, y2 := to.x+to.w/2, to.y
		var lx, ly float64
		if depth[e.To] > depth[e.From] {
			class, stroke := "edge", `stroke="#555"`
			if e.FanOut {
				// A fork: one of the branches that run in parallel.
				class, stroke = "edge fork", `stroke="#1f5fbf" stroke-width="2.5"`
			}
			fmt.Fprintf(&b, `<path class="%s" data-from="%s" data-to="%s" d="M%.1f,%.1f L%.1f,%.1f" %s fill="none" marker-end="url(#arrow)"/>`+"\n",
				class, esc(e.From), esc(e.To), x1, y1, x2, y2, stroke)
			lx, ly = (x1+x2)/2, (y1+y2)/2
		} else { // back up (a cycle) or sideways: around the right side
			sx, sy := from.x+from.w, from.y+svgBoxH/2
			ex, ey := to.x+to.w, to.y+svgBoxH/2
			cx := max(sx, ex) + 60
			fmt.Fprintf(&b, `<path class="edge back" data-from="%s" data-to="%s" d="M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f" stroke="#555" fill="none" stroke-dasharray="4 3" marker-end="url(#arrow)"/>`+"\n",
				esc(e.From), esc(e.To), sx, sy, cx, sy, cx, ey, ex, ey)
			lx, ly = cx-10, (sy+ey)/2
		}
		if e.FanOut {
			fmt.Fprintf(&b, `<text class="route" x="%.1f" y="%.1f" fill="#1f5fbf" text-anchor="middle">fork</text>`+"\n", lx, ly)
		} else if e.Route != "" {
			fmt.Fprintf(&b, `<text class="route" x="%.1f" y="%.1f" fill="#a33" text-anchor="middle">%s</text>`+"\n", lx, ly, esc(e.Route))
		}
	}
	for _, l := range layers {
		for _, id := range l {
			p := pos[id]
			fill, rx := "#eef3fb", 6.0
			if id == START || id == END {
				fill, rx = "#ddd", svgBoxH/2
			}
			fmt.Fprintf(&b, `<g class="node" id="node-%s" data-node="%s"><rect x="%.1f" y="%.1f" width="%.1f" height="%.0f" rx="%.0f" fill="%s" stroke="#335"/><text x="%.1f" y="%.1f" text-anchor="middle" dominant-baseline="middle">%s</text></g>`+"\n",
				esc(id), esc(id), p.x, p.y, p.w, svgBoxH, rx, fill, p.x+p.w/2, p.y+svgBoxH/2, esc(label(id)))
		}
	}
	b.WriteString("</svg>\n")
	return b.String()
}
