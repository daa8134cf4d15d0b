package respcache_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/planner-engine/planner/hooks"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/llm/respcache"
	"github.com/planner-engine/planner/redact"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// provider is a fake provider request: it answers with a reply naming
// the request's last message and counts its calls, per last message.
type provider struct {
	mu    sync.Mutex
	calls map[string]int
	total atomic.Int64
	// reply, when set, builds the reply instead.
	reply func(call *hooks.ModelCall, n int) (*llms.ContentResponse, error)
}

func newProvider() *provider { return &provider{calls: map[string]int{}} }

func (p *provider) next(_ context.Context, call *hooks.ModelCall) (*hooks.ModelResult, error) {
	last := llmtest.LastText(call.Messages)
	p.mu.Lock()
	p.calls[last]++
	n := p.calls[last]
	p.mu.Unlock()
	p.total.Add(1)
	if p.reply != nil {
		resp, err := p.reply(call, n)
		if err != nil {
			return nil, err
		}
		return &hooks.ModelResult{Response: resp}, nil
	}
	return &hooks.ModelResult{Response: llmtest.TextResponse(fmt.Sprintf("reply %d to %s", n, last))}, nil
}

func (p *provider) count() int { return int(p.total.Load()) }

// measure stands in for the metering's measure: 10 prompt tokens, a
// completion token per byte of the first choice, a cent per call.
func measure(resp *llms.ContentResponse) hooks.Usage {
	return hooks.Usage{PromptTokens: 10, CompletionTokens: len(resp.Choices[0].Content), CostUSD: 0.01}
}

func modelCall(text string, opts ...llms.CallOption) *hooks.ModelCall {
	return &hooks.ModelCall{Node: "act", Kind: "react", Provider: "openai", Model: "gpt-4o-mini",
		Messages: []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeSystem, "be brief"), llms.TextParts(llms.ChatMessageTypeHuman, text)},
		Options:  opts, Measure: measure}
}

func greedy() llms.CallOption { return llms.WithTemperature(0) }

func open(t testing.TB) *respcache.Cache {
	t.Helper()
	c, err := respcache.Open(t.TempDir())
	require.NoError(t, err)
	return c
}

func do(t testing.TB, h *respcache.RunHook, p *provider, call *hooks.ModelCall) *hooks.ModelResult {
	t.Helper()
	res, err := h.WrapProvider(p.next)(context.Background(), call)
	require.NoError(t, err)
	return res
}

// entries returns the entry files of c.
func entries(t testing.TB, c *respcache.Cache) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(c.Dir(), "*", "*.json"))
	require.NoError(t, err)
	return files
}

func TestMissThenHitAnswersTheStoredReplyAndUsage(t *testing.T) {
	c := open(t)
	p := newProvider()
	p.reply = func(*hooks.ModelCall, int) (*llms.ContentResponse, error) {
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{
			Content: "let me look", StopReason: "tool_calls", ReasoningContent: "think",
			ToolCalls:      []llms.ToolCall{llmtest.ToolCall("call_1", "search", `{"q":"go"}`)},
			GenerationInfo: map[string]any{"PromptTokens": 12, "model": "gpt-4o-mini-2024"},
		}}}, nil
	}

	first := c.ForRun(0, nil)
	live := do(t, first, p, modelCall("hi", greedy()))
	require.Equal(t, 1, p.count())
	assert.True(t, live.Measured, "the live reply is measured once, by the cache, for the metering")
	assert.Equal(t, measure(live.Response), live.Usage)
	assert.Equal(t, respcache.Stats{Misses: 1}, first.Stats())
	require.Len(t, entries(t, c), 1)

	again := c.ForRun(0, nil)
	cached := do(t, again, p, modelCall("hi", greedy()))
	assert.Equal(t, 1, p.count(), "a hit does not call the provider")
	assert.True(t, cached.Measured)
	assert.Equal(t, live.Usage, cached.Usage)
	assert.Equal(t, live.Response, cached.Response, "the reply comes back whole: content, stop reason, tool calls, reasoning, generation info")
	assert.Equal(t, respcache.Stats{Hits: 1, SavedUSD: 0.01, SavedTokens: 10 + len("let me look")}, again.Stats())
}

func TestEntryHoldsNoRequest(t *testing.T) {
	c := open(t)
	p := newProvider()
	p.reply = func(*hooks.ModelCall, int) (*llms.ContentResponse, error) { return llmtest.TextResponse("noted"), nil }
	do(t, c.ForRun(0, nil), p, modelCall("my password is hunter2-secret", greedy()))
	files := entries(t, c)
	require.Len(t, files, 1)
	b, err := os.ReadFile(files[0])
	require.NoError(t, err)
	assert.NotContains(t, string(b), "hunter2-secret", "only the reply is stored, never the request")
	var e map[string]any
	require.NoError(t, json.Unmarshal(b, &e))
	assert.EqualValues(t, respcache.FormatVersion, e["v"])
	assert.Equal(t, "gpt-4o-mini", e["model"])
	name := filepath.Base(files[0])
	assert.Equal(t, strings.TrimSuffix(name, ".json"), e["key"])
	assert.Equal(t, name[:2], filepath.Base(filepath.Dir(files[0])), "entries live under DIR/<first 2 hex>/")
}

func TestStoredRepliesAreScrubbed(t *testing.T) {
	const key = "sk-proj-abcdefghijklmnopqrstuvwx"
	c, err := respcache.Open(t.TempDir(), respcache.WithScrubber(redact.New(redact.WithEnviron(nil))))
	require.NoError(t, err)
	p := newProvider()
	p.reply = func(*hooks.ModelCall, int) (*llms.ContentResponse, error) {
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "your key is " + key,
			ToolCalls: []llms.ToolCall{llmtest.ToolCall("c1", "http", `{"auth":"Bearer `+key+`"}`)}}}}, nil
	}
	live := do(t, c.ForRun(0, nil), p, modelCall("q", greedy()))
	assert.Contains(t, live.Response.Choices[0].Content, key, "the live reply reaches the run as it came")
	files := entries(t, c)
	require.Len(t, files, 1)
	b, err := os.ReadFile(files[0])
	require.NoError(t, err)
	assert.NotContains(t, string(b), key)
	hit := do(t, c.ForRun(0, nil), p, modelCall("q", greedy()))
	assert.Equal(t, "your key is [REDACTED]", hit.Response.Choices[0].Content)
}

func TestGreedyCallsAreSharedAcrossRepeatsSampledOnesAreNot(t *testing.T) {
	tests := []struct {
		name   string
		opts   []llms.CallOption
		run    []respcache.RunOption
		shared bool
	}{
		{name: "temperature 0", opts: []llms.CallOption{llms.WithTemperature(0)}, shared: true},
		{name: "temperature 0.7", opts: []llms.CallOption{llms.WithTemperature(0.7)}},
		{name: "temperature unset", opts: nil},
		{name: "unset, model temperature 0", run: []respcache.RunOption{respcache.WithModelTemperature(0)}, shared: true},
		{name: "unset, model temperature 1", run: []respcache.RunOption{respcache.WithModelTemperature(1)}},
		{name: "0.7 overrides model temperature 0", opts: []llms.CallOption{llms.WithTemperature(0.7)},
			run: []respcache.RunOption{respcache.WithModelTemperature(0)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, p := open(t), newProvider()
			r0 := do(t, c.ForRun(0, nil, tc.run...), p, modelCall("q", tc.opts...))
			r1 := do(t, c.ForRun(1, nil, tc.run...), p, modelCall("q", tc.opts...))
			if tc.shared {
				assert.Equal(t, 1, p.count(), "repeat 1 is answered by repeat 0's reply")
				assert.Equal(t, r0.Response, r1.Response)
			} else {
				assert.Equal(t, 2, p.count(), "each repeat draws its own sample")
				assert.NotEqual(t, r0.Response, r1.Response)
			}
			// A re-run of either repeat hits.
			again := c.ForRun(1, nil, tc.run...)
			r1again := do(t, again, p, modelCall("q", tc.opts...))
			assert.Equal(t, r1.Response, r1again.Response)
			assert.Equal(t, 1, again.Stats().Hits)
		})
	}
}

func TestSampledRequestsOfOneRunAreDistinctSamplesReplayedInOrder(t *testing.T) {
	c, p := open(t), newProvider()
	sample := func(h *respcache.RunHook) []string {
		var out []string
		for range 3 {
			out = append(out, do(t, h, p, modelCall("vote", llms.WithTemperature(0.8))).Response.Choices[0].Content)
		}
		return out
	}
	first := sample(c.ForRun(0, nil))
	assert.Equal(t, []string{"reply 1 to vote", "reply 2 to vote", "reply 3 to vote"}, first, "self-consistency samples stay independent")
	rerun := c.ForRun(0, nil)
	assert.Equal(t, first, sample(rerun), "a re-run gets the same samples back, one each, in order")
	assert.Equal(t, 3, rerun.Stats().Hits)
	assert.Equal(t, 3, p.count())
}

func TestFailedCallIsNotStoredAndItsRetryTakesItsPlace(t *testing.T) {
	c, p := open(t), newProvider()
	boom := errors.New("HTTP 500")
	p.reply = func(_ *hooks.ModelCall, n int) (*llms.ContentResponse, error) {
		switch n {
		case 1:
			return nil, boom
		case 2:
			return &llms.ContentResponse{}, nil // no choice
		}
		return llmtest.TextResponse(fmt.Sprintf("sample %d", n)), nil
	}
	h := c.ForRun(0, nil)
	call := func() (*hooks.ModelResult, error) {
		return h.WrapProvider(p.next)(context.Background(), modelCall("q", llms.WithTemperature(1)))
	}
	_, err := call()
	require.ErrorIs(t, err, boom)
	res, err := call()
	require.NoError(t, err)
	assert.Empty(t, res.Response.Choices)
	assert.Empty(t, entries(t, c), "neither a failure nor a reply without choices is stored")
	res, err = call()
	require.NoError(t, err)
	assert.Equal(t, "sample 3", res.Response.Choices[0].Content)

	rerun := c.ForRun(0, nil)
	res, err = rerun.WrapProvider(p.next)(context.Background(), modelCall("q", llms.WithTemperature(1)))
	require.NoError(t, err)
	assert.Equal(t, "sample 3", res.Response.Choices[0].Content, "the retry took the failed calls' occurrence, so a re-run's first call hits it")
	assert.Equal(t, 3, p.count())
	assert.Equal(t, 3, h.Stats().Misses)
}

func TestCallWithoutMeasureIsStoredWithZeroUsage(t *testing.T) {
	c, p := open(t), newProvider()
	call := modelCall("q", greedy())
	call.Measure = nil
	res := do(t, c.ForRun(0, nil), p, call)
	assert.False(t, res.Measured, "with no measure the metering measures the live reply itself")
	call = modelCall("q", greedy())
	call.Measure = nil
	hit := c.ForRun(0, nil)
	res = do(t, hit, p, call)
	assert.Equal(t, 1, p.count())
	assert.True(t, res.Measured)
	assert.Equal(t, hooks.Usage{}, res.Usage)
	assert.Equal(t, respcache.Stats{Hits: 1}, hit.Stats())
}

func TestCorruptEntryIsAMissAndIsRewritten(t *testing.T) {
	damage := map[string]func(b []byte) []byte{
		"truncated":      func(b []byte) []byte { return b[:len(b)/2] },
		"empty":          func([]byte) []byte { return nil },
		"not json":       func([]byte) []byte { return []byte("\x00\xffgarbage") },
		"other version":  func(b []byte) []byte { return []byte(strings.Replace(string(b), `"v":1`, `"v":99`, 1)) },
		"other key":      func(b []byte) []byte { return []byte(strings.Replace(string(b), `"key":"`, `"key":"0`, 1)) },
		"without choice": func([]byte) []byte { return []byte(`{"v":1,"response":{"choices":[]}}`) },
	}
	for name, hurt := range damage {
		t.Run(name, func(t *testing.T) {
			c, p := open(t), newProvider()
			do(t, c.ForRun(0, nil), p, modelCall("q", greedy()))
			files := entries(t, c)
			require.Len(t, files, 1)
			good, err := os.ReadFile(files[0])
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(files[0], hurt(good), 0o600))

			h := c.ForRun(0, nil)
			res := do(t, h, p, modelCall("q", greedy()))
			assert.Equal(t, "reply 2 to q", res.Response.Choices[0].Content, "a damaged entry is a miss: the call is made live")
			assert.Equal(t, respcache.Stats{Misses: 1}, h.Stats())

			after := c.ForRun(0, nil)
			res = do(t, after, p, modelCall("q", greedy()))
			assert.Equal(t, "reply 2 to q", res.Response.Choices[0].Content, "the live reply overwrote the damaged entry")
			assert.Equal(t, 1, after.Stats().Hits)
			assert.Len(t, entries(t, c), 1)
		})
	}
}

func TestHitFeedsTheStreamingFunctions(t *testing.T) {
	c, p := open(t), newProvider()
	p.reply = func(*hooks.ModelCall, int) (*llms.ContentResponse, error) {
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "streamed answer", ReasoningContent: "because"}}}, nil
	}
	do(t, c.ForRun(0, nil), p, modelCall("q", greedy()))

	var chunks []string
	var reasoning, content []string
	stream := llms.WithStreamingFunc(func(_ context.Context, b []byte) error { chunks = append(chunks, string(b)); return nil })
	reason := llms.WithStreamingReasoningFunc(func(_ context.Context, r, b []byte) error {
		reasoning, content = append(reasoning, string(r)), append(content, string(b))
		return nil
	})
	h := c.ForRun(0, nil)
	res := do(t, h, p, modelCall("q", greedy(), stream, reason))
	assert.Equal(t, 1, h.Stats().Hits, "streaming functions are not keyed")
	assert.Equal(t, []string{"streamed answer"}, chunks, "the cached text streams once")
	assert.Equal(t, []string{"because"}, reasoning)
	assert.Equal(t, []string{"streamed answer"}, content)
	assert.Equal(t, "streamed answer", res.Response.Choices[0].Content)

	stop := errors.New("consumer gone")
	_, err := c.ForRun(0, nil).WrapProvider(p.next)(context.Background(),
		modelCall("q", greedy(), llms.WithStreamingFunc(func(context.Context, []byte) error { return stop })))
	require.ErrorIs(t, err, stop, "a streaming function's error fails the call, as a provider's stream does")
}

func TestHitEmitsATraceEvent(t *testing.T) {
	c, p := open(t), newProvider()
	var miss trace.Recorder
	do(t, c.ForRun(0, &miss), p, modelCall("q", greedy()))
	assert.Empty(t, miss.Events(), "a miss is not marked")

	var rec trace.Recorder
	call := modelCall("q", greedy())
	call.Node, call.Role = "plan", "finalize"
	do(t, c.ForRun(0, &rec), p, call)
	events := rec.OfKind(trace.KindInfo)
	require.Len(t, events, 1)
	e := events[0]
	assert.Equal(t, "plan", e.Node)
	assert.Equal(t, "hit", e.Data["cache"])
	assert.Equal(t, "plan", e.Data["node"])
	assert.Equal(t, "finalize", e.Data["role"])
	assert.InDelta(t, 0.01, e.Data["saved_usd"], 1e-12)
	assert.Equal(t, 10+len("reply 1 to q"), e.Data["saved_tokens"])
	key, _ := e.Data["key"].(string)
	require.Len(t, key, 12)
	files := entries(t, c)
	require.Len(t, files, 1)
	assert.True(t, strings.HasPrefix(filepath.Base(files[0]), key), "the event names the entry")
}

func TestStatsSumTheHitsOfARun(t *testing.T) {
	c, p := open(t), newProvider()
	for _, q := range []string{"a", "bb", "ccc"} {
		do(t, c.ForRun(0, nil), p, modelCall(q, greedy()))
	}
	h := c.ForRun(5, nil)
	for _, q := range []string{"a", "bb", "ccc", "new"} {
		do(t, h, p, modelCall(q, greedy()))
	}
	s := h.Stats()
	assert.Equal(t, 3, s.Hits)
	assert.Equal(t, 1, s.Misses)
	assert.InDelta(t, 0.03, s.SavedUSD, 1e-12)
	assert.Equal(t, 3*10+len("reply 1 to a")+len("reply 1 to bb")+len("reply 1 to ccc"), s.SavedTokens)
	assert.Equal(t, 4, p.count())
}

// meteredRun is an llm.Run whose calls pass hs.
type meteredRun struct{ hs *hooks.Set }

func (r meteredRun) TaskID() string    { return "t1" }
func (r meteredRun) Hooks() *hooks.Set { return r.hs }

type fixedMeter struct{}

func (fixedMeter) Measure(_ []llms.MessageContent, resp *llms.ContentResponse) (int, int, bool) {
	return 100, len(resp.Choices[0].Content), false
}

type perToken struct{}

func (perToken) Cost(p, c int) (float64, bool) { return float64(p+c) / 1000, true }

func TestThroughTheMeteringAHitCostsWhatTheLiveCallDid(t *testing.T) {
	c := open(t)
	var calls atomic.Int64
	model := llm.Model{Provider: "openai", Name: "gpt-4o-mini", Meter: fixedMeter{}, Pricer: perToken{},
		LLM: llmtest.Func(func(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
			calls.Add(1)
			return llmtest.TextResponse("forty-two"), nil
		})}
	var usages []hooks.Usage
	usage := hooks.Funcs{AfterModel: func(_ context.Context, _ *hooks.ModelCall, res *hooks.ModelResult, err error) {
		if err == nil {
			usages = append(usages, res.Usage)
		}
	}}
	msgs := []llms.MessageContent{llm.Text(llms.ChatMessageTypeHuman, "the answer?")}
	var hooksOf []*respcache.RunHook
	for range 2 {
		h := c.ForRun(0, nil)
		hooksOf = append(hooksOf, h)
		text, _, err := model.Call(context.Background(), meteredRun{hooks.NewSet(usage, h)}, llm.CallMeta{Node: "cot", Kind: "cot"}, msgs, llms.WithTemperature(0))
		require.NoError(t, err)
		assert.Equal(t, "forty-two", text)
	}
	assert.EqualValues(t, 1, calls.Load())
	want := hooks.Usage{PromptTokens: 100, CompletionTokens: len("forty-two"), CostUSD: float64(100+len("forty-two")) / 1000}
	assert.Equal(t, []hooks.Usage{want, want}, usages, "the metering keeps the stored usage of a hit")
	assert.Equal(t, respcache.Stats{Misses: 1}, hooksOf[0].Stats())
	assert.Equal(t, respcache.Stats{Hits: 1, SavedUSD: want.CostUSD, SavedTokens: want.PromptTokens + want.CompletionTokens}, hooksOf[1].Stats())
}

func TestConcurrentRunsShareEntries(t *testing.T) {
	dir := t.TempDir()
	// Two Caches on one directory stand in for two processes.
	c1, err := respcache.Open(dir)
	require.NoError(t, err)
	c2, err := respcache.Open(dir)
	require.NoError(t, err)
	perCache := []*provider{newProvider(), newProvider()}
	const runs, questions = 16, 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	var hits, misses int
	for r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			i := r % 2
			c := []*respcache.Cache{c1, c2}[i]
			h := c.ForRun(0, nil)
			for q := range questions {
				// Half the questions are asked by every run, half by this run alone.
				text := fmt.Sprintf("shared %d", q)
				if q%2 == 1 {
					text = fmt.Sprintf("own %d of run %d", q, r)
				}
				res, err := h.WrapProvider(perCache[i].next)(context.Background(), modelCall(text, greedy()))
				if !assert.NoError(t, err) {
					return
				}
				assert.True(t, strings.HasSuffix(res.Response.Choices[0].Content, " to "+text), "every call gets the reply to its own request")
			}
			s := h.Stats()
			mu.Lock()
			hits, misses = hits+s.Hits, misses+s.Misses
			mu.Unlock()
		}()
	}
	wg.Wait()
	assert.Equal(t, runs*questions, hits+misses)
	for i, p := range perCache {
		for text, n := range p.calls {
			assert.Equal(t, 1, n, "cache %d made %q live %d times: one process makes a request once", i, text, n)
		}
	}
	assert.Len(t, entries(t, c1), questions/2+runs*questions/2)
	tmp, err := filepath.Glob(filepath.Join(dir, "*", ".tmp-*"))
	require.NoError(t, err)
	assert.Empty(t, tmp, "no temporary file is left behind")
	// Every entry is whole: a run that asks everything again hits every time.
	h := c2.ForRun(0, nil)
	for q := range questions {
		do(t, h, newProvider(), modelCall(fmt.Sprintf("shared %d", q), greedy()))
	}
	assert.Equal(t, respcache.Stats{Hits: questions / 2, Misses: questions / 2}, respcache.Stats{Hits: h.Stats().Hits, Misses: h.Stats().Misses})
}

func TestCallWaitingForAnIdenticalCallEndsWithItsContext(t *testing.T) {
	c := open(t)
	started, finish := make(chan struct{}), make(chan struct{})
	slow := func(_ context.Context, _ *hooks.ModelCall) (*hooks.ModelResult, error) {
		close(started)
		<-finish
		return &hooks.ModelResult{Response: llmtest.TextResponse("late")}, nil
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.ForRun(0, nil).WrapProvider(slow)(context.Background(), modelCall("q", greedy()))
		done <- err
	}()
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := newProvider()
	_, err := c.ForRun(1, nil).WrapProvider(p.next)(ctx, modelCall("q", greedy()))
	require.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, p.count())
	close(finish)
	require.NoError(t, <-done)
	res := do(t, c.ForRun(2, nil), p, modelCall("q", greedy()))
	assert.Equal(t, "late", res.Response.Choices[0].Content)
}

func TestOpenRefusesUnusableDirectories(t *testing.T) {
	_, err := respcache.Open("  ")
	require.ErrorIs(t, err, respcache.ErrDir)
	assert.Contains(t, err.Error(), "no directory given")

	file := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err = respcache.Open(file)
	require.ErrorIs(t, err, respcache.ErrDir)
	assert.Contains(t, err.Error(), "is a file")

	nested := filepath.Join(t.TempDir(), "a", "b")
	c, err := respcache.Open(nested)
	require.NoError(t, err, "a missing directory is created")
	assert.DirExists(t, c.Dir())
	left, err := os.ReadDir(c.Dir())
	require.NoError(t, err)
	assert.Empty(t, left, "the writability probe is removed")
}
