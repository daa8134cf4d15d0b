package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/journal/memstore"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/nodes/compose"
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// mapYAML sets three items, answers each in a nested inline graph of two
// nodes, and answers with the list of answers.
const mapYAML = `name: mapper
llm: {provider: fake}
nodes:
  - id: items
    type: set
    assign: {qs: 'toJSON(["a", "b", "c"])'}
  - id: each
    type: map
    over: var:qs
    max_parallel: 2
    question: "{{.Extra.Item}}{{.Extra.Index}}"
    graph:
      nodes:
        - {id: first, type: direct, prompt: "say {{.Question}}", output: "var:x"}
        - {id: second, type: direct, prompt: "say {{.Vars.x}}!"}
      edges:
        - {from: START, to: first}
        - {from: first, to: second}
        - {from: second, to: END}
    into: var:answers
  - {id: combine, type: direct, prompt: "say {{.Vars.answers}}"}
edges:
  - {from: START, to: items}
  - {from: items, to: each}
  - {from: each, to: combine}
  - {from: combine, to: END}
`

func TestMapRunsAPipelinePerItemInItemOrder(t *testing.T) {
	m := &sayer{}
	p, _, err := buildWith(t, mapYAML, m)
	require.NoError(t, err)
	rec := &trace.Recorder{}
	res, err := p.Run(context.Background(), state.Task{Question: "q"}, trace.New("run", rec))
	require.NoError(t, err)
	assert.Equal(t, `["a1!","b2!","c3!"]`, res.State.Answer)
	assert.True(t, res.State.Complete)
	assert.Equal(t, int32(7), m.calls.Load(), "two calls per item and the combine")
	assert.Equal(t, 7, res.State.Usage.ModelCalls, "nested calls count on the run")
	assert.Equal(t, []string{"items", "each", "combine"}, res.Steps, "the items run inside one step")
	var nested []string
	for _, e := range rec.OfKind(trace.KindNodeStart) {
		if strings.Contains(e.Node, "/") {
			nested = append(nested, e.Node)
		}
	}
	assert.ElementsMatch(t, []string{"item 1/first", "item 1/second", "item 2/first", "item 2/second", "item 3/first", "item 3/second"}, nested)
	_, ok := res.State.Vars.Get("x")
	assert.False(t, ok, "an item's vars stay in the item")
}

func TestMapItemFailurePolicies(t *testing.T) {
	yaml := strings.Replace(mapYAML, `'toJSON(["a", "b", "c"])'`, `'toJSON(["a", "fail", "c"])'`, 1)
	yaml = strings.Replace(yaml, `question: "{{.Extra.Item}}{{.Extra.Index}}"`, `question: "{{.Extra.Item}}"`, 1)
	yaml = strings.Replace(yaml, `prompt: "say {{.Question}}"`, `prompt: '{{if eq .Question "fail"}}fail{{else}}say {{.Question}}{{end}}'`, 1)
	p, _, err := buildWith(t, yaml, &sayer{})
	require.NoError(t, err)
	_, err = p.Run(context.Background(), state.Task{Question: "q"}, nil)
	require.ErrorIs(t, err, compose.ErrItemFailed)
	assert.ErrorContains(t, err, "item 2 of 3")

	keep := strings.Replace(yaml, "into: var:answers", "into: var:answers\n    on_item_failure: keep", 1)
	p, _, err = buildWith(t, keep, &sayer{})
	require.NoError(t, err)
	res, err := p.Run(context.Background(), state.Task{Question: "q"}, nil)
	require.NoError(t, err)
	assert.Equal(t, `["a!","","c!"]`, res.State.Answer)
	assert.Equal(t, []string{state.FailureError}, res.State.Incidents)

	// A spent budget is the run's end, not an item's failure: keep does
	// not keep it.
	spent := strings.Replace(keep, "llm: {provider: fake}", "llm: {provider: fake}\nlimits: {max_model_calls: 1}", 1)
	p, _, err = buildWith(t, spent, &sayer{})
	require.NoError(t, err)
	_, err = p.Run(context.Background(), state.Task{Question: "q"}, nil)
	require.ErrorIs(t, err, llm.ErrBudgetExceeded)
}

// writeFiles writes files into a new folder and returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	return dir
}

func buildFile(t *testing.T, path string, m llms.Model) (*pipeline.Pipeline, error) {
	t.Helper()
	cfg, err := config.Load(path)
	require.NoError(t, err)
	return pipeline.Build(context.Background(), cfg, pipeline.Options{Registry: planner.NodeKinds(), Models: fakeModels{m}})
}

const childYAML = `name: child
llm: {provider: fake}
nodes:
  - {id: note, type: set, assign: {seen: 'question + " seen"', secret: '"kept inside"'}}
  - {id: answer, type: direct, prompt: "say {{.Question}} from {{.Vars.topic}}"}
edges:
  - {from: START, to: note}
  - {from: note, to: answer}
  - {from: answer, to: END}
`

func TestSubgraphFromAFileMapsItsInputAndOutput(t *testing.T) {
	dir := writeFiles(t, map[string]string{"child.yaml": childYAML, "parent.yaml": `name: parent
llm: {provider: fake}
nodes:
  - id: ask
    type: subgraph
    pipeline: child.yaml
    question: "about {{.Question}}"
    vars: {topic: "the parent"}
    output: var:reply
    export: [seen]
  - {id: final, type: direct, prompt: "say {{.Vars.reply}} / {{.Vars.seen}}"}
edges:
  - {from: START, to: ask}
  - {from: ask, to: final}
  - {from: final, to: END}
`})
	p, err := buildFile(t, filepath.Join(dir, "parent.yaml"), &sayer{})
	require.NoError(t, err)
	res, err := p.Run(context.Background(), state.Task{Question: "q"}, nil)
	require.NoError(t, err)
	assert.Equal(t, "about q from the parent / about q seen", res.State.Answer)
	_, ok := res.State.Vars.Get("secret")
	assert.False(t, ok, "only exported vars leave the subgraph")
}

func TestNestedValidationErrorsNameTheLine(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  []string
		is    error
	}{
		{"cycle", map[string]string{
			"parent.yaml": "name: a\nnodes:\n  - id: s\n    type: subgraph\n    pipeline: b.yaml\nedges:\n  - {from: START, to: s}\n  - {from: s, to: END}\n",
			"b.yaml":      "name: b\nnodes:\n  - id: back\n    type: subgraph\n    pipeline: parent.yaml\nedges:\n  - {from: START, to: back}\n  - {from: back, to: END}\n",
		}, []string{"parent.yaml:5:", `b.yaml:5: node "back" (subgraph): setting "pipeline"`, "subgraph cycle: parent.yaml -> b.yaml -> parent.yaml"}, pipeline.ErrSubgraphCycle},
		{"inline unknown kind", map[string]string{
			"parent.yaml": "name: a\nnodes:\n  - id: s\n    type: subgraph\n    graph:\n      nodes:\n        - {id: x, type: nosuch}\n      edges:\n        - {from: START, to: x}\n        - {from: x, to: END}\nedges:\n  - {from: START, to: s}\n  - {from: s, to: END}\n",
		}, []string{"parent.yaml:7:", `node "x"`, "nosuch"}, config.ErrInvalid},
		{"inline edge to nowhere", map[string]string{
			"parent.yaml": "name: a\nnodes:\n  - id: s\n    type: subgraph\n    graph:\n      nodes:\n        - {id: x, type: direct}\n      edges:\n        - {from: START, to: x}\n        - {from: x, to: y}\nedges:\n  - {from: START, to: s}\n  - {from: s, to: END}\n",
		}, []string{"parent.yaml:10:", `goes to unknown node "y"`}, config.ErrInvalid},
		{"inline tools", map[string]string{
			"parent.yaml": "name: a\nnodes:\n  - id: s\n    type: subgraph\n    graph:\n      tools: [calculator]\n      nodes: [{id: x, type: direct}]\n      edges: [{from: START, to: x}, {from: x, to: END}]\nedges:\n  - {from: START, to: s}\n  - {from: s, to: END}\n",
		}, []string{"parent.yaml:6:", "an inline graph uses its pipeline's tools"}, pipeline.ErrSubgraph},
		{"missing file", map[string]string{
			"parent.yaml": "name: a\nnodes:\n  - id: s\n    type: map\n    over: var:x\n    pipeline: gone.yaml\nedges:\n  - {from: START, to: s}\n  - {from: s, to: END}\n",
		}, []string{"parent.yaml:3:", "gone.yaml"}, pipeline.ErrSubgraph},
		{"inline reads a var its parent does not pass", map[string]string{
			"parent.yaml": "name: a\nnodes:\n  - id: s\n    type: map\n    over: var:x\n    vars: {topic: \"t\"}\n    graph:\n      nodes:\n        - id: x\n          type: direct\n          prompt: \"{{.Vars.topic}} {{.Vars.item}} {{.Vars.index}} {{.Vars.other}}\"\n      edges: [{from: START, to: x}, {from: x, to: END}]\nedges:\n  - {from: START, to: s}\n  - {from: s, to: END}\n",
		}, []string{"parent.yaml:11:", `reads var "other"`, "vars written: index, item, topic"}, pipeline.ErrUnknownVar},
		{"map without over", map[string]string{
			"parent.yaml": "name: a\nnodes:\n  - id: s\n    type: map\n    graph: {nodes: [{id: x, type: direct}], edges: [{from: START, to: x}, {from: x, to: END}]}\nedges:\n  - {from: START, to: s}\n  - {from: s, to: END}\n",
		}, []string{"parent.yaml:3:", `setting "over"`}, config.ErrSettings},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeFiles(t, tc.files)
			_, err := buildFile(t, filepath.Join(dir, "parent.yaml"), &sayer{})
			require.Error(t, err)
			for _, w := range tc.want {
				assert.ErrorContains(t, err, w)
			}
			assert.ErrorIs(t, err, tc.is)
		})
	}
}

// A run that failed (as a killed one would have stopped) inside a map
// item and inside a subgraph resumes making only the calls it had not
// finished.
func TestNestedRunsResumeRepeatingNoFinishedCall(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, crashOn, want string
		// calls finished before the crash; replayed adds the node
		// transitions journaled before it.
		calls, replayed int
	}{
		{"map item", mapYAML, "say c3", `["a1!","b2!","c3!"]`, 4, 5},
		{"subgraph", `name: sub
llm: {provider: fake}
nodes:
  - id: s
    type: subgraph
    graph:
      nodes:
        - {id: one, type: direct, prompt: "say 1", output: "var:one"}
        - {id: two, type: direct, prompt: "say {{.Vars.one}}2"}
      edges: [{from: START, to: one}, {from: one, to: two}, {from: two, to: END}]
edges:
  - {from: START, to: s}
  - {from: s, to: END}
`, "say 12", "12", 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := memstore.New()
			var others atomic.Int32
			crashing := llmtest.Func(func(ctx context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
				p := llmtest.LastText(msgs)
				if p == tc.crashOn {
					return nil, errors.New("killed")
				}
				others.Add(1)
				return llmtest.TextResponse(strings.TrimPrefix(p, "say ")), nil
			})
			// One item at a time, so that the items before the crash finish.
			yaml := strings.Replace(tc.yaml, "max_parallel: 2", "max_parallel: 1", 1)
			p, _, err := buildWith(t, yaml, crashing)
			require.NoError(t, err)
			th := pipeline.Thread{Store: store, Name: "crash"}
			_, _, err = p.RunThread(context.Background(), state.Task{Question: "q"}, nil, th)
			require.ErrorContains(t, err, "killed")
			require.Equal(t, int32(tc.calls), others.Load())

			healthy := &sayer{}
			p, _, err = buildWith(t, yaml, healthy)
			require.NoError(t, err)
			res, tr, err := p.RunThread(context.Background(), state.Task{Question: "q"}, nil, th)
			require.NoError(t, err)
			assert.Equal(t, tc.want, res.State.Answer)
			assert.Equal(t, tc.replayed, tr.Replayed, "the finished calls are replayed")
			assert.Equal(t, int32(res.State.Usage.ModelCalls-tc.calls), healthy.calls.Load(), "only the unfinished calls are made")
		})
	}
}

// merge: first journals its winner: a resumed run, whose branches all
// replay at once, takes the branch the first run took.
func TestMergeFirstTakesTheJournaledWinnerOnResume(t *testing.T) {
	yaml := fanYAML(", wait: all, merge: first", []string{"say 1", "say 2", "say 3"}, nil)
	// Live, the third branch finishes first.
	live := &sayer{delay: map[string]time.Duration{"1": 40 * time.Millisecond, "2": 40 * time.Millisecond}}
	p, _, err := buildWith(t, yaml, live)
	require.NoError(t, err)
	for i := range 5 {
		store := memstore.New()
		th := pipeline.Thread{Store: store, Name: fmt.Sprintf("first%d", i)}
		res, _, err := p.RunThread(context.Background(), state.Task{Question: "q"}, nil, th)
		require.NoError(t, err)
		require.Equal(t, "3", res.State.Answer)
		// Resumed with the opposite delays: were it live, the first branch
		// would win; replayed, the journal says the third did.
		slow := &sayer{delay: map[string]time.Duration{"2": 40 * time.Millisecond, "3": 40 * time.Millisecond}}
		q, _, err := buildWith(t, yaml, slow)
		require.NoError(t, err)
		res, tr, err := q.RunThread(context.Background(), state.Task{Question: "q"}, nil, th)
		require.NoError(t, err)
		assert.Equal(t, "3", res.State.Answer)
		assert.Zero(t, tr.Live)
	}
}

func TestNestedTraceNamesCarryTheirPath(t *testing.T) {
	yaml := `name: deep
llm: {provider: fake}
nodes:
  - {id: items, type: set, assign: {qs: 'toJSON(["a", "b"])'}}
  - id: each
    type: map
    over: var:qs
    graph:
      nodes:
        - id: inner
          type: subgraph
          graph:
            nodes: [{id: say, type: direct, prompt: "say {{.Question}}"}]
            edges: [{from: START, to: say}, {from: say, to: END}]
      edges: [{from: START, to: inner}, {from: inner, to: END}]
edges:
  - {from: START, to: items}
  - {from: items, to: each}
  - {from: each, to: END}
`
	p, _, err := buildWith(t, yaml, &sayer{})
	require.NoError(t, err)
	rec := &trace.Recorder{}
	_, err = p.Run(context.Background(), state.Task{Question: "q"}, trace.New("run", rec))
	require.NoError(t, err)
	var nested []string
	for _, e := range rec.OfKind(trace.KindNodeStart) {
		if strings.Contains(e.Node, "/") {
			nested = append(nested, e.Node)
		}
	}
	assert.ElementsMatch(t, []string{"item 1/inner", "item 2/inner", "item 1/inner/sub/say", "item 2/inner/sub/say"}, nested)
}
