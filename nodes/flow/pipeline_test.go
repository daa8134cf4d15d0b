package flow_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/graph"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/nodes/flow"
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// A set node declares the vars it writes to the pipeline's branch check.
var _ pipeline.VarWriter = (*flow.Set)(nil)

// fixedModels hands the same model to every llm block of a pipeline.
type fixedModels struct{ m llms.Model }

func (f fixedModels) Model(context.Context, config.LLM, string) (llm.Model, error) {
	return llm.Model{LLM: f.m}, nil
}

// load builds the pipeline YAML text with the default node kinds and
// model m.
func load(t *testing.T, yaml string, m llms.Model) (*pipeline.Pipeline, string, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.yaml")
	require.NoError(t, os.WriteFile(path, []byte(yaml), 0o644))
	cfg, err := config.Load(path)
	require.NoError(t, err)
	p, err := pipeline.Build(context.Background(), cfg, pipeline.Options{Registry: planner.NodeKinds(), Models: fixedModels{m}, LLM: config.LLM{Provider: "fixed"}})
	return p, path, err
}

// routed classifies the task, marks its kind in a var, and routes on
// the var to one of two answering nodes.
const routed = `name: routed
nodes:
  - id: classify
    type: router
    classify:
      labels: [math, lookup]
    default: other
  - id: mark_math
    type: set
    assign:
      - {var: kind, expr: '"math"'}
      - {var: Calls, expr: usage.model_calls}
  - id: mark_other
    type: set
    assign: {kind: '"other"'}
  - id: pick
    type: router
    routes:
      - {route: calc, when: 'vars.kind == "math" && int(vars.Calls) == 1'}
    default: chat
  - id: calc
    type: direct
    prompt: "calc: {{.Question}}"
  - id: chat
    type: direct
    prompt: "chat: {{.Question}}"
edges:
  - {from: START, to: classify}
  - from: classify
    to: {math: mark_math, lookup: mark_other, other: mark_other}
  - {from: mark_math, to: pick}
  - {from: mark_other, to: pick}
  - from: pick
    to: {calc: calc, chat: chat}
  - {from: calc, to: END}
  - {from: chat, to: END}
`

// routedModel classifies questions with a digit as math, and answers
// with the prompt's first word.
func routedModel() llms.Model {
	return llmtest.Func(func(_ context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
		user := llmtest.LastText(msgs)
		if strings.HasPrefix(user, "Classify") {
			if strings.ContainsAny(user, "0123456789") {
				return llmtest.TextResponse(`{"label": "math"}`), nil
			}
			return llmtest.TextResponse("Label: Lookup"), nil
		}
		word, _, _ := strings.Cut(user, ":")
		return llmtest.TextResponse(word), nil
	})
}

func TestRoutedPipelineLoadsAndRunsThroughTheRealLoader(t *testing.T) {
	p, _, err := load(t, routed, routedModel())
	require.NoError(t, err)
	for q, want := range map[string]struct {
		answer string
		steps  []string
		vars   map[string]string
	}{
		"What is 17 * 23?": {"calc", []string{"classify", "mark_math", "pick", "calc"}, map[string]string{"kind": "math", "Calls": "1"}},
		"Who wrote Emma?":  {"chat", []string{"classify", "mark_other", "pick", "chat"}, map[string]string{"kind": "other"}},
	} {
		t.Run(q, func(t *testing.T) {
			rec := &trace.Recorder{}
			res, err := p.Run(context.Background(), state.Task{Question: q}, trace.New("r", rec))
			require.NoError(t, err)
			assert.Equal(t, want.answer, res.State.Answer)
			assert.Equal(t, want.vars, res.State.Vars.All())
			var steps []string
			for _, e := range rec.OfKind(trace.KindNodeStart) {
				steps = append(steps, e.Node)
			}
			assert.Equal(t, want.steps, steps)
			assert.Equal(t, 1, res.State.Usage.Snapshot().PerNode["classify"].ModelCalls)
		})
	}
}

func TestPipelineReportsBadExpressionsAtTheirLine(t *testing.T) {
	cases := []struct {
		name, from, to string
		line           int
		contains       []string
	}{
		{"router condition", `when: 'vars.kind == "math" && int(vars.Calls) == 1'`, `when: 'vars.kind == "math" && usage.calls == 1'`, 19,
			[]string{`node "pick" (router)`, `setting "routes[0].when"`, `bad expression "vars.kind == \"math\" && usage.calls == 1"`, "type flow.ExprUsage has no field calls"}},
		{"router condition not a boolean", `when: 'vars.kind == "math" && int(vars.Calls) == 1'`, `when: 'vars.kind'`, 19,
			[]string{`node "pick" (router)`, "expected bool, but got string"}},
		{"set list expression", "expr: usage.model_calls", "expr: usage.model_calls +", 12,
			[]string{`node "mark_math" (set)`, `setting "assign[1].expr"`, "unexpected token EOF"}},
		{"set mapping expression", `assign: {kind: '"other"'}`, "assign: {kind: 'answr'}", 15,
			[]string{`node "mark_other" (set)`, `setting "assign.kind"`, "unknown name answr"}},
		{"capital route", "- {route: calc, when:", "- {route: Calc, when:", 19,
			[]string{`node "pick" (router)`, `route "Calc": route names are lower case`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			yaml := strings.Replace(routed, tc.from, tc.to, 1)
			require.NotEqual(t, routed, yaml)
			_, path, err := load(t, yaml, routedModel())
			require.ErrorIs(t, err, config.ErrInvalid)
			var ce *config.Error
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.line, ce.Line, "error: %v", err)
			assert.Contains(t, err.Error(), path+":")
			for _, s := range tc.contains {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
}

func TestPipelineChecksEveryRouterRouteIsMapped(t *testing.T) {
	yaml := strings.Replace(routed, "to: {math: mark_math, lookup: mark_other, other: mark_other}", "to: {math: mark_math, lookup: mark_other}", 1)
	_, _, err := load(t, yaml, routedModel())
	require.ErrorIs(t, err, graph.ErrUnmappedRoute)
	assert.Contains(t, err.Error(), `"other"`)

	yaml = strings.Replace(routed, "to: {calc: calc, chat: chat}", "to: {calc: calc, chat: chat, sums: calc}", 1)
	_, _, err = load(t, yaml, routedModel())
	require.ErrorIs(t, err, graph.ErrUndeclaredRoute)
}

// The kinds are registered with their template declarations.
func TestKindsAreRegistered(t *testing.T) {
	reg := planner.NodeKinds()
	k, err := reg.Lookup("router")
	require.NoError(t, err)
	assert.Equal(t, flow.RouterTemplates(), k.Templates)
	require.Len(t, k.Templates, 1)
	assert.Equal(t, "classify.prompt", k.Templates[0].Key)
	_, err = reg.Lookup("set")
	require.NoError(t, err)
}
