package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/planner-engine/planner/graph"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// planExecute is the shape of configs/plan_execute.yaml: a loop whose
// "continue" label sits beside the "failed" bypass, where unpadded labels
// ran together when dot drew them.
func planExecute(t *testing.T) *graph.Compiled[*counter] {
	t.Helper()
	g, err := graph.New[*counter]().
		AddNode("plan", step("plan", ""), "failed").
		AddNode("execute", step("execute", "")).
		AddNode("replan", step("replan", "finish"), "continue", "finish").
		AddNode("finalize", step("finalize", "")).
		AddEdge(graph.START, "plan").
		AddEdge("plan", "execute").AddRoute("plan", "failed", "finalize").
		AddEdge("execute", "replan").
		AddRoute("replan", "continue", "execute").AddRoute("replan", "finish", "finalize").
		AddEdge("finalize", graph.END).Compile()
	require.NoError(t, err)
	return g
}

func TestDOTSpacesRouteLabelsApart(t *testing.T) {
	dot := planExecute(t).DOT("plan_execute", nil)
	for _, attr := range []string{"nodesep=", "ranksep=", "edge [fontsize="} {
		assert.Contains(t, dot, attr)
	}
	// Every labelled edge has a label= attribute padded with a space each
	// side; a plain edge has no label at all.
	labelled := regexp.MustCompile(`(?m)^  "[^"]+" -> "[^"]+" \[label=" ([a-z]+) "\];$`)
	var routes []string
	for _, m := range labelled.FindAllStringSubmatch(dot, -1) {
		routes = append(routes, m[1])
	}
	assert.ElementsMatch(t, []string{"failed", "continue", "finish"}, routes, dot)
	assert.Contains(t, dot, "  \"plan\" -> \"execute\";\n")
}

// TestDOTLabelsRenderApart lays the graph out with Graphviz, when it is
// installed, and checks that no two route labels touch: each label's text
// box is at least half a font size away from every other label's on the
// same line.
func TestDOTLabelsRenderApart(t *testing.T) {
	if _, err := exec.LookPath("dot"); err != nil {
		t.Skip("Graphviz dot is not installed")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "dot", "-Tjson")
	cmd.Stdin = strings.NewReader(planExecute(t).DOT("plan_execute", nil))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	var layout struct {
		Edges []struct {
			Draw []struct {
				Op    string    `json:"op"`
				Pt    []float64 `json:"pt"`
				Width float64   `json:"width"`
				Size  float64   `json:"size"`
				Text  string    `json:"text"`
			} `json:"_ldraw_"`
		} `json:"edges"`
	}
	require.NoError(t, json.Unmarshal(out, &layout))
	type box struct {
		text           string
		left, right, y float64
		fontSize       float64
	}
	var boxes []box
	for _, e := range layout.Edges {
		size := 14.0
		for _, op := range e.Draw {
			switch op.Op {
			case "F":
				size = op.Size
			case "T":
				boxes = append(boxes, box{text: op.Text, left: op.Pt[0] - op.Width/2, right: op.Pt[0] + op.Width/2, y: op.Pt[1], fontSize: size})
			}
		}
	}
	require.Len(t, boxes, 3, "route labels drawn: %+v", boxes)
	sort.Slice(boxes, func(i, j int) bool { return boxes[i].left < boxes[j].left })
	for i, a := range boxes {
		for _, b := range boxes[i+1:] {
			if abs(a.y-b.y) > a.fontSize {
				continue // on different lines
			}
			assert.GreaterOrEqual(t, b.left-a.right, a.fontSize/2, "labels %q and %q run together", a.text, b.text)
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
