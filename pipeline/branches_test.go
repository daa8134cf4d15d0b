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
	"github.com/planner-engine/planner/graph"
	"github.com/planner-engine/planner/hooks"
	"github.com/planner-engine/planner/journal/memstore"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// fakeModels gives every node the same llms.Model.
type fakeModels struct{ m llms.Model }

func (f fakeModels) Model(context.Context, config.LLM, string) (llm.Model, error) {
	return llm.Model{LLM: f.m}, nil
}

// sayer answers a prompt "say X" with X, "fail" with an error, and
// "block" by waiting for the call's end; it counts its calls.
type sayer struct {
	calls atomic.Int32
	// delay, when set, is how long "say X" waits, by X.
	delay map[string]time.Duration
	// before, when set, runs before each call with the prompt.
	before func(ctx context.Context, prompt string)
}

func (s *sayer) GenerateContent(ctx context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	s.calls.Add(1)
	p := llmtest.LastText(msgs)
	if s.before != nil {
		s.before(ctx, p)
	}
	switch {
	case p == "fail":
		return nil, errors.New("provider down")
	case p == "block":
		<-ctx.Done()
		return nil, ctx.Err()
	case strings.HasPrefix(p, "say "):
		x := strings.TrimPrefix(p, "say ")
		if d := s.delay[x]; d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return llmtest.TextResponse(x), nil
	}
	return llmtest.TextResponse("?"), nil
}

func (s *sayer) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, s, prompt, opts...)
}

// fanYAML is a pipeline that fans out from START to one direct node per
// prompt (ids a, b, c, ...), each with extra settings, joined at j with
// the join settings given.
func fanYAML(join string, prompts []string, extra map[int]string) string {
	var b strings.Builder
	b.WriteString("name: fan\nllm: {provider: fake}\nlimits: {max_parallel: 4}\nnodes:\n")
	ids := make([]string, len(prompts))
	for i, p := range prompts {
		ids[i] = string(rune('a' + i))
		if i >= 9 {
			ids[i] = fmt.Sprintf("n%d", i)
		}
		fmt.Fprintf(&b, "  - id: %s\n    type: direct\n    prompt: %q\n", ids[i], p)
		if x := extra[i]; x != "" {
			b.WriteString("    " + x + "\n")
		}
	}
	fmt.Fprintf(&b, "  - {id: j, type: join%s}\nedges:\n  - {from: START, to: [%s]}\n", join, strings.Join(ids, ", "))
	for _, id := range ids {
		fmt.Fprintf(&b, "  - {from: %s, to: j}\n", id)
	}
	b.WriteString("  - {from: j, to: END}\n")
	return b.String()
}

func buildWith(t testing.TB, yaml string, m llms.Model) (*pipeline.Pipeline, string, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fan.yaml")
	require.NoError(t, os.WriteFile(path, []byte(yaml), 0o644))
	cfg, err := config.Load(path)
	if err != nil {
		return nil, path, err
	}
	p, err := pipeline.Build(context.Background(), cfg, pipeline.Options{Registry: planner.NodeKinds(), Models: fakeModels{m}})
	return p, path, err
}

func runFan(t *testing.T, yaml string, m llms.Model, opts ...pipeline.RunOption) (*pipeline.Result, *trace.Recorder, error) {
	t.Helper()
	p, _, err := buildWith(t, yaml, m)
	require.NoError(t, err)
	rec := &trace.Recorder{}
	res, err := p.Run(context.Background(), state.Task{Question: "q"}, trace.New("run", rec), opts...)
	return res, rec, err
}

func TestJoinMergeRules(t *testing.T) {
	three := []string{"say 4", "say 4.0", "say 5"}
	cases := []struct {
		name    string
		join    string
		prompts []string
		extra   map[int]string
		answer  string
		vars    map[string]string
	}{
		{"collect answers into a var, in branch order", ", merge: collect, into: 'var:all'", three, nil, "", map[string]string{"all": `["4","4.0","5"]`}},
		{"collect a var of each branch", ", merge: collect, from: 'var:x', into: 'var:xs'", three,
			map[int]string{0: "output: 'var:x'", 1: "output: 'var:x'", 2: "output: 'var:x'"}, "", map[string]string{"xs": `["4","4.0","5"]`}},
		{"vote by normalised value", ", merge: vote", three, nil, "4", nil},
		{"a tied vote goes to the earliest branch", ", merge: vote", []string{"say 7", "say 6", "say 6", "say 7"}, nil, "7", nil},
		{"concat with a separator", ", merge: concat, separator: ' | '", three, nil, "4 | 4.0 | 5", nil},
		{"concat into a var", ", merge: concat, into: 'var:joined'", three, nil, "", map[string]string{"joined": "4\n\n4.0\n\n5"}},
		{"first success", ", wait: first, merge: first", []string{"block", "say 9", "block"}, nil, "9", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, rec, err := runFan(t, fanYAML(tc.join, tc.prompts, tc.extra), &sayer{})
			require.NoError(t, err)
			st := res.State
			if tc.answer != "" {
				assert.Equal(t, tc.answer, st.Answer)
				assert.True(t, st.Complete)
			}
			assert.Equal(t, tc.vars, nilIfEmpty(st.Vars.All()), "only the join's into var reaches the run's state")
			var branches []any
			for _, e := range rec.OfKind(trace.KindNodeStart) {
				if e.Node == "b" {
					branches = append(branches, e.Data["branch"])
				}
			}
			assert.Equal(t, []any{"0.2"}, branches, "trace events name the branch")
		})
	}
}

func nilIfEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

func TestJoinWaitModesInAPipeline(t *testing.T) {
	t.Run("all: a failed branch fails the run", func(t *testing.T) {
		res, _, err := runFan(t, fanYAML(", merge: vote", []string{"say 1", "fail", "block"}, nil), &sayer{})
		require.ErrorIs(t, err, pipeline.ErrRun)
		require.ErrorIs(t, err, graph.ErrBranchFailed)
		assert.Contains(t, err.Error(), `node "b"`)
		assert.Equal(t, state.FailureProvider, res.State.Failure)
		assert.Empty(t, res.State.Answer)
	})
	for _, wait := range []string{"first", "any"} {
		t.Run(wait+": one success is enough, the others are cancelled", func(t *testing.T) {
			res, _, err := runFan(t, fanYAML(", wait: "+wait+", merge: collect, into: 'var:got'", []string{"fail", "block", "say 3"}, nil), &sayer{})
			require.NoError(t, err)
			got, _ := res.State.Vars.Get("got")
			assert.Equal(t, `["3"]`, got)
		})
	}
	t.Run("a quorum of k", func(t *testing.T) {
		m := &sayer{delay: map[string]time.Duration{"2": 20 * time.Millisecond}}
		res, _, err := runFan(t, fanYAML(", wait: 2, merge: collect, into: 'var:got'", []string{"say 1", "fail", "say 2", "block"}, nil), m)
		require.NoError(t, err)
		got, _ := res.State.Vars.Get("got")
		assert.Equal(t, `["1","2"]`, got)
	})
}

// TestBranchValidationErrorsNameTheLine checks each validation rule of
// fan-outs and joins reports the file and line to change.
func TestBranchValidationErrorsNameTheLine(t *testing.T) {
	cases := []struct {
		name string
		yaml string
		line int
		want error
		text string
	}{
		{"branches not converging", `name: x
llm: {provider: fake}
nodes:
  - {id: a, type: direct}
  - {id: b, type: direct}
  - {id: j, type: join, merge: vote}
edges:
  - {from: START, to: [a, b]}
  - {from: a, to: j}
  - {from: b, to: END}
  - {from: j, to: END}
`, 8, graph.ErrBranchNoJoin, `fan-out from START: branch reaches no join: the branch from "b" reaches END before a join node`},
		{"branches reaching two joins", `name: x
llm: {provider: fake}
nodes:
  - {id: a, type: direct}
  - {id: b, type: direct}
  - {id: j, type: join, merge: vote}
  - {id: k, type: join, merge: vote}
edges:
  - {from: START, to: [a, b]}
  - {from: a, to: j}
  - {from: b, to: k}
  - {from: j, to: END}
  - {from: k, to: END}
`, 9, graph.ErrBranchesDiverge, `the branch from "b" reaches the join "k", the ones before it "j"`},
		{"join without branches", `name: x
llm: {provider: fake}
nodes:
  - {id: a, type: direct}
  - id: j
    type: join
    merge: vote
edges:
  - {from: START, to: a}
  - {from: a, to: j}
  - {from: j, to: END}
`, 5, graph.ErrJoinNoBranches, `no fan-out's branches reach the join "j"`},
		{"a branch writes a var its join does not take", `name: x
llm: {provider: fake}
nodes:
  - {id: a, type: direct}
  - id: b
    type: direct
    output: var:scratch
  - {id: j, type: join, merge: vote}
edges:
  - {from: START, to: [a, b]}
  - {from: a, to: j}
  - {from: b, to: j}
  - {from: j, to: END}
`, 7, pipeline.ErrBranchWrite, `node "b" writes var:scratch on the branch from "b", but the join "j" takes its answer from each branch`},
		{"a quorum larger than the branches", `name: x
llm: {provider: fake}
nodes:
  - {id: a, type: direct}
  - {id: b, type: direct}
  - id: j
    type: join
    wait: 3
    merge: vote
edges:
  - {from: START, to: [a, b]}
  - {from: a, to: j}
  - {from: b, to: j}
  - {from: j, to: END}
`, 8, pipeline.ErrQuorum, `join "j" waits for 3 branches, but the fan-out from START has 2`},
		{"collect without a var", `name: x
llm: {provider: fake}
nodes:
  - {id: a, type: direct}
  - {id: b, type: direct}
  - id: j
    type: join
    merge: collect
edges:
  - {from: START, to: [a, b]}
  - {from: a, to: j}
  - {from: b, to: j}
  - {from: j, to: END}
`, 6, config.ErrSettings, "name the var it goes into"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, path, err := buildWith(t, tc.yaml, &sayer{})
			require.Error(t, err)
			assert.ErrorIs(t, err, config.ErrInvalid)
			assert.ErrorIs(t, err, tc.want)
			var ce *config.Error
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.line, ce.Line, "error: %v", err)
			assert.Contains(t, err.Error(), fmt.Sprintf("%s:%d: ", path, tc.line))
			assert.Contains(t, err.Error(), tc.text)
		})
	}
}

func TestABranchesWritesAreInvisibleToItsSiblings(t *testing.T) {
	aDone := make(chan struct{})
	m := &sayer{before: func(ctx context.Context, prompt string) {
		if prompt == "say wait" {
			select {
			case <-aDone:
			case <-ctx.Done():
			}
		}
	}}
	// Branch b's second node renders the vars after branch a wrote x.
	yaml := `name: iso
llm: {provider: fake}
nodes:
  - {id: a, type: direct, prompt: "say 1", output: "var:x"}
  - {id: b1, type: direct, prompt: "say wait", output: "var:x"}
  - {id: b2, type: direct, prompt: "say [{{.Vars.x}}]", output: "var:x"}
  - {id: j, type: join, merge: collect, from: "var:x", into: "var:xs"}
edges:
  - {from: START, to: [a, b1]}
  - {from: a, to: j}
  - {from: b1, to: b2}
  - {from: b2, to: j}
  - {from: j, to: END}
`
	signal := hooks.Funcs{AfterNode: func(_ context.Context, n hooks.Node, _ string, _ error) {
		if n.ID == "a" {
			close(aDone)
		}
	}}
	res, _, err := runFan(t, yaml, m, pipeline.WithHooks(signal))
	require.NoError(t, err)
	xs, _ := res.State.Vars.Get("xs")
	assert.Equal(t, `["1","[wait]"]`, xs, "b2 sees its own branch's x (wait), never a's (1)")
	_, ok := res.State.Vars.Get("x")
	assert.False(t, ok, "x never leaves the branches")
}

func TestBranchesShareTheRunsUsageAndBudget(t *testing.T) {
	res, _, err := runFan(t, fanYAML(", merge: vote", []string{"say 1", "say 1", "say 2"}, nil), &sayer{})
	require.NoError(t, err)
	u := res.State.Usage.Snapshot()
	assert.Equal(t, 3, u.ModelCalls, "every branch's call is counted in the run's usage")
	assert.Equal(t, []string{"a", "b", "c"}, u.Nodes())

	// One branch node at a time, so which call the budget refuses is
	// known: the third.
	yaml := strings.Replace(fanYAML(", merge: vote", []string{"say 1", "say 1", "say 2"}, nil), "limits: {max_parallel: 4}", "limits: {max_parallel: 1, max_model_calls: 2}", 1)
	m := &sayer{}
	res, _, err = runFan(t, yaml, m)
	require.ErrorIs(t, err, llm.ErrBudgetExceeded)
	assert.Equal(t, int32(2), m.calls.Load(), "the budget is the run's, shared by its branches")
	assert.Equal(t, 2, res.State.Usage.Snapshot().ModelCalls)
	assert.Equal(t, state.FailureBudget, res.State.Failure)
}

func TestAJournaledFanOutResumesWithoutALiveCall(t *testing.T) {
	store := memstore.New()
	yaml := fanYAML(", merge: collect, into: 'var:all'", []string{"say 1", "say 2", "say 3"}, nil)
	// Live, the first branch finishes last.
	live := &sayer{delay: map[string]time.Duration{"1": 30 * time.Millisecond, "2": 10 * time.Millisecond}}
	p, _, err := buildWith(t, yaml, live)
	require.NoError(t, err)
	th := pipeline.Thread{Store: store, Name: "fan"}
	res, tr, err := p.RunThread(context.Background(), state.Task{Question: "q"}, nil, th)
	require.NoError(t, err)
	want, _ := res.State.Vars.Get("all")
	require.Equal(t, `["1","2","3"]`, want)
	assert.Equal(t, 4, tr.Live, "three model calls and the join's node transition")

	// Resumed, every call is replayed to its own branch, whatever order
	// the branches finish in now; a live call would fail.
	dead := llmtest.Func(func(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
		return nil, errors.New("a live call in a replay")
	})
	p, _, err = buildWith(t, yaml, dead)
	require.NoError(t, err)
	res, tr, err = p.RunThread(context.Background(), state.Task{Question: "q"}, nil, th)
	require.NoError(t, err)
	got, _ := res.State.Vars.Get("all")
	assert.Equal(t, want, got)
	assert.Zero(t, tr.Live, "no live call")
	assert.Zero(t, tr.Unused)
	assert.Positive(t, tr.Replayed)
}

func TestAFanOutThatFailedInABranchResumesRepeatingNoFinishedCall(t *testing.T) {
	store := memstore.New()
	yaml := fanYAML(", merge: collect, into: 'var:all'", []string{"say 1", "say 2", "say 3"}, nil)
	// The first run: branch c's call fails once a and b finished, as a
	// run killed inside branch c would have left them.
	var finished atomic.Int32
	bothDone := make(chan struct{})
	done := hooks.Funcs{AfterNode: func(_ context.Context, n hooks.Node, _ string, err error) {
		if (n.ID == "a" || n.ID == "b") && err == nil && finished.Add(1) == 2 {
			close(bothDone)
		}
	}}
	crashing := llmtest.Func(func(ctx context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
		if p := llmtest.LastText(msgs); p != "say 3" {
			return llmtest.TextResponse(strings.TrimPrefix(p, "say ")), nil
		}
		<-bothDone
		return nil, errors.New("killed")
	})
	p, _, err := buildWith(t, yaml, crashing)
	require.NoError(t, err)
	th := pipeline.Thread{Store: store, Name: "crash"}
	_, _, err = p.RunThread(context.Background(), state.Task{Question: "q"}, nil, th, pipeline.WithHooks(done))
	require.ErrorIs(t, err, graph.ErrBranchFailed)

	healthy := &sayer{}
	p, _, err = buildWith(t, yaml, healthy)
	require.NoError(t, err)
	res, tr, err := p.RunThread(context.Background(), state.Task{Question: "q"}, nil, th)
	require.NoError(t, err)
	got, _ := res.State.Vars.Get("all")
	assert.Equal(t, `["1","2","3"]`, got)
	assert.Equal(t, int32(1), healthy.calls.Load(), "only branch c's call is made again")
	assert.Equal(t, 2, tr.Replayed, "a's and b's calls are replayed")
}

func TestAFanOutFromANodeDrawsAndDefaultsItsParallelism(t *testing.T) {
	yaml := `name: mid
llm: {provider: fake}
nodes:
  - {id: pre, type: direct, prompt: "say 0", output: "note:pre"}
  - {id: a, type: direct, prompt: "say 1"}
  - {id: b, type: direct, prompt: "say 2"}
  - {id: j, type: join, merge: concat, separator: "+"}
edges:
  - {from: START, to: pre}
  - {from: pre, to: [a, b]}
  - {from: a, to: j}
  - {from: b, to: j}
  - {from: j, to: END}
`
	p, _, err := buildWith(t, yaml, &sayer{})
	require.NoError(t, err)
	assert.Equal(t, config.DefaultMaxParallel, p.Config.Limits.MaxParallel)
	assert.Equal(t, 8, config.DefaultMaxParallel)
	mm := p.Graph().Mermaid(p.Kinds())
	assert.Contains(t, mm, "n0 ==>|fork| n1")
	assert.Contains(t, mm, "n0 ==>|fork| n2")
	assert.Contains(t, mm, `n3[/"j<br/>(join)"\]`)
	assert.Contains(t, p.Graph().DOT("mid", p.Kinds()), `"pre" -> "b" [style=bold`)
	res, err := p.Run(context.Background(), state.Task{Question: "q"}, nil)
	require.NoError(t, err)
	assert.Equal(t, "1+2", res.State.Answer)
	assert.Equal(t, []string{"pre", "a", "b", "j"}, res.Steps)
}
