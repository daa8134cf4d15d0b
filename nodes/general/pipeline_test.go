package general_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/memstore"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/nodes/general"
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// extractPipeline extracts a city as JSON into vars, looks it up with a
// tool, and answers from the tool's output; a reply that never matches
// the schema, or a failed lookup, goes to a fallback answer.
const extractPipeline = `name: general
tools: [lookup]
nodes:
  - id: extract
    type: llm
    prompt: "Which city does this ask about? {{.Question}}"
    output: vars:city
    max_retries: 1
    on_failure: route
    schema: |
      {"type": "object",
       "properties": {"cityName": {"type": "string", "minLength": 2}, "country": {"type": "string"}},
       "required": ["cityName"],
       "additionalProperties": false}
  - id: facts
    type: tool
    tool: lookup
    input: '{{index .Vars "city.cityName"}}'
    on_failure: route
  - id: answer
    type: llm
    prompt: "Facts: {{.Vars.facts}}. Answer: {{.Question}}"
  - id: fallback
    type: llm
    prompt: "Answer as best you can: {{.Question}}"
edges:
  - {from: START, to: extract}
  - {from: extract, to: {"": facts, failed: fallback}}
  - {from: facts, to: {"": answer, failed: fallback}}
  - {from: answer, to: END}
  - {from: fallback, to: END}
`

func runPipeline(t *testing.T, yaml string, replies []string, ts testTools) (*state.State, *llmtest.Recorder, *trace.Recorder) {
	t.Helper()
	rec := recorder(llmtest.Replies(replies...))
	p, err := build(t, writeYAML(t, yaml), rec, ts)
	require.NoError(t, err)
	tr := &trace.Recorder{}
	res, err := p.Run(context.Background(), state.Task{ID: "t1", Question: "How many people live in Paris?"}, trace.New("run", tr))
	require.NoError(t, err)
	return res.State, rec, tr
}

func TestPipelineExtractLookupAnswer(t *testing.T) {
	st, rec, _ := runPipeline(t, extractPipeline, []string{
		`{"cityName": "P"}`, // too short: fed back
		"```json\n{\"cityName\": \"Paris\", \"country\": \"France\"}\n```",
		"About 2.1 million.",
	}, testTools{"lookup": echoTool("lookup")})
	assert.Equal(t, "About 2.1 million.", st.Answer)
	assert.True(t, st.Complete)
	assert.Equal(t, map[string]string{"city.cityName": "Paris", "city.country": "France", "facts": "got Paris"}, st.Vars.All(),
		"the text schema keeps the capitals of its property names")
	reqs := rec.Requests()
	require.Len(t, reqs, 3)
	assert.Contains(t, llmtest.LastText(reqs[1].Messages), "at /cityName: minLength: got 1, want 2")
	assert.True(t, reqs[1].Options.JSONMode)
	assert.Contains(t, reqs[2].Text(), "Facts: got Paris. Answer: How many people live in Paris?")
	assert.Empty(t, st.Incidents)
}

func TestPipelineFailedRoutes(t *testing.T) {
	t.Run("schema", func(t *testing.T) {
		st, rec, _ := runPipeline(t, extractPipeline, []string{`{"cityName": "Paris", "mayor": "x"}`, `{"city": "Paris"}`, "I think 2 million."},
			testTools{"lookup": echoTool("lookup")})
		assert.Equal(t, "I think 2 million.", st.Answer)
		assert.Equal(t, []string{state.FailureParse}, st.Incidents)
		assert.Contains(t, rec.Requests()[2].Text(), "Answer as best you can")
		assert.Contains(t, llmtest.LastText(rec.Requests()[1].Messages), "additional properties 'mayor' not allowed")
	})
	t.Run("tool", func(t *testing.T) {
		st, rec, _ := runPipeline(t, extractPipeline, []string{`{"cityName": "Paris"}`, "I think 2 million."},
			testTools{"lookup": failingTool("lookup")})
		assert.Equal(t, "I think 2 million.", st.Answer)
		assert.Equal(t, []string{state.FailureTool}, st.Incidents)
		assert.Equal(t, 2, rec.Calls())
	})
}

// The loader lower-cases the keys of mappings; the schema's camel-case
// keywords still apply.
func TestPipelineMappingSchemaKeepsItsKeywords(t *testing.T) {
	yaml := `name: mapping
nodes:
  - id: pick
    type: llm
    max_retries: 0
    schema:
      type: object
      $defs:
        short: {type: string, maxLength: 3}
      properties:
        label: {$ref: "#/$defs/short"}
      additionalProperties: false
edges:
  - {from: START, to: pick}
  - {from: pick, to: END}
`
	rec := recorder(llmtest.Reply(`{"label": "long label", "extra": 1}`))
	p, err := build(t, writeYAML(t, yaml), rec, nil)
	require.NoError(t, err)
	_, err = p.Run(context.Background(), state.Task{Question: "q"}, trace.New("run", &trace.Recorder{}))
	require.Error(t, err)
	assert.ErrorContains(t, err, "additional properties 'extra' not allowed")
	assert.ErrorContains(t, err, "at /label: maxLength: got 10, want 3")
}

func TestPipelineErrorsNameTheNodeAndLine(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"bad schema", `name: bad
nodes:
  - id: extract
    type: llm
    schema:
      type: strng
edges:
  - {from: START, to: extract}
  - {from: extract, to: END}
`, `p.yaml:5: node "extract" (llm): setting "schema"`},
		{"unknown tool", `name: bad
tools: [lookup]
nodes:
  - id: facts
    type: tool
    tool: serch
edges:
  - {from: START, to: facts}
  - {from: facts, to: END}
`, `p.yaml:6: node "facts" (tool): setting "tool": invalid settings: the pipeline has no tool "serch" (its tools: lookup)`},
		{"failed route not mapped", `name: bad
tools: [lookup]
nodes:
  - {id: facts, type: tool, on_failure: route}
edges:
  - {from: START, to: facts}
  - {from: facts, to: END}
`, `route "failed" is not mapped`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := build(t, writeYAML(t, tc.yaml), llmtest.Reply(""), testTools{"lookup": echoTool("lookup")})
			require.ErrorIs(t, err, config.ErrInvalid)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// Retries are model calls like any other: the run's budget counts them.
func TestPipelineBudgetCountsRetries(t *testing.T) {
	yaml := `name: budget
limits: {max_model_calls: 1}
nodes:
  - id: pick
    type: llm
    on_failure: route
    schema: {type: object, required: [label]}
  - {id: fallback, type: llm}
edges:
  - {from: START, to: pick}
  - {from: pick, to: {"": END, failed: fallback}}
  - {from: fallback, to: END}
`
	rec := recorder(llmtest.Replies(`{}`, `{"label": "a"}`))
	p, err := build(t, writeYAML(t, yaml), rec, nil)
	require.NoError(t, err)
	_, err = p.Run(context.Background(), state.Task{Question: "q"}, trace.New("run", &trace.Recorder{}))
	require.ErrorIs(t, err, llm.ErrBudgetExceeded, "a budget error ends the run; it is no schema failure")
	assert.NotErrorIs(t, err, general.ErrSchema)
	assert.Equal(t, 1, rec.Calls())
}

// A tool that needs approval asks the run's approver: a denial is a failed
// call (the failed route), an approval lets it run.
func TestPipelineToolApprovals(t *testing.T) {
	yaml := `name: approvals
tools: [{name: lookup, approve: true}]
nodes:
  - {id: facts, type: tool, on_failure: route, output: answer}
  - {id: fallback, type: llm}
edges:
  - {from: START, to: facts}
  - {from: facts, to: {"": END, failed: fallback}}
  - {from: fallback, to: END}
`
	for _, approved := range []bool{true, false} {
		rec := recorder(llmtest.Reply("no facts"))
		p, err := build(t, writeYAML(t, yaml), rec, testTools{"lookup": echoTool("lookup")})
		require.NoError(t, err)
		var asked []journal.Approval
		approver := journal.ApproverFunc(func(_ context.Context, a journal.Approval) (journal.Decision, error) {
			asked = append(asked, a)
			return journal.Decision{Approved: approved, By: "test", Reason: "policy"}, nil
		})
		res, err := p.Run(context.Background(), state.Task{Question: "Paris"}, trace.New("run", &trace.Recorder{}), pipeline.WithApprover(approver))
		require.NoError(t, err)
		require.Len(t, asked, 1)
		assert.Equal(t, journal.Approval{Node: "facts", Tool: "lookup", Input: "Paris"}, asked[0])
		if approved {
			assert.Equal(t, "got Paris", res.State.Answer)
			assert.Equal(t, 0, rec.Calls())
		} else {
			assert.Equal(t, "no facts", res.State.Answer)
			assert.Equal(t, []string{state.FailureTool}, res.State.Incidents)
		}
	}
}

// A journaled run replays: the second run of the same thread makes no
// model call (retries included) and no tool call, and ends the same way.
func TestPipelineReplaysFromTheJournal(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	require.NoError(t, store.Create(ctx, journal.Thread{Name: "t", Status: journal.StatusRunning}))
	path := writeYAML(t, extractPipeline)
	var toolRuns atomic.Int32
	lookup := funcTool{name: "lookup", fn: func(_ context.Context, in string) (string, error) { toolRuns.Add(1); return "got " + in, nil }}
	runOnce := func(m *llmtest.Recorder) *state.State {
		p, err := build(t, path, m, testTools{"lookup": lookup})
		require.NoError(t, err)
		j, err := journal.Open(ctx, store, "t")
		require.NoError(t, err)
		res, err := p.Run(ctx, state.Task{ID: "t1", Question: "How many people live in Paris?"}, trace.New("run", &trace.Recorder{}), pipeline.WithJournal(j))
		require.NoError(t, err)
		return res.State
	}
	first := recorder(llmtest.Replies(`{"cityName": "P"}`, `{"cityName": "Paris"}`, "About 2.1 million."))
	st := runOnce(first)
	assert.Equal(t, "About 2.1 million.", st.Answer)
	assert.Equal(t, 3, first.Calls())
	assert.Equal(t, int32(1), toolRuns.Load())

	again := recorder(llmtest.Fail(assert.AnError))
	st = runOnce(again)
	assert.Equal(t, "About 2.1 million.", st.Answer)
	assert.Equal(t, map[string]string{"city.cityName": "Paris", "facts": "got Paris"}, st.Vars.All())
	assert.Equal(t, 0, again.Calls(), "every model call is replayed")
	assert.Equal(t, int32(1), toolRuns.Load(), "the tool call is replayed, not run")
}
