package graph_test

import (
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"github.com/planner-engine/planner/graph"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSVGDrawsEveryNodeAndEdge(t *testing.T) {
	g := planExecute(t)
	svg := g.SVG("plan <&> execute", map[string]string{"plan": "planner"})
	assert.Equal(t, svg, graph.RenderSVG("plan <&> execute", g.Nodes(), g.Edges(), map[string]string{"plan": "planner"}, nil), "the method draws what RenderSVG draws")
	assert.Equal(t, svg, g.SVG("plan <&> execute", map[string]string{"plan": "planner"}), "stable output")

	// Well-formed XML: the title is escaped, not broken.
	dec := xml.NewDecoder(strings.NewReader(svg))
	for {
		_, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, svg)
	}
	assert.Contains(t, svg, "<title>plan &lt;&amp;&gt; execute</title>")
	for _, id := range append([]string{graph.START, graph.END}, g.Nodes()...) {
		assert.Contains(t, svg, `data-node="`+id+`"`, id)
	}
	assert.Contains(t, svg, ">plan (planner)</text>", "the kind labels its node")
	for _, e := range g.Edges() {
		assert.Contains(t, svg, `data-from="`+e.From+`" data-to="`+e.To+`"`, e)
		if e.Route != "" {
			assert.Contains(t, svg, ">"+e.Route+"</text>", e)
		}
	}
	assert.Contains(t, svg, `class="edge back" data-from="replan" data-to="execute"`, "the loop back is curved")
}
