package llm_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planner-engine/planner/hooks"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/llm/middleware"
	"github.com/planner-engine/planner/state"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// A run's state is the Run a model call serves.
var _ llm.Run = (*state.State)(nil)

// testRun is a Run of task "t1" with hooks.
type testRun struct{ set *hooks.Set }

func (testRun) TaskID() string                 { return "t1" }
func (r testRun) Hooks() *hooks.Set            { return r.set }
func runWith(hs ...any) llm.Run                { return testRun{set: hooks.NewSet(hs...)} }
func prompt(user string) []llms.MessageContent { return llm.Prompt("", user) }

// fixedMeter measures every call as 100 prompt and 7 completion tokens.
type fixedMeter struct{}

func (fixedMeter) Measure([]llms.MessageContent, *llms.ContentResponse) (int, int, bool) {
	return 100, 7, false
}

// perToken prices a token at a micro-dollar.
type perToken struct{}

func (perToken) Cost(p, c int) (float64, bool) { return float64(p+c) / 1e6, true }

// observed is what a hook saw of one call: the call as it entered the
// hook, and what the rest of the chain returned.
type observed struct {
	call hooks.ModelCall
	res  *hooks.ModelResult // a copy; nil when the chain returned none
	err  error
}

// observer keeps what it saw of every call; safe for concurrent use.
type observer struct {
	mu   sync.Mutex
	seen []observed
}

func (o *observer) wrap(next hooks.ModelFunc) hooks.ModelFunc {
	return func(ctx context.Context, call *hooks.ModelCall) (*hooks.ModelResult, error) {
		in := *call
		res, err := next(ctx, call)
		ob := observed{call: in, err: err}
		if res != nil {
			cp := *res
			ob.res = &cp
		}
		o.mu.Lock()
		o.seen = append(o.seen, ob)
		o.mu.Unlock()
		return res, err
	}
}

func (o *observer) calls() []observed {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]observed(nil), o.seen...)
}

// modelSpy is a ModelHook that observes the metered calls.
type modelSpy struct{ observer }

func (s *modelSpy) WrapModel(next hooks.ModelFunc) hooks.ModelFunc { return s.wrap(next) }

// providerSpy is a ProviderHook that observes the provider requests.
type providerSpy struct{ observer }

func (s *providerSpy) WrapProvider(next hooks.ModelFunc) hooks.ModelFunc { return s.wrap(next) }

// seenByModel is what a Recorder's Meta keeps of a provider request's
// context.
type seenByModel struct {
	meta  llm.CallMeta
	scope string
}

func metaOf(ctx context.Context) any {
	return seenByModel{meta: llm.CallMetaFrom(ctx), scope: hooks.Scope(ctx)}
}

func TestCallIdentifiesTheCallerToTheModelAndToTheHooks(t *testing.T) {
	rec := &llmtest.Recorder{Model: llmtest.Reply("hello world"), Meta: metaOf}
	m := llm.Model{LLM: rec, Meter: fixedMeter{}, Provider: "openai", Name: "gpt-4o-mini"}
	spy := &modelSpy{}
	st := state.NewState(state.Task{ID: "t1", Question: "q"})
	st.SetHooks(hooks.NewSet(spy))
	ctx := llm.WithStep(context.Background(), "s2")
	msgs := llm.Prompt("sys", "hi")
	// The caller's own task and step ids are not what the call serves.
	text, resp, err := m.Call(ctx, st, llm.CallMeta{Node: "n", Kind: "cot", Role: "finalize", TaskID: "other", StepID: "other"}, msgs)
	require.NoError(t, err)
	assert.Equal(t, "hello world", text)
	require.Len(t, resp.Choices, 1)

	reqs := rec.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, seenByModel{meta: llm.CallMeta{Node: "n", Kind: "cot", Role: "finalize", TaskID: "t1", StepID: "s2"}, scope: "/step.s2"}, reqs[0].Meta)
	assert.Equal(t, msgs, reqs[0].Messages)

	calls := spy.calls()
	require.Len(t, calls, 1)
	got := calls[0].call
	assert.Equal(t, hooks.ModelCall{Node: "n", Kind: "cot", Role: "finalize", TaskID: "t1", StepID: "s2",
		Provider: "openai", Model: "gpt-4o-mini", Messages: msgs, Options: got.Options}, got)
	assert.Empty(t, got.Options)
}

func TestCallWithoutARunIsABareMeteredCall(t *testing.T) {
	for name, run := range map[string]llm.Run{"nil run": nil, "run without hooks": testRun{}} {
		t.Run(name, func(t *testing.T) {
			rec := &llmtest.Recorder{Model: llmtest.Reply("ok"), Meta: metaOf}
			text, _, err := llm.Model{LLM: rec}.Call(context.Background(), run, llm.CallMeta{Node: "n", TaskID: "x"}, prompt("hi"))
			require.NoError(t, err)
			assert.Equal(t, "ok", text)
			want := llm.CallMeta{Node: "n"}
			if run != nil {
				want.TaskID = "t1"
			}
			assert.Equal(t, seenByModel{meta: want}, rec.Requests()[0].Meta)
		})
	}
}

func TestCallMetersAndPricesTheReplyForTheModelHooksOnly(t *testing.T) {
	ms, ps := &modelSpy{}, &providerSpy{}
	m := llm.Model{LLM: &llmtest.Latency{Delay: time.Millisecond, Model: llmtest.Reply("hello world")}, Meter: fixedMeter{}, Pricer: perToken{}}
	text, resp, err := m.Call(context.Background(), runWith(ms, ps), llm.CallMeta{Node: "n"}, prompt("hi"))
	require.NoError(t, err)
	assert.Equal(t, "hello world", text)

	model := ms.calls()
	require.Len(t, model, 1)
	res := model[0].res
	require.NotNil(t, res)
	assert.Same(t, resp, res.Response)
	assert.InDelta(t, 107e-6, res.Usage.CostUSD, 1e-12)
	res.Usage.CostUSD = 0
	assert.Equal(t, hooks.Usage{PromptTokens: 100, CompletionTokens: 7}, res.Usage)
	assert.Equal(t, 1, res.Attempts, "a model without the retry middleware makes one attempt")
	assert.GreaterOrEqual(t, res.Elapsed, time.Millisecond, "the call is timed")

	provider := ps.calls()
	require.Len(t, provider, 1)
	require.NotNil(t, provider[0].res)
	assert.Same(t, resp, provider[0].res.Response)
	assert.Zero(t, provider[0].res.Usage, "the ProviderHooks are inside the metering")
	assert.Zero(t, provider[0].res.Attempts)
	assert.Zero(t, provider[0].res.Elapsed)
}

func TestCallMeasuresWithTheMeterAndPricesWithThePricer(t *testing.T) {
	msgs := llm.Prompt("sys", "hi") // "sys" and "hi": one token each and 4 per message
	tests := []struct {
		name   string
		meter  llm.Meter
		pricer llm.Pricer
		want   hooks.Usage
	}{
		{name: "no meter: estimated at a token per four bytes", want: hooks.Usage{PromptTokens: 10, CompletionTokens: 3, Estimated: true}},
		{name: "no pricer: no cost", meter: fixedMeter{}, want: hooks.Usage{PromptTokens: 100, CompletionTokens: 7}},
		{name: "a price", meter: fixedMeter{}, pricer: perToken{}, want: hooks.Usage{PromptTokens: 100, CompletionTokens: 7, CostUSD: 107e-6}},
		{name: "cached tokens at the cached rate", meter: cacheMeter{cached: 40}, pricer: cachePricer{},
			want: hooks.Usage{PromptTokens: 100, CompletionTokens: 7, CachedPromptTokens: 40, CostUSD: 60e-6 + 40e-7 + 7e-6}},
		{name: "no more cached tokens than prompt tokens", meter: cacheMeter{cached: 500}, pricer: cachePricer{},
			want: hooks.Usage{PromptTokens: 100, CompletionTokens: 7, CachedPromptTokens: 100, CostUSD: 100e-7 + 7e-6}},
		{name: "nothing cached: the full price", meter: cacheMeter{}, pricer: cachePricer{}, want: hooks.Usage{PromptTokens: 100, CompletionTokens: 7, CostUSD: 107e-6}},
		{name: "cached tokens without a cached rate", meter: cacheMeter{cached: 40}, pricer: perToken{},
			want: hooks.Usage{PromptTokens: 100, CompletionTokens: 7, CachedPromptTokens: 40, CostUSD: 107e-6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spy := &modelSpy{}
			m := llm.Model{LLM: llmtest.Reply("hello world"), Meter: tt.meter, Pricer: tt.pricer}
			_, _, err := m.Call(context.Background(), runWith(spy), llm.CallMeta{Node: "n"}, msgs)
			require.NoError(t, err)
			got := spy.calls()[0].res.Usage
			assert.InDelta(t, tt.want.CostUSD, got.CostUSD, 1e-12)
			got.CostUSD, tt.want.CostUSD = 0, 0
			assert.Equal(t, tt.want, got)
		})
	}
}

// cacheMeter measures 100 prompt tokens, cached of them served from the
// provider's cache, and 7 completion tokens.
type cacheMeter struct{ cached int }

func (cacheMeter) Measure([]llms.MessageContent, *llms.ContentResponse) (int, int, bool) {
	return 100, 7, false
}

func (m cacheMeter) Cached(*llms.ContentResponse) int { return m.cached }

// cachePricer prices a token at a micro-dollar, a cached one at a tenth
// of that.
type cachePricer struct{ perToken }

func (cachePricer) CostCached(p, cached, c int) (float64, bool) {
	return float64(p-cached+c)/1e6 + float64(cached)/1e7, true
}

func TestApproxMeterEstimatesATokenPerFourBytes(t *testing.T) {
	resp := llmtest.TextResponse("hello world") // 11 bytes: 3 tokens
	p, c, est := llm.ApproxMeter{}.Measure(llm.Prompt("a system prompt", "hi"), resp)
	assert.Equal(t, 13, p, "15 bytes: 4 tokens, 2 bytes: 1 token, and 4 a message")
	assert.Equal(t, 3, c)
	assert.True(t, est)
}

func TestCallWrapsProviderErrorsButNotCancellation(t *testing.T) {
	boom := errors.New("HTTP 500")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name      string
		ctx       context.Context
		err       error
		wantModel bool
	}{
		{name: "a provider error", ctx: context.Background(), err: boom, wantModel: true},
		{name: "the run's cancellation", ctx: cancelled, err: context.Canceled},
		{name: "an attempt's own timeout is the provider's failure", ctx: context.Background(), err: context.DeadlineExceeded, wantModel: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spy := &modelSpy{}
			_, _, err := llm.Model{LLM: llmtest.Fail(tt.err)}.Call(tt.ctx, runWith(spy), llm.CallMeta{Node: "n"}, prompt("x"))
			require.ErrorIs(t, err, tt.err)
			assert.Equal(t, tt.wantModel, errors.Is(err, llm.ErrModel))
			if !tt.wantModel {
				assert.Same(t, tt.err, err, "returned as it is")
			}
			calls := spy.calls()
			require.Len(t, calls, 1)
			assert.Equal(t, err, calls[0].err, "the hooks see the error Call returns")
			require.NotNil(t, calls[0].res, "a failed call still reports its attempts")
			assert.Equal(t, 1, calls[0].res.Attempts)
			assert.Nil(t, calls[0].res.Response)
		})
	}
}

func TestCallWithoutAModelSaysHowToConfigureOne(t *testing.T) {
	spy := &modelSpy{}
	_, _, err := llm.Model{}.Call(context.Background(), runWith(spy), llm.CallMeta{}, nil)
	require.ErrorIs(t, err, llm.ErrModel)
	assert.Contains(t, err.Error(), "--llm")
	assert.Empty(t, spy.calls(), "no hook sees a call that cannot be made")
}

// answering is a ProviderHook that answers every call itself, as a journal
// or a response cache does.
type answering struct{ resp *llms.ContentResponse }

func (a answering) WrapProvider(hooks.ModelFunc) hooks.ModelFunc {
	return func(context.Context, *hooks.ModelCall) (*hooks.ModelResult, error) {
		return &hooks.ModelResult{Response: a.resp}, nil
	}
}

func TestCallFailsAReplyWithoutChoicesAsAnEmptyResponse(t *testing.T) {
	tests := []struct {
		name string
		llm  llms.Model
		hook any
	}{
		{name: "a provider reply of no choices", llm: llmtest.Respond(&llms.ContentResponse{})},
		{name: "a provider hook's result without a response", llm: llmtest.Reply("unused"), hook: answering{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spy := &modelSpy{}
			_, _, err := llm.Model{LLM: tt.llm, EmptyRetries: 2}.Call(context.Background(), runWith(spy, tt.hook), llm.CallMeta{Node: "n"}, prompt("x"))
			require.ErrorIs(t, err, llm.ErrEmptyResponse)
			require.ErrorIs(t, err, llm.ErrModel)
			require.Len(t, spy.calls(), 1, "a failed call is not an empty reply to retry")
		})
	}
}

func TestCallCountsEveryProviderAttemptInItsResult(t *testing.T) {
	noSleep := middleware.WithSleep(func(context.Context, time.Duration) error { return nil })
	overloaded := errors.New("API returned unexpected status code: 503: overloaded")
	tests := []struct {
		name         string
		failures     int
		wantAttempts int
		wantErr      bool
	}{
		{name: "first try", failures: 0, wantAttempts: 1},
		{name: "fails once then succeeds", failures: 1, wantAttempts: 2},
		{name: "every attempt fails", failures: 3, wantAttempts: 3, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := middleware.NewRetry(middleware.RetryConfig{MaxAttempts: 3}, noSleep)(llmtest.FailTimes(tt.failures, overloaded, llmtest.Reply("ok")))
			spy := &modelSpy{}
			_, _, err := llm.Model{LLM: m}.Call(context.Background(), runWith(spy), llm.CallMeta{Node: "n"}, prompt("x"))
			if tt.wantErr {
				require.ErrorIs(t, err, llm.ErrModel)
			} else {
				require.NoError(t, err)
			}
			calls := spy.calls()
			require.Len(t, calls, 1, "the retries are one call")
			require.NotNil(t, calls[0].res)
			assert.Equal(t, tt.wantAttempts, calls[0].res.Attempts)
		})
	}
}

// order is a hook of the model and provider chains that writes where it
// is to a shared list.
type order struct {
	name string
	log  *[]string
}

func (o order) WrapModel(next hooks.ModelFunc) hooks.ModelFunc {
	return func(ctx context.Context, call *hooks.ModelCall) (*hooks.ModelResult, error) {
		*o.log = append(*o.log, o.name+".model>")
		defer func() { *o.log = append(*o.log, "<"+o.name+".model") }()
		return next(ctx, call)
	}
}

func (o order) WrapProvider(next hooks.ModelFunc) hooks.ModelFunc {
	return func(ctx context.Context, call *hooks.ModelCall) (*hooks.ModelResult, error) {
		*o.log = append(*o.log, o.name+".provider>")
		defer func() { *o.log = append(*o.log, "<"+o.name+".provider") }()
		return next(ctx, call)
	}
}

func TestCallPassesTheModelHooksThenTheProviderHooksOutermostFirst(t *testing.T) {
	var log []string
	model := llmtest.Func(func(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
		log = append(log, "provider")
		return llmtest.TextResponse("ok"), nil
	})
	_, _, err := llm.Model{LLM: model}.Call(context.Background(), runWith(order{"a", &log}, order{"b", &log}), llm.CallMeta{}, prompt("x"))
	require.NoError(t, err)
	assert.Equal(t, []string{
		"a.model>", "b.model>", "a.provider>", "b.provider>", "provider",
		"<b.provider", "<a.provider", "<b.model", "<a.model",
	}, log)
}

// refusing is a ProviderHook that ends every call with err.
type refusing struct{ err error }

func (r refusing) WrapProvider(hooks.ModelFunc) hooks.ModelFunc {
	return func(context.Context, *hooks.ModelCall) (*hooks.ModelResult, error) { return nil, r.err }
}

func TestAHooksErrorStopsTheCallAndIsReturnedAsItIs(t *testing.T) {
	refused := errors.New("refused by a hook")
	tests := []struct {
		name string
		hook any
	}{
		{name: "a model hook", hook: hooks.Funcs{BeforeModel: func(context.Context, *hooks.ModelCall) error { return refused }}},
		{name: "a provider hook", hook: refusing{err: refused}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &llmtest.Recorder{Model: llmtest.Reply("ok")}
			outer := &modelSpy{}
			text, resp, err := llm.Model{LLM: rec, EmptyRetries: 2}.Call(context.Background(), runWith(outer, tt.hook), llm.CallMeta{Node: "n"}, prompt("x"))
			assert.Same(t, refused, err)
			assert.NotErrorIs(t, err, llm.ErrModel, "a hook's error is no provider failure")
			assert.Empty(t, text)
			assert.Nil(t, resp)
			assert.Zero(t, rec.Calls(), "the provider is not called")
			calls := outer.calls()
			require.Len(t, calls, 1, "no retry")
			assert.Same(t, refused, calls[0].err)
		})
	}
}

func TestAProviderHookMayAnswerInsteadOfTheProviderAndTheCallIsStillMetered(t *testing.T) {
	rec := &llmtest.Recorder{Model: llmtest.Reply("live")}
	spy := &modelSpy{}
	m := llm.Model{LLM: rec, Meter: fixedMeter{}, Pricer: perToken{}}
	text, _, err := m.Call(context.Background(), runWith(spy, answering{resp: llmtest.TextResponse("from the journal")}), llm.CallMeta{Node: "n"}, prompt("x"))
	require.NoError(t, err)
	assert.Equal(t, "from the journal", text)
	assert.Zero(t, rec.Calls())
	res := spy.calls()[0].res
	assert.Equal(t, 100, res.Usage.PromptTokens)
	assert.Equal(t, 7, res.Usage.CompletionTokens)
	assert.InDelta(t, 107e-6, res.Usage.CostUSD, 1e-12)
	assert.Equal(t, 1, res.Attempts)
}

func TestAModelHookMayRewriteTheRequest(t *testing.T) {
	rec := &llmtest.Recorder{Model: llmtest.Reply("ok")}
	scrub := hooks.Funcs{BeforeModel: func(_ context.Context, call *hooks.ModelCall) error {
		out := make([]llms.MessageContent, len(call.Messages))
		for i, msg := range call.Messages {
			text := msg.Parts[0].(llms.TextContent).Text
			out[i] = llms.TextParts(msg.Role, strings.ReplaceAll(text, "ann@example.com", "[email]"))
		}
		call.Messages = out
		call.Options = append(call.Options, llms.WithTemperature(0.25))
		return nil
	}}
	msgs := prompt("mail ann@example.com")
	opts := make([]llms.CallOption, 1, 4) // room to append in place
	opts[0] = llms.WithMaxTokens(50)
	run := runWith(scrub)
	for range 2 {
		_, _, err := llm.Model{LLM: rec}.Call(context.Background(), run, llm.CallMeta{}, msgs, opts...)
		require.NoError(t, err)
	}
	reqs := rec.Requests()
	require.Len(t, reqs, 2)
	for _, r := range reqs {
		assert.Equal(t, "mail [email]\n", r.Text(), "the provider gets the rewritten messages")
		assert.Equal(t, 50, r.Options.MaxTokens)
		assert.InDelta(t, 0.25, r.Options.Temperature, 1e-9, "and the options a hook added")
	}
	assert.Equal(t, "mail ann@example.com\n", llmtest.Text(msgs), "the caller's messages are not changed")
	assert.Nil(t, opts[:cap(opts)][1], "nor the caller's options: each call's Options are a copy")
}

func TestMessagesTextListsTextAndToolResultsWithThePrefix(t *testing.T) {
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, "sys"),
		{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{llms.ToolCall{ID: "1", FunctionCall: &llms.FunctionCall{Name: "calc", Arguments: "{}"}}}},
		{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: "1", Name: "calc", Content: "42"}}},
		llms.TextParts(llms.ChatMessageTypeHuman, "q"),
	}
	assert.Equal(t, "sys\n42\nq\n", llm.MessagesText(msgs, ""))
	assert.Equal(t, "sys\nObservation: 42\nq\n", llm.MessagesText(msgs, "Observation: "))
	assert.Empty(t, llm.MessagesText(nil, "x"))
}

// countingMeter is fixedMeter, counting its measures.
type countingMeter struct {
	fixedMeter
	n *int
}

func (m countingMeter) Measure(msgs []llms.MessageContent, resp *llms.ContentResponse) (int, int, bool) {
	*m.n++
	return m.fixedMeter.Measure(msgs, resp)
}

// recorded is a ProviderHook that answers every call with a reply and
// the usage recorded with it, as the journal answers a replayed call.
type recorded struct{ usage hooks.Usage }

func (r recorded) WrapProvider(hooks.ModelFunc) hooks.ModelFunc {
	return func(context.Context, *hooks.ModelCall) (*hooks.ModelResult, error) {
		return &hooks.ModelResult{Response: llmtest.TextResponse("recorded"), Usage: r.usage, Measured: true}, nil
	}
}

// A call a ProviderHook answers with its recorded usage (a replayed
// journal entry) is not measured again: the ModelHooks see the recorded
// usage, and the tokenizer is not run.
func TestAProviderHooksRecordedUsageIsKeptUnmeasured(t *testing.T) {
	n := 0
	spy := &modelSpy{}
	want := hooks.Usage{PromptTokens: 1234, CompletionTokens: 56, CachedPromptTokens: 1000, Estimated: true, CostUSD: 0.25}
	m := llm.Model{LLM: llmtest.Reply("live"), Meter: countingMeter{n: &n}, Pricer: perToken{}}
	text, _, err := m.Call(context.Background(), runWith(spy, recorded{usage: want}), llm.CallMeta{Node: "n"}, prompt("x"))
	require.NoError(t, err)
	assert.Equal(t, "recorded", text)
	assert.Zero(t, n, "the reply is not measured")
	assert.Equal(t, want, spy.calls()[0].res.Usage)
}

// The metering hands the ProviderHooks its measure, which measures and
// prices a reply as the metering would; a hook that uses it and says so
// is not measured twice.
func TestTheProviderHooksMeasureAsTheMeteringDoes(t *testing.T) {
	n := 0
	var got hooks.Usage
	hook := providerFunc(func(next hooks.ModelFunc) hooks.ModelFunc {
		return func(ctx context.Context, call *hooks.ModelCall) (*hooks.ModelResult, error) {
			require.NotNil(t, call.Measure, "the metering sets Measure for the ProviderHooks")
			res, err := next(ctx, call)
			if err != nil {
				return nil, err
			}
			got = call.Measure(res.Response)
			return &hooks.ModelResult{Response: res.Response, Usage: got, Measured: true}, nil
		}
	})
	spy := &modelSpy{}
	m := llm.Model{LLM: llmtest.Reply("live"), Meter: countingMeter{n: &n}, Pricer: perToken{}}
	_, _, err := m.Call(context.Background(), runWith(spy, hook), llm.CallMeta{Node: "n"}, prompt("x"))
	require.NoError(t, err)
	assert.Equal(t, 1, n, "measured once, by the hook")
	assert.Equal(t, 100, got.PromptTokens)
	assert.Equal(t, 7, got.CompletionTokens)
	assert.InDelta(t, 107e-6, got.CostUSD, 1e-12)
	assert.Equal(t, got, spy.calls()[0].res.Usage)
	assert.Nil(t, spy.calls()[0].call.Measure, "the ModelHooks are outside the metering")
}

// providerFunc adapts a function to hooks.ProviderHook.
type providerFunc func(next hooks.ModelFunc) hooks.ModelFunc

func (f providerFunc) WrapProvider(next hooks.ModelFunc) hooks.ModelFunc { return f(next) }
