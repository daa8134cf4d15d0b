package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/hooks"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/memstore"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/llm/middleware"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/telemetry"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"
)

// hooked returns the state of a run of a pipeline with limits, its calls
// passing the hooks such a run gets (runHooks, with the services of cfg),
// and the recorder of the run's trace.
func hooked(limits config.Limits, cfg runConfig) (*state.State, *trace.Recorder) {
	p := &Pipeline{Config: &config.Pipeline{Name: "p", Limits: limits}}
	rec := &trace.Recorder{}
	st := state.NewState(state.Task{ID: "t1", Question: "q"})
	st.SetHooks(p.runHooks(st, trace.New("run", rec), cfg))
	return st, rec
}

// fixedMeter measures every call as 100 prompt and 7 completion tokens,
// cached of the prompt tokens from the provider's cache.
type fixedMeter struct{ cached int }

func (fixedMeter) Measure([]llms.MessageContent, *llms.ContentResponse) (int, int, bool) {
	return 100, 7, false
}

func (m fixedMeter) Cached(*llms.ContentResponse) int { return m.cached }

// perToken prices a token at a micro-dollar.
type perToken struct{}

func (perToken) Cost(p, c int) (float64, bool) { return float64(p+c) / 1e6, true }

// meteredModel returns a Model over m that measures 107 tokens a call for
// $0.000107.
func meteredModel(m llms.Model) llm.Model {
	return llm.Model{LLM: m, Meter: fixedMeter{}, Pricer: perToken{}}
}

// noSleep makes the retry middleware retry at once.
var noSleep = middleware.WithSleep(func(context.Context, time.Duration) error { return nil })

// retryingModel returns m behind the retry middleware, three attempts a call.
func retryingModel(m llms.Model) llm.Model {
	return llm.Model{LLM: middleware.NewRetry(middleware.RetryConfig{MaxAttempts: 3}, noSleep)(m)}
}

func eventKinds(evs []trace.Event) []trace.Kind {
	out := make([]trace.Kind, len(evs))
	for i, e := range evs {
		out[i] = e.Kind
	}
	return out
}

func TestTheModelHooksAreBudgetProgramSpanTraceUsageThenTokensAndJournal(t *testing.T) {
	order := HookOrder()
	assert.Equal(t, []string{"budget", "program", "span", "trace", "usage", "metering", "tokens", "journal"}, order["model"])
}

func TestBudgetHookRefusesACallOnceALimitIsSpentButNeverAFinalizer(t *testing.T) {
	tests := []struct {
		name   string
		limits config.Limits
		want   string
	}{
		{"model calls", config.Limits{MaxModelCalls: 1}, "1 model calls made, limits.max_model_calls is 1"},
		{"tokens", config.Limits{MaxTokens: 107}, "107 tokens used, limits.max_tokens is 107"},
		{"cost", config.Limits{MaxCostUSD: 0.0001}, "$0.0001 spent, limits.max_cost_usd is $0.0001"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &llmtest.Recorder{Model: llmtest.Reply("ok")}
			m := meteredModel(rec)
			st, tr := hooked(tt.limits, runConfig{})
			ctx := context.Background()
			_, _, err := m.Call(ctx, st, llm.CallMeta{Node: "n"}, llm.Prompt("", "first"))
			require.NoError(t, err, "a run's first call is made")

			_, _, err = m.Call(ctx, st, llm.CallMeta{Node: "n", Role: "evaluate"}, llm.Prompt("", "second"))
			require.ErrorIs(t, err, llm.ErrBudgetExceeded)
			assert.Contains(t, err.Error(), tt.want)
			assert.Equal(t, 1, rec.Calls(), "a refused call is not made")

			text, _, err := m.Call(ctx, st, llm.CallMeta{Node: "n", Role: "finalize"}, llm.Prompt("", "answer now"))
			require.NoError(t, err, "a finalizer always answers")
			assert.Equal(t, "ok", text)
			assert.Equal(t, 2, rec.Calls())

			_, _, err = m.Call(ctx, st, llm.CallMeta{Node: "n"}, llm.Prompt("", "more"))
			require.ErrorIs(t, err, llm.ErrBudgetExceeded)

			u := st.Usage.Snapshot()
			assert.Equal(t, 2, u.ModelCalls)
			assert.Equal(t, 2, u.ModelAttempts, "a refused call makes no attempt")
			assert.Zero(t, u.FailedCalls, "nor is it a failed call")
			assert.Len(t, tr.OfKind(trace.KindLLMCall), 2)
			assert.Empty(t, tr.OfKind(trace.KindError), "a refusal is no provider failure")
		})
	}
}

func TestBudgetHookIsCheckedBeforeEachEmptyReplyRetry(t *testing.T) {
	rec := &llmtest.Recorder{Model: llmtest.Reply(" ")}
	st, _ := hooked(config.Limits{MaxModelCalls: 2}, runConfig{})
	m := llm.Model{LLM: rec, EmptyRetries: 5}
	_, _, err := m.Call(context.Background(), st, llm.CallMeta{Node: "n"}, llm.Prompt("", "x"))
	require.ErrorIs(t, err, llm.ErrBudgetExceeded)
	assert.Contains(t, err.Error(), "limits.max_model_calls is 2")
	assert.Equal(t, 2, rec.Calls(), "the budget is checked before each retry")
	assert.Equal(t, 2, st.Usage.Snapshot().ModelCalls)
}

func TestSharedBudgetBoundsTheCallsOfEveryRunTogether(t *testing.T) {
	sb := llm.NewSharedBudget(llm.Budget{MaxModelCalls: 5}, "the compare budget")
	m := meteredModel(llmtest.Reply("hello world"))
	// Three runs, each given the budget, call concurrently until refused.
	made := make([]int, 3)
	refusals := make([]int, 3)
	var wg sync.WaitGroup
	for i := range made {
		wg.Go(func() {
			st, tr := hooked(config.Limits{}, runConfig{shared: sb})
			defer func() {
				for _, e := range tr.OfKind(trace.KindGuard) {
					if e.Data["guard"] == llm.GuardSharedBudget {
						refusals[i]++
					}
				}
			}()
			for {
				if _, _, err := m.Call(context.Background(), st, llm.CallMeta{Node: "n"}, llm.Prompt("", "hi")); err != nil {
					assert.ErrorIs(t, err, llm.ErrBudgetExceeded)
					assert.ErrorIs(t, err, llm.ErrSharedBudgetExceeded)
					assert.Equal(t, "the compare budget is spent: 5 model calls made, its limit is 5 (max model calls)", err.Error())
					assert.Equal(t, made[i], st.Usage.Snapshot().ModelCalls, "the run counts its own calls")
					return
				}
				made[i]++
			}
		})
	}
	wg.Wait()
	// Calls are admitted one at a time: however the runs interleave,
	// exactly the budget's calls are made.
	total := made[0] + made[1] + made[2]
	assert.Equal(t, 5, total)
	calls, tokens, cost := sb.Spent()
	assert.Equal(t, total, calls)
	assert.Equal(t, 107*total, tokens)
	assert.InDelta(t, 107e-6*float64(total), cost, 1e-12)
	assert.Equal(t, []int{1, 1, 1}, refusals, "every run reports its refused call by a guard event")

	// A finalizer still answers, and its usage is counted.
	st, tr := hooked(config.Limits{}, runConfig{shared: sb})
	_, _, err := m.Call(context.Background(), st, llm.CallMeta{Node: "n", Role: "finalize"}, llm.Prompt("", "answer now"))
	require.NoError(t, err)
	calls, _, _ = sb.Spent()
	assert.Equal(t, total+1, calls)
	assert.Empty(t, tr.OfKind(trace.KindGuard))
}

func TestUsageHookCountsEveryAttemptIncludingFailedOnes(t *testing.T) {
	overloaded := errors.New("API returned unexpected status code: 503: overloaded")
	tests := []struct {
		name                    string
		failures                int
		wantCalls, wantAttempts int
		wantFailed              int
	}{
		{name: "first try", failures: 0, wantCalls: 1, wantAttempts: 1},
		{name: "fails once then succeeds", failures: 1, wantCalls: 1, wantAttempts: 2},
		{name: "every attempt fails", failures: 3, wantCalls: 0, wantAttempts: 3, wantFailed: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, _ := hooked(config.Limits{}, runConfig{})
			m := retryingModel(llmtest.FailTimes(tt.failures, overloaded, llmtest.Reply("ok")))
			_, _, err := m.Call(context.Background(), st, llm.CallMeta{Node: "n"}, llm.Prompt("", "x"))
			if tt.wantFailed > 0 {
				require.ErrorIs(t, err, llm.ErrModel)
			} else {
				require.NoError(t, err)
			}
			u := st.Usage.Snapshot()
			assert.Equal(t, tt.wantCalls, u.ModelCalls)
			assert.Equal(t, tt.wantAttempts, u.ModelAttempts)
			assert.Equal(t, tt.wantFailed, u.FailedCalls)
			assert.Equal(t, tt.wantAttempts, u.PerNode["n"].ModelAttempts)
			assert.Equal(t, tt.wantFailed, u.PerNode["n"].FailedCalls)
		})
	}
}

func TestUsageHookCountsTokensCostAndCachedTokensIntoTheRunAndTheSharedBudget(t *testing.T) {
	sb := llm.NewSharedBudget(llm.Budget{}, "")
	ctx := context.Background()
	st, _ := hooked(config.Limits{}, runConfig{shared: sb})
	cached := llm.Model{LLM: llmtest.Reply("ok"), Meter: fixedMeter{cached: 40}, Pricer: perToken{}}
	_, _, err := cached.Call(ctx, st, llm.CallMeta{Node: "a"}, llm.Prompt("", "x"))
	require.NoError(t, err)
	u := st.Usage.Snapshot()
	assert.Equal(t, state.Counters{ModelCalls: 1, ModelAttempts: 1, PromptTokens: 100, CompletionTokens: 7, CachedPromptTokens: 40}, u.Counters)
	assert.Equal(t, u.Counters, u.PerNode["a"])
	assert.InDelta(t, 107e-6, u.CostUSD, 1e-12)
	assert.False(t, u.Estimated)

	// A call measured without a meter is estimated, and so is the run.
	_, _, err = llm.Model{LLM: llmtest.Reply("ok")}.Call(ctx, st, llm.CallMeta{Node: "b"}, llm.Prompt("", "x"))
	require.NoError(t, err)
	u = st.Usage.Snapshot()
	assert.Equal(t, 2, u.ModelCalls)
	assert.True(t, u.Estimated)
	assert.Equal(t, 1, u.PerNode["b"].ModelCalls)
	assert.Zero(t, u.PerNode["b"].CachedPromptTokens)

	calls, tokens, cost := sb.Spent()
	assert.Equal(t, 2, calls)
	assert.Equal(t, u.PromptTokens+u.CompletionTokens, tokens)
	assert.InDelta(t, 107e-6, cost, 1e-12)
}

func TestTraceHookEmitsAnLLMCallEventWithTheCallsUsage(t *testing.T) {
	st, tr := hooked(config.Limits{}, runConfig{})
	m := llm.Model{LLM: &llmtest.Latency{Delay: time.Millisecond, Model: llmtest.Reply("ok")}, Meter: fixedMeter{cached: 40}, Pricer: perToken{}}
	_, _, err := m.Call(context.Background(), st, llm.CallMeta{Node: "n", Kind: "cot", Role: "finalize"}, llm.Prompt("", "x"))
	require.NoError(t, err)
	_, _, err = llm.Model{LLM: llmtest.Reply("ok")}.Call(context.Background(), st, llm.CallMeta{Node: "act", Kind: "react"}, llm.Prompt("", "x"))
	require.NoError(t, err)

	calls := tr.OfKind(trace.KindLLMCall)
	require.Len(t, calls, 2)
	first := calls[0]
	assert.Equal(t, "n", first.Node)
	assert.Equal(t, map[string]any{"kind": "cot", "role": "finalize"}, first.Data)
	require.NotNil(t, first.Usage)
	assert.InDelta(t, 107e-6, first.Usage.CostUSD, 1e-12)
	first.Usage.CostUSD = 0
	assert.Equal(t, trace.Usage{PromptTokens: 100, CompletionTokens: 7, CachedPromptTokens: 40}, *first.Usage)
	assert.GreaterOrEqual(t, first.ElapsedMS, 1.0, "the event carries the call's time")

	second := calls[1]
	assert.Equal(t, "act", second.Node)
	assert.Equal(t, map[string]any{"kind": "react"}, second.Data, "no role, no role key")
	require.NotNil(t, second.Usage)
	assert.True(t, second.Usage.Estimated)
	assert.Empty(t, tr.OfKind(trace.KindError))
}

func TestTraceHookReportsOnlyProviderFailuresAsErrorEvents(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	refused := errors.New("refused by the program")
	tests := []struct {
		name      string
		ctx       context.Context
		model     llms.Model
		hooks     []any
		wantError string
	}{
		{name: "a provider failure", ctx: context.Background(), wantError: "HTTP 500",
			model: &llmtest.Latency{Delay: time.Millisecond, Model: llmtest.Fail(errors.New("HTTP 500"))}},
		{name: "a cancelled run", ctx: cancelled, model: llmtest.Fail(context.Canceled)},
		{name: "a reply without choices", ctx: context.Background(), model: llmtest.Respond(&llms.ContentResponse{})},
		{name: "a refusal of the program's hooks", ctx: context.Background(), model: llmtest.Reply("ok"),
			hooks: []any{hooks.Funcs{BeforeModel: func(context.Context, *hooks.ModelCall) error { return refused }}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, tr := hooked(config.Limits{}, runConfig{hooks: tt.hooks})
			_, _, err := llm.Model{LLM: tt.model}.Call(tt.ctx, st, llm.CallMeta{Node: "n"}, llm.Prompt("", "x"))
			require.Error(t, err)
			assert.Empty(t, tr.OfKind(trace.KindLLMCall), "a failed call has no llm_call event")
			errs := tr.OfKind(trace.KindError)
			if tt.wantError == "" {
				assert.Empty(t, errs)
				return
			}
			require.Len(t, errs, 1)
			assert.Equal(t, "n", errs[0].Node)
			assert.Equal(t, err.Error(), errs[0].Text)
			assert.Contains(t, errs[0].Text, tt.wantError)
			assert.GreaterOrEqual(t, errs[0].ElapsedMS, 1.0, "the event carries the failed call's time")
		})
	}
}

func TestTraceHookAnnouncesEachEmptyReplyRetryWithAGuardEvent(t *testing.T) {
	t.Run("a retry that gets an answer", func(t *testing.T) {
		st, tr := hooked(config.Limits{}, runConfig{})
		m := llm.Model{LLM: llmtest.Replies("  \n", "42"), Meter: fixedMeter{}, EmptyRetries: 2}
		text, _, err := m.Call(context.Background(), st, llm.CallMeta{Node: "solve", Kind: "cot", Role: "judge"}, llm.Prompt("sys", "what is six times seven?"))
		require.NoError(t, err)
		assert.Equal(t, "42", text)

		assert.Equal(t, []trace.Kind{trace.KindLLMCall, trace.KindGuard, trace.KindLLMCall}, eventKinds(tr.Events()),
			"the guard event comes before the retry")
		guards := tr.OfKind(trace.KindGuard)
		require.Len(t, guards, 1)
		assert.Equal(t, "solve", guards[0].Node)
		assert.Equal(t, map[string]any{"guard": llm.GuardEmptyReply, "retry": 1, "of": 2, "kind": "cot", "role": "judge"}, guards[0].Data)
		assert.Contains(t, guards[0].Text, "retry 1 of 2")

		u := st.Usage.Snapshot()
		assert.Equal(t, 2, u.ModelCalls, "the retry is a model call of its own")
		assert.Equal(t, 2, u.ModelAttempts)
		assert.Equal(t, 200, u.PromptTokens, "every attempt's usage is counted")
	})
	t.Run("retries that run out", func(t *testing.T) {
		st, tr := hooked(config.Limits{}, runConfig{})
		text, _, err := llm.Model{LLM: llmtest.Replies(" ", "", "\t"), EmptyRetries: 2}.Call(context.Background(), st, llm.CallMeta{Node: "n", Kind: "direct"}, llm.Prompt("", "x"))
		require.NoError(t, err)
		assert.Equal(t, "\t", text)
		guards := tr.OfKind(trace.KindGuard)
		require.Len(t, guards, 2)
		assert.Equal(t, 1, guards[0].Data["retry"])
		assert.Equal(t, 2, guards[1].Data["retry"])
		assert.NotContains(t, guards[0].Data, "role", "no role, no role key")
		assert.Equal(t, 3, st.Usage.Snapshot().ModelCalls)
		assert.Len(t, tr.OfKind(trace.KindLLMCall), 3)
	})
	t.Run("no retry, no guard", func(t *testing.T) {
		st, tr := hooked(config.Limits{}, runConfig{})
		model := llmtest.ToolReply("", llmtest.ToolCall("1", "calc", `{"x":1}`))
		_, _, err := llm.Model{LLM: model, EmptyRetries: 2}.Call(context.Background(), st, llm.CallMeta{Node: "act"}, llm.Prompt("", "x"))
		require.NoError(t, err)
		assert.Empty(t, tr.OfKind(trace.KindGuard))
	})
}

// brokenStream streams "Thought: hal" and breaks on its first call, then
// streams its whole reply in three chunks.
func brokenStream() llms.Model {
	return llmtest.Seq(
		&llmtest.Stream{Chunks: []string{"Thought: hal"}, Err: errors.New("error reading streaming response: unexpected EOF")},
		&llmtest.Stream{Chunks: []string{"Thought: ", "half done", "\nAnswer: 7"}},
	)
}

func TestTokenEventsSpellTheReplyAndRestartWithTheRetriedAttempt(t *testing.T) {
	st, tr := hooked(config.Limits{}, runConfig{tokens: true})
	ctx := llm.WithStep(context.Background(), "s1")
	text, _, err := retryingModel(brokenStream()).Call(ctx, st, llm.CallMeta{Node: "act", Kind: "react", Role: "main"}, llm.Prompt("", "q"))
	require.NoError(t, err, "a call that failed half way is retried when only token events stream it")
	assert.Equal(t, "Thought: half done\nAnswer: 7", text)
	byAttempt := map[any]*strings.Builder{}
	for _, e := range tr.OfKind(trace.KindToken) {
		assert.Equal(t, "act", e.Node)
		assert.Equal(t, int64(1), e.Data["call"])
		assert.Equal(t, "main", e.Data["role"])
		assert.Equal(t, "s1", e.Data["step"])
		if byAttempt[e.Data["attempt"]] == nil {
			byAttempt[e.Data["attempt"]] = &strings.Builder{}
		}
		byAttempt[e.Data["attempt"]].WriteString(e.Text)
	}
	require.Len(t, byAttempt, 2)
	assert.Equal(t, "Thought: hal", byAttempt[1].String())
	assert.Equal(t, text, byAttempt[2].String(), "the retried attempt streams the whole reply")
	assert.Equal(t, 2, st.Usage.Snapshot().ModelAttempts)
}

func TestTokenEventsNumberTheCallsOfARun(t *testing.T) {
	m := llm.Model{LLM: &llmtest.Stream{Chunks: []string{"a", "b"}}}
	run := func() []trace.Event {
		st, tr := hooked(config.Limits{}, runConfig{tokens: true})
		for range 2 {
			_, _, err := m.Call(context.Background(), st, llm.CallMeta{Node: "n"}, llm.Prompt("", "q"))
			require.NoError(t, err)
		}
		return tr.OfKind(trace.KindToken)
	}
	for range 2 { // each run counts its own calls
		toks := run()
		require.Len(t, toks, 4)
		var got []string
		for _, e := range toks {
			got = append(got, fmt.Sprint(e.Data["call"], ".", e.Data["attempt"], ":", e.Text))
			assert.NotContains(t, e.Data, "role")
			assert.NotContains(t, e.Data, "step")
		}
		assert.Equal(t, []string{"1.1:a", "1.1:b", "2.1:a", "2.1:b"}, got)
	}
}

func TestACallersOwnStreamSeesEveryChunkFirstAndIsNotRestarted(t *testing.T) {
	st, tr := hooked(config.Limits{}, runConfig{tokens: true})
	var own []string
	stream := llms.WithStreamingFunc(func(_ context.Context, c []byte) error {
		assert.Len(t, tr.OfKind(trace.KindToken), len(own), "the caller's function gets the chunk before the token event")
		own = append(own, string(c))
		return nil
	})
	_, _, err := retryingModel(brokenStream()).Call(context.Background(), st, llm.CallMeta{Node: "plan"}, llm.Prompt("", "q"), stream)
	require.ErrorContains(t, err, "partly streamed", "the caller's function cannot tell attempts apart")
	assert.Equal(t, []string{"Thought: hal"}, own)
	require.Len(t, tr.OfKind(trace.KindToken), 1)

	// The caller's function may stop the stream, and the call with it.
	stop := errors.New("enough")
	st, tr = hooked(config.Limits{}, runConfig{tokens: true})
	_, _, err = llm.Model{LLM: &llmtest.Stream{Chunks: []string{"x", "y"}}}.Call(context.Background(), st, llm.CallMeta{Node: "plan"}, llm.Prompt("", "q"),
		llms.WithStreamingFunc(func(context.Context, []byte) error { return stop }))
	require.ErrorIs(t, err, stop)
	assert.Empty(t, tr.OfKind(trace.KindToken), "a chunk the caller refused is no token event")

	own = nil
	st, tr = hooked(config.Limits{}, runConfig{tokens: true})
	text, _, err := llm.Model{LLM: &llmtest.Stream{Chunks: []string{"x", "y", "z"}}}.Call(context.Background(), st, llm.CallMeta{Node: "plan"}, llm.Prompt("", "q"), stream)
	require.NoError(t, err)
	assert.Equal(t, "xyz", text)
	assert.Equal(t, []string{"x", "y", "z"}, own)
	assert.Len(t, tr.OfKind(trace.KindToken), 3)
}

func TestNoTokenEventsWithoutWithTokens(t *testing.T) {
	rec := &llmtest.Recorder{Model: &llmtest.Stream{Chunks: []string{"a", "b"}}}
	st, tr := hooked(config.Limits{}, runConfig{})
	_, _, err := llm.Model{LLM: rec}.Call(context.Background(), st, llm.CallMeta{Node: "act"}, llm.Prompt("", "q"))
	require.NoError(t, err)
	assert.Empty(t, tr.OfKind(trace.KindToken))
	assert.Nil(t, rec.Requests()[0].Options.StreamingFunc, "the reply is not streamed at all")

	// WithTokens, as Run and Hooks take it, turns them on.
	p := &Pipeline{Config: &config.Pipeline{Name: "p"}}
	tr2 := &trace.Recorder{}
	st = state.NewState(state.Task{ID: "t2"})
	st.SetHooks(p.Hooks(st, trace.New("run", tr2), WithTokens()))
	_, _, err = llm.Model{LLM: rec}.Call(context.Background(), st, llm.CallMeta{Node: "act"}, llm.Prompt("", "q"))
	require.NoError(t, err)
	assert.Len(t, tr2.OfKind(trace.KindToken), 2)
}

// TestModelSpanAllocatesNothingWithoutATracerProvider: without a tracer
// provider in the context, the span of a model call costs no allocation,
// and a run has no span hook at all.
func TestModelSpanAllocatesNothingWithoutATracerProvider(t *testing.T) {
	ctx := llm.WithCallMeta(context.Background(), llm.CallMeta{Node: "react"})
	res := &hooks.ModelResult{Response: &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "hello", StopReason: "stop"}}},
		Usage: hooks.Usage{PromptTokens: 3, CompletionTokens: 1}}
	chat := telemetry.Chat{Provider: "openai", Model: "gpt-4o-mini", Node: "react"}
	allocs := testing.AllocsPerRun(1000, func() {
		_, span := (*telemetry.Provider)(nil).StartChat(ctx, chat)
		span.SetUsage(telemetry.Usage{InputTokens: 3, OutputTokens: 1})
		endModelSpan(span, res, nil)
	})
	assert.Zero(t, allocs)

	model := func(tp *telemetry.Provider) int {
		p := &Pipeline{Config: &config.Pipeline{Name: "p"}}
		_, n, _, _ := p.runHooks(state.NewState(state.Task{}), nil, runConfig{telemetry: tp}).Len()
		return n
	}
	assert.Equal(t, model(nil)+1, model(telemetry.New(noop.NewTracerProvider())), "the span hook is installed only with a provider")
}

func TestModelSpanRecordsEachCallMadeWithItsUsageOrItsFailure(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	ctx := context.Background()
	st, _ := hooked(config.Limits{MaxModelCalls: 1}, runConfig{telemetry: telemetry.New(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)))})
	m := meteredModel(llmtest.Seq(llmtest.Respond(&llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "ok", StopReason: "stop"}}}),
		llmtest.Fail(errors.New("HTTP 500"))))
	m.Provider, m.Name = "openai", "gpt-4o-mini"
	_, _, err := m.Call(ctx, st, llm.CallMeta{Node: "n"}, llm.Prompt("", "x"))
	require.NoError(t, err)
	_, _, err = m.Call(ctx, st, llm.CallMeta{Node: "n", Role: "finalize"}, llm.Prompt("", "x"))
	require.ErrorIs(t, err, llm.ErrModel)
	_, _, err = m.Call(ctx, st, llm.CallMeta{Node: "n"}, llm.Prompt("", "x"))
	require.ErrorIs(t, err, llm.ErrBudgetExceeded)

	ended := spans.Ended()
	require.Len(t, ended, 2, "a call the budget refused has no span")
	attrs := func(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
		out := map[attribute.Key]attribute.Value{}
		for _, kv := range s.Attributes() {
			out[kv.Key] = kv.Value
		}
		return out
	}
	ok, failed := ended[0], ended[1]
	assert.Equal(t, "chat gpt-4o-mini", ok.Name())
	a := attrs(ok)
	assert.Equal(t, int64(100), a[telemetry.KeyInputTokens].AsInt64())
	assert.Equal(t, int64(7), a[telemetry.KeyOutputTokens].AsInt64())
	assert.InDelta(t, 107e-6, a[telemetry.KeyCostUSD].AsFloat64(), 1e-12)
	assert.Equal(t, []string{"stop"}, a[telemetry.KeyFinishReasons].AsStringSlice())
	assert.Equal(t, codes.Unset, ok.Status().Code)

	assert.Equal(t, "chat gpt-4o-mini", failed.Name())
	assert.Equal(t, "provider_error", attrs(failed)[telemetry.KeyErrorType].AsString())
	assert.Equal(t, codes.Error, failed.Status().Code)
}

func TestModelErrorTypeClassifiesAFailedCall(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{fmt.Errorf("%w: %w", llm.ErrModel, context.DeadlineExceeded), "timeout"},
		{context.Canceled, "canceled"},
		{llm.Budget{MaxModelCalls: 1}.Check(1, 0, 0), "budget_exceeded"},
		{fmt.Errorf("%w: %w", llm.ErrModel, llm.ErrEmptyResponse), "empty_response"},
		{&journal.SuspendedError{}, "journal"},
		{fmt.Errorf("%w: HTTP 500", llm.ErrModel), "provider_error"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, modelErrorType(tt.err), tt.err.Error())
	}
}

// journaled opens a session of thread on s, with the scope of the first
// execution of node "act".
func journaled(t *testing.T, s journal.Store, thread string) (context.Context, *journal.Run) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.Thread(ctx, thread); err != nil {
		require.NoError(t, s.Create(ctx, journal.Thread{Name: thread, Pipeline: "p.yaml", Status: journal.StatusRunning}))
	}
	r, err := journal.Open(ctx, s, thread)
	require.NoError(t, err)
	return hooks.WithScope(journal.WithRun(ctx, r), hooks.NodeScope(1, "act")), r
}

func TestJournaledEmptyRetriesReplayWithoutALiveCall(t *testing.T) {
	s := memstore.New()
	msgs := llm.Prompt("sys", "q")
	caller := llm.CallMeta{Node: "act", Kind: "direct"}

	live := &llmtest.Recorder{Model: llmtest.Replies(" ", "the answer")}
	ctx, r := journaled(t, s, "t1")
	st, tr := hooked(config.Limits{}, runConfig{journal: r})
	text, _, err := llm.Model{LLM: live, Meter: fixedMeter{}, EmptyRetries: 2}.Call(ctx, st, caller, msgs)
	require.NoError(t, err)
	require.Equal(t, "the answer", text)
	assert.Equal(t, 2, live.Calls())
	require.Equal(t, 200, st.Usage.Snapshot().PromptTokens)
	replayed, made, _ := r.Stats()
	assert.Equal(t, [2]int{0, 2}, [2]int{replayed, made}, "the empty reply and its retry are journaled")
	assert.Len(t, tr.OfKind(trace.KindGuard), 1)

	dead := llmtest.Fail(errors.New("a live call in a replay"))
	ctx, r = journaled(t, s, "t1")
	st, tr = hooked(config.Limits{}, runConfig{tokens: true, journal: r})
	// No Meter: the replay reports the usage the journal recorded rather
	// than counting the prompt's tokens again with the default estimate.
	text, _, err = llm.Model{LLM: dead, EmptyRetries: 2}.Call(ctx, st, caller, msgs)
	require.NoError(t, err)
	assert.Equal(t, "the answer", text)
	assert.Zero(t, dead.Calls(), "no live call")
	replayed, made, unused := r.Stats()
	assert.Equal(t, [3]int{2, 0, 0}, [3]int{replayed, made, unused}, "both calls are replayed")
	assert.Len(t, tr.OfKind(trace.KindGuard), 1, "the replay retries as the run did")
	u := st.Usage.Snapshot()
	assert.Equal(t, 2, u.ModelCalls, "a replayed call is counted as a live one")
	assert.Equal(t, 200, u.PromptTokens, "with the usage the live run measured")
	assert.Len(t, tr.OfKind(trace.KindLLMCall), 2)
	var toks []string
	for _, e := range tr.OfKind(trace.KindToken) {
		toks = append(toks, e.Text)
	}
	assert.Equal(t, []string{" ", "the answer"}, toks, "a replayed reply streams as one chunk")
}

func TestTheProgramsHooksSitInsideTheBudgetAndOutsideTheRecords(t *testing.T) {
	var seen []string
	var mu sync.Mutex
	program := hooks.Funcs{BeforeModel: func(_ context.Context, call *hooks.ModelCall) error {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, llm.MessagesText(call.Messages, ""))
		if strings.Contains(llm.MessagesText(call.Messages, ""), "secret") {
			return errors.New("no secrets")
		}
		return nil
	}}
	rec := &llmtest.Recorder{Model: llmtest.Reply("ok")}
	m := meteredModel(rec)
	st, tr := hooked(config.Limits{MaxModelCalls: 2}, runConfig{hooks: []any{program}})

	_, _, err := m.Call(context.Background(), st, llm.CallMeta{Node: "n"}, llm.Prompt("", "a secret"))
	require.EqualError(t, err, "no secrets")
	assert.Zero(t, rec.Calls())
	assert.Empty(t, tr.Events(), "a call the program refused leaves no trace")
	assert.Zero(t, st.Usage.Snapshot().ModelAttempts, "and counts nothing")

	for _, q := range []string{"one", "two", "three"} {
		_, _, err = m.Call(context.Background(), st, llm.CallMeta{Node: "n"}, llm.Prompt("", q))
	}
	require.ErrorIs(t, err, llm.ErrBudgetExceeded)
	assert.Equal(t, []string{"a secret\n", "one\n", "two\n"}, seen, "a call the budget refused never reaches the program's hooks")
	assert.Equal(t, 2, rec.Calls())
}
