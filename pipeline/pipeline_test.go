package pipeline_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/graph"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/builtin"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func write(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

func build(t *testing.T, path string) (*pipeline.Pipeline, error) {
	t.Helper()
	cfg, err := config.Load(path)
	if err != nil {
		return nil, err
	}
	return pipeline.Build(context.Background(), cfg, pipeline.Options{Registry: planner.NodeKinds(), Models: llm.NewFactory(llm.WithProvider("scripted", scripted.Label, scripted.Build))})
}

const header = "name: t\nnodes:\n"

func TestInvalidPipelinesFailWithFileLineAndMessage(t *testing.T) {
	cases := []struct {
		name     string
		yaml     string
		line     int
		contains []string
	}{
		{"typo in top-level key", "name: t\nnodez: []\n", 2, []string{`unknown key "nodez"`, "known keys"}},
		{"typo in llm key", "name: t\nllm:\n  provider: scripted\n  modle: x\nnodes:\n  - {id: a, type: direct}\nedges:\n  - {from: START, to: a}\n  - {from: a, to: END}\n", 4, []string{`unknown key "modle"`}},
		{"typo in node setting", header + "  - id: a\n    type: cot\n    temprature: 0.2\nedges:\n  - {from: START, to: a}\n  - {from: a, to: END}\n", 5, []string{`"temprature"`, "unknown setting", "temperature"}},
		{"unknown node type", header + "  - id: a\n    type: reakt\nedges:\n  - {from: START, to: a}\n  - {from: a, to: END}\n", 4, []string{`unknown node type "reakt"`, "known types"}},
		{"unmapped route", header + "  - id: a\n    type: direct\n  - id: b\n    type: test-router\nedges:\n  - {from: START, to: a}\n  - {from: a, to: b}\n  - from: b\n    to: {finish: END}\n", 10, []string{`route "continue" is not mapped`}},
		{"unreachable node", header + "  - id: a\n    type: direct\n  - id: orphan\n    type: direct\nedges:\n  - {from: START, to: a}\n  - {from: a, to: END}\n  - {from: orphan, to: END}\n", 5, []string{`"orphan"`, "unreachable from START"}},
		{"dangling edge", header + "  - id: a\n    type: direct\nedges:\n  - {from: START, to: a}\n  - {from: a, to: finalise}\n", 7, []string{`unknown node "finalise"`, "declared nodes: a"}},
		{"bad yaml", "name: t\nnodes: [\n", 2, []string{"YAML syntax"}},
		{"missing env var", "name: t\nllm:\n  base_url: ${PLANNER_TEST_UNSET_VAR}\nnodes:\n  - {id: a, type: direct}\n", 3, []string{"PLANNER_TEST_UNSET_VAR is not set"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := write(t, "p.yaml", tc.yaml)
			cfg, err := config.Load(path)
			if err == nil {
				reg := planner.NodeKinds()
				require.NoError(t, reg.Register(nodekind.Kind{Name: "test-router", New: func(nodekind.Env, nodekind.Spec) (nodekind.Built, error) {
					return nodekind.Built{Node: nil, Routes: []string{"continue", "finish"}}, nil
				}}))
				_, err = pipeline.Build(context.Background(), cfg, pipeline.Options{Registry: reg})
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, config.ErrInvalid)
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

func TestShippedConfigsValidate(t *testing.T) {
	files, err := filepath.Glob("../configs/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		cfg, err := config.Load(f)
		require.NoError(t, err, f)
		_, err = pipeline.Build(context.Background(), cfg, pipeline.Options{Registry: planner.NodeKinds(), Tools: builtin.Factory{}})
		assert.NoError(t, err, f)
	}
}

func TestCoTRunsOnScriptedModelAndExtractsAnswer(t *testing.T) {
	script := write(t, "s.yaml", "replies:\n  - node: cot\n    contains: 'think step by step'\n    text: \"3 * 4 = 12, plus 5 is 17.\\nAnswer: 17\"\n")
	cfgPath := write(t, "cot.yaml", "name: cot\nllm: {provider: scripted, script: "+script+"}\nnodes:\n  - {id: reason, type: cot}\nedges:\n  - {from: START, to: reason}\n  - {from: reason, to: END}\n")
	p, err := build(t, cfgPath)
	require.NoError(t, err)
	rec := &trace.Recorder{}
	res, err := p.Run(context.Background(), state.Task{Question: "What is 3*4+5?"}, trace.New("r1", rec))
	require.NoError(t, err)
	assert.Equal(t, "17", res.State.Answer)
	assert.True(t, res.State.Complete)
	u := res.State.Usage.Snapshot()
	assert.Equal(t, 1, u.ModelCalls)
	assert.Positive(t, u.PromptTokens)
	require.Len(t, rec.OfKind(trace.KindLLMCall), 1)
	assert.Equal(t, "17", rec.OfKind(trace.KindAnswer)[0].Text)
	events := rec.Events()
	for i := 1; i < len(events); i++ {
		assert.Equal(t, events[i-1].Seq+1, events[i].Seq)
		assert.Equal(t, "r1", events[i].RunID)
	}
}

func TestScriptedModelMismatchIsAProviderFailure(t *testing.T) {
	script := write(t, "s.yaml", "replies:\n  - node: planner\n    text: nope\n")
	cfgPath := write(t, "d.yaml", "name: d\nllm: {provider: scripted, script: "+script+"}\nnodes:\n  - {id: answer, type: direct}\nedges:\n  - {from: START, to: answer}\n  - {from: answer, to: END}\n")
	p, err := build(t, cfgPath)
	require.NoError(t, err)
	res, err := p.Run(context.Background(), state.Task{Question: "hi"}, nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, pipeline.ErrRun)
	assert.ErrorIs(t, err, llm.ErrModel)
	assert.Contains(t, err.Error(), "unexpected call")
	assert.Equal(t, state.FailureProvider, res.State.Failure)
	var ne *graph.NodeError
	require.True(t, errors.As(err, &ne))
	assert.Equal(t, "answer", ne.Node)
}

func TestRunTimeoutIsClassified(t *testing.T) {
	reg := planner.NodeKinds()
	require.NoError(t, reg.Register(nodekind.Kind{Name: "block", New: func(nodekind.Env, nodekind.Spec) (nodekind.Built, error) {
		return nodekind.Built{Node: blockNode{}}, nil
	}}))
	cfgPath := write(t, "b.yaml", "name: b\nlimits: {timeout: 20ms}\nnodes:\n  - {id: wait, type: block}\nedges:\n  - {from: START, to: wait}\n  - {from: wait, to: END}\n")
	cfg, err := config.Load(cfgPath)
	require.NoError(t, err)
	p, err := pipeline.Build(context.Background(), cfg, pipeline.Options{Registry: reg})
	require.NoError(t, err)
	res, err := p.Run(context.Background(), state.Task{Question: "q"}, nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, state.FailureTimeout, res.State.Failure)
}

type blockNode struct{}

func (blockNode) Run(ctx context.Context, _ *state.State) (string, error) {
	<-ctx.Done()
	return "", ctx.Err()
}

func TestOverrideLLMKeepsProviderIndependentSettings(t *testing.T) {
	temp := 0.1
	block := config.LLM{Provider: "openai", Model: "gpt-4o", BaseURL: "http://127.0.0.1:9/v1", APIKeyEnv: "MY_KEY",
		Temperature: &temp, MaxTokens: 300, Retry: config.Retry{MaxAttempts: 5}, RateLimit: config.RateLimit{MaxConcurrent: 2}}
	same := pipeline.OverrideLLM(block, config.LLM{Provider: "openai", Model: "gpt-4o-mini"})
	assert.Equal(t, "gpt-4o-mini", same.Model)
	assert.Equal(t, block.BaseURL, same.BaseURL)
	assert.Equal(t, "MY_KEY", same.APIKeyEnv)
	assert.Equal(t, 5, same.Retry.MaxAttempts)
	assert.Equal(t, 2, same.RateLimit.MaxConcurrent)
	assert.Equal(t, 300, same.MaxTokens)
	one := 1
	kept := pipeline.OverrideLLM(config.LLM{Provider: "openai", EmptyRetries: &one}, config.LLM{Provider: "sim"})
	assert.Equal(t, &one, kept.EmptyRetries, "--llm keeps the block's empty_retries")

	other := pipeline.OverrideLLM(block, config.LLM{Provider: "sim", Profile: "noisy"})
	assert.Empty(t, other.BaseURL, "another provider must not inherit the endpoint")
	assert.Empty(t, other.APIKeyEnv)
	assert.Equal(t, &temp, other.Temperature)
	assert.Equal(t, "noisy", other.Profile)

	assert.Equal(t, block, pipeline.OverrideLLM(block, config.LLM{}))
}

// recordingModels records the llm block each model is built from.
type recordingModels struct{ seen []config.LLM }

func (r *recordingModels) Model(_ context.Context, cfg config.LLM, _ string) (llm.Model, error) {
	r.seen = append(r.seen, cfg)
	return llm.Model{}, nil
}

func TestNodeLLMBlocksApplyOnTopOfThePipelineModel(t *testing.T) {
	cfgPath := write(t, "n.yaml", `name: n
llm: {provider: sim, profile: noisy, seed: 3, max_reply_bytes: 4096, prompt_cache: false, empty_retries: 0, empty_nudge: Go on., retry: {max_attempts: 5, base_delay: 2s}, rate_limit: {requests_per_second: 4}}
nodes:
  - id: tweak
    type: direct
    llm: {temperature: 0, seed: 9, rate_limit: {max_concurrent: 1}, retry: {max_delay: 9s}}
  - id: swap
    type: direct
    llm: {provider: scripted, script: s.yaml}
edges:
  - {from: START, to: tweak}
  - {from: tweak, to: swap}
  - {from: swap, to: END}
`)
	cfg, err := config.Load(cfgPath)
	require.NoError(t, err)
	models := &recordingModels{}
	_, err = pipeline.Build(context.Background(), cfg, pipeline.Options{Registry: planner.NodeKinds(), Models: models})
	require.NoError(t, err)
	require.Len(t, models.seen, 3, "the pipeline's model, then one per node block")

	tweak := models.seen[1]
	assert.Equal(t, "sim", tweak.Provider, "a block without a provider keeps the pipeline's")
	assert.Equal(t, "noisy", tweak.Profile)
	assert.Equal(t, uint64(9), tweak.Seed)
	require.NotNil(t, tweak.Temperature)
	assert.Equal(t, 0.0, *tweak.Temperature)
	assert.Equal(t, 5, tweak.Retry.MaxAttempts)
	assert.Equal(t, 1, tweak.RateLimit.MaxConcurrent, "every setting the block sets applies")
	assert.Equal(t, 9*time.Second, tweak.Retry.MaxDelay)
	assert.Equal(t, 2*time.Second, tweak.Retry.BaseDelay, "retry settings are inherited one by one")
	assert.Equal(t, 4.0, tweak.RateLimit.RequestsPerSecond, "rate-limit settings are inherited one by one")
	assert.Equal(t, 4096, tweak.MaxReplyBytes, "the reply limit carries over")
	require.NotNil(t, tweak.PromptCache, "prompt_cache: false carries over")
	assert.False(t, *tweak.PromptCache)
	require.NotNil(t, tweak.EmptyRetries, "empty_retries: 0 carries over")
	assert.Zero(t, *tweak.EmptyRetries)
	assert.Equal(t, "Go on.", tweak.EmptyNudge)

	swap := models.seen[2]
	assert.Equal(t, "scripted", swap.Provider)
	assert.Equal(t, "s.yaml", swap.Script)
	assert.Empty(t, swap.Profile, "another provider does not inherit the model choice")
	assert.Equal(t, 5, swap.Retry.MaxAttempts, "provider-independent settings carry over")
	require.NotNil(t, swap.EmptyRetries, "so do the empty-reply settings")
	assert.Equal(t, "Go on.", swap.EmptyNudge)
}

// closingTool counts its Close calls and asks for approval by default.
type closingTool struct {
	name   string
	closed *atomic.Int32
}

func (c closingTool) Name() string                                 { return c.name }
func (c closingTool) Description() string                          { return "a tool with a process behind it" }
func (c closingTool) Call(context.Context, string) (string, error) { return "ok", nil }
func (c closingTool) Meta() tools.Meta                             { return tools.Meta{NeedsApproval: true} }
func (c closingTool) Close() error                                 { c.closed.Add(1); return nil }

// closingFactory builds closingTools; an entry named "broken" fails after
// starting its tool, as an MCP server whose tool list is refused does.
type closingFactory struct{ closed *atomic.Int32 }

func (f closingFactory) Tools(_ context.Context, spec config.Tool, _ string) ([]tools.Tool, error) {
	t := closingTool{name: spec.Name, closed: f.closed}
	if spec.Name == "broken" {
		return []tools.Tool{t}, errors.New("started, then failed")
	}
	return []tools.Tool{t}, nil
}

func TestCloseStopsWhatToolsStartedAndApproveOverridesTheirDefault(t *testing.T) {
	var closed atomic.Int32
	opts := pipeline.Options{Registry: planner.NodeKinds(), Tools: closingFactory{&closed}}
	cfg, err := config.Load(write(t, "p.yaml", "name: t\ntools: [{name: keep}, {name: lifted, approve: false}, {name: forced, approve: true}]\nnodes:\n  - {id: a, type: react}\nedges:\n  - {from: START, to: a}\n  - {from: a, to: END}\n"))
	require.NoError(t, err)
	p, err := pipeline.Build(context.Background(), cfg, opts)
	require.NoError(t, err)
	needs := map[string]bool{}
	for _, in := range p.Tools().Infos() {
		needs[in.Name] = in.Meta.NeedsApproval
	}
	assert.Equal(t, map[string]bool{"keep": true, "lifted": false, "forced": true}, needs)
	assert.Zero(t, closed.Load())
	require.NoError(t, p.Close())
	require.NoError(t, p.Close())
	assert.Equal(t, int32(3), closed.Load(), "each tool closed once, however often the pipeline is closed")

	closed.Store(0)
	cfg, err = config.Load(write(t, "p.yaml", "name: t\ntools: [{name: keep}, {name: broken}]\nnodes:\n  - {id: a, type: react}\nedges:\n  - {from: START, to: a}\n  - {from: a, to: END}\n"))
	require.NoError(t, err)
	_, err = pipeline.Build(context.Background(), cfg, opts)
	require.ErrorContains(t, err, "started, then failed")
	assert.Equal(t, int32(2), closed.Load(), "a failed build stops what it started, the failing entry's tools too")
}

// A run that reaches limits.max_model_calls stops its ReAct loop with
// failure "budget", and the loop's finalizer (one call past the budget)
// still answers from the work so far.
func TestRunBudgetEndsAReActRunWithAFinalizedAnswer(t *testing.T) {
	script := write(t, "s.yaml", `replies:
  - {role: "", text: "Thought: add.\nAction: calculator\nAction Input: 2+2", times: 2}
  - {role: finalize, contains: "budget", text: "Final Answer: 4"}
`)
	cfgPath := write(t, "react.yaml", "name: r\nllm: {provider: scripted, script: "+script+"}\ntools: [calculator]\nlimits: {max_model_calls: 2}\n"+
		"nodes:\n  - {id: act, type: react}\nedges:\n  - {from: START, to: act}\n  - {from: act, to: END}\n")
	cfg, err := config.Load(cfgPath)
	require.NoError(t, err)
	p, err := pipeline.Build(context.Background(), cfg, pipeline.Options{Registry: planner.NodeKinds(), Tools: builtin.Factory{},
		Models: llm.NewFactory(llm.WithProvider("scripted", scripted.Label, scripted.Build))})
	require.NoError(t, err)
	rec := &trace.Recorder{}
	res, err := p.Run(context.Background(), state.Task{Question: "What is 2+2?"}, trace.New("r", rec))
	require.NoError(t, err)
	assert.False(t, res.State.Complete)
	assert.Equal(t, state.FailureBudget, res.State.Failure)
	assert.Equal(t, "4", res.State.Answer)
	assert.Equal(t, 3, res.State.Usage.Snapshot().ModelCalls, "two calls within the budget, then the finalizer")
	var budget []string
	for _, e := range rec.OfKind(trace.KindGuard) {
		if e.Data["guard"] == "budget" {
			budget = append(budget, e.Text)
		}
	}
	require.Len(t, budget, 1)
	assert.Contains(t, budget[0], "2 model calls made, limits.max_model_calls is 2")
}

func TestNegativeBudgetsAreRejected(t *testing.T) {
	for _, key := range []string{"max_model_calls", "max_tokens", "max_cost_usd"} {
		_, err := config.Load(write(t, "p.yaml", "name: t\nlimits: {"+key+": -1}\nnodes:\n  - {id: a, type: direct}\n"))
		require.ErrorIs(t, err, config.ErrInvalid, key)
		assert.Contains(t, err.Error(), "limits."+key)
	}
}
