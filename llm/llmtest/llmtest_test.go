package llmtest_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// Every model of the package is an llms.Model.
var (
	_ llms.Model = llmtest.Func(nil)
	_ llms.Model = (*llmtest.Fixed)(nil)
	_ llms.Model = (*llmtest.Sequence)(nil)
	_ llms.Model = llmtest.Echo{}
	_ llms.Model = (*llmtest.Recorder)(nil)
	_ llms.Model = (*llmtest.Gate)(nil)
	_ llms.Model = (*llmtest.Latency)(nil)
	_ llms.Model = (*llmtest.Stream)(nil)
)

type ctxKey struct{}

func human(text string) []llms.MessageContent {
	return []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, text)}
}

// answer makes one call and returns its first choice's content.
func answer(t *testing.T, m llms.Model, msgs []llms.MessageContent, opts ...llms.CallOption) string {
	t.Helper()
	resp, err := m.GenerateContent(t.Context(), msgs, opts...)
	require.NoError(t, err)
	require.Len(t, resp.Choices, 1)
	return resp.Choices[0].Content
}

func TestFuncIsCalledWithTheCall(t *testing.T) {
	var got llms.CallOptions
	var gotMsgs []llms.MessageContent
	var gotValue any
	f := llmtest.Func(func(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
		got, gotMsgs, gotValue = llmtest.Options(opts...), msgs, ctx.Value(ctxKey{})
		return llmtest.TextResponse("from the func"), nil
	})
	ctx := context.WithValue(t.Context(), ctxKey{}, "v")
	resp, err := f.GenerateContent(ctx, human("hi"), llms.WithJSONMode(), llms.WithSeed(7))
	require.NoError(t, err)
	assert.Equal(t, "from the func", resp.Choices[0].Content)
	assert.True(t, got.JSONMode)
	assert.Equal(t, 7, got.Seed)
	assert.Equal(t, human("hi"), gotMsgs)
	assert.Equal(t, "v", gotValue)

	out, err := f.Call(t.Context(), "prompt")
	require.NoError(t, err)
	assert.Equal(t, "from the func", out)
	assert.Equal(t, human("prompt"), gotMsgs, "Call goes through GenerateContent")
}

func TestFixedAnswersEveryCallWithACopy(t *testing.T) {
	m := llmtest.Respond(&llms.ContentResponse{Choices: []*llms.ContentChoice{{
		Content: "ok", GenerationInfo: map[string]any{"model": "m"},
		ToolCalls: []llms.ToolCall{llmtest.ToolCall("c1", "search", `{"q":"x"}`)},
	}}})
	first, err := m.GenerateContent(t.Context(), human("a"))
	require.NoError(t, err)
	first.Choices[0].Content = "changed"
	first.Choices[0].GenerationInfo["model"] = "changed"
	first.Choices[0].ToolCalls[0].FunctionCall.Name = "changed"
	second, err := m.GenerateContent(t.Context(), human("b"))
	require.NoError(t, err)
	assert.Equal(t, "ok", second.Choices[0].Content)
	assert.Equal(t, "m", second.Choices[0].GenerationInfo["model"])
	assert.Equal(t, "search", second.Choices[0].ToolCalls[0].FunctionCall.Name)
	assert.Equal(t, 2, m.Calls())

	assert.Equal(t, "hello", answer(t, llmtest.Reply("hello"), human("x")))
	assert.Empty(t, answer(t, &llmtest.Fixed{}, human("x")), "no response: an empty reply")

	tr, err := llmtest.ToolReply("Thought: look", llmtest.ToolCall("c1", "search", `{}`)).GenerateContent(t.Context(), human("x"))
	require.NoError(t, err)
	assert.Equal(t, "Thought: look", tr.Choices[0].Content)
	assert.Equal(t, "tool_calls", tr.Choices[0].StopReason)
	assert.Equal(t, []llms.ToolCall{{ID: "c1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "search", Arguments: "{}"}}}, tr.Choices[0].ToolCalls)

	boom := errors.New("boom")
	failing := llmtest.Fail(boom)
	_, err = failing.GenerateContent(t.Context(), human("x"))
	require.ErrorIs(t, err, boom)
	_, err = failing.GenerateContent(t.Context(), human("x"))
	require.ErrorIs(t, err, boom)
	assert.Equal(t, 2, failing.Calls())
}

func TestSequencePlaysItsModelsThenRepeatsTheLast(t *testing.T) {
	s := llmtest.Replies("one", "two")
	assert.Equal(t, "one", answer(t, s, human("x")))
	assert.Equal(t, "two", answer(t, s, human("x")))
	assert.Equal(t, "two", answer(t, s, human("x")))
	assert.Equal(t, 3, s.Calls())

	boom := errors.New("503")
	flaky := llmtest.FailTimes(2, boom, llmtest.Reply("ok"))
	for range 2 {
		_, err := flaky.GenerateContent(t.Context(), human("x"))
		require.ErrorIs(t, err, boom)
	}
	assert.Equal(t, "ok", answer(t, flaky, human("x")))
	assert.Equal(t, "ok", answer(t, flaky, human("x")))

	mixed := llmtest.Seq(llmtest.ToolReply("", llmtest.ToolCall("c1", "calc", `{"x":1}`)), llmtest.Reply("done"))
	resp, err := mixed.GenerateContent(t.Context(), human("x"))
	require.NoError(t, err)
	require.Len(t, resp.Choices[0].ToolCalls, 1)
	assert.Equal(t, "calc", resp.Choices[0].ToolCalls[0].FunctionCall.Name)
	assert.Equal(t, "done", answer(t, mixed, human("x")))

	assert.Empty(t, answer(t, llmtest.Seq(), human("x")))
}

func TestSequenceGivesConcurrentCallsATurnEach(t *testing.T) {
	const n = 50
	var texts []string
	for i := range n {
		texts = append(texts, fmt.Sprint(i))
	}
	s := llmtest.Replies(texts...)
	got := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			resp, err := s.GenerateContent(context.Background(), human("x"))
			if assert.NoError(t, err) {
				got[i] = resp.Choices[0].Content
			}
		})
	}
	wg.Wait()
	assert.ElementsMatch(t, texts, got)
}

func TestEchoAnswersTheLastMessage(t *testing.T) {
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, "sys"),
		llms.TextParts(llms.ChatMessageTypeHuman, "first", "second"),
	}
	assert.Equal(t, "echo: first\nsecond", answer(t, llmtest.Echo{Prefix: "echo: "}, msgs))
	assert.Empty(t, answer(t, llmtest.Echo{}, nil))
}

func TestRecorderKeepsRequestsOptionsAndMeta(t *testing.T) {
	rec := &llmtest.Recorder{Model: llmtest.Reply("ok"), Meta: func(ctx context.Context) any { return ctx.Value(ctxKey{}) }}
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, "be brief"),
		llms.TextParts(llms.ChatMessageTypeHuman, "question"),
		{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: "c1", Name: "calc", Content: "42"}}},
	}
	ctx := context.WithValue(t.Context(), ctxKey{}, "caller-1")
	_, err := rec.GenerateContent(ctx, msgs, llms.WithJSONMode(), llms.WithTools([]llms.Tool{{Type: "function", Function: &llms.FunctionDefinition{Name: "calc"}}}))
	require.NoError(t, err)
	msgs[0] = llms.TextParts(llms.ChatMessageTypeSystem, "changed by the caller")
	_, err = rec.Call(t.Context(), "second")
	require.NoError(t, err)

	reqs := rec.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, 2, rec.Calls())
	assert.Equal(t, "be brief\nquestion\n42\n", reqs[0].Text(), "the messages as sent")
	assert.True(t, reqs[0].Options.JSONMode)
	require.Len(t, reqs[0].Options.Tools, 1)
	assert.Equal(t, "calc", reqs[0].Options.Tools[0].Function.Name)
	assert.Equal(t, "caller-1", reqs[0].Meta)
	assert.Equal(t, "second\n", reqs[1].Text())
	assert.False(t, reqs[1].Options.JSONMode)
	assert.Nil(t, reqs[1].Meta)

	reqs[0].Meta = "changed"
	assert.Equal(t, "caller-1", rec.Requests()[0].Meta, "Requests returns a copy")

	empty := &llmtest.Recorder{}
	assert.Empty(t, answer(t, empty, human("x")), "no model: an empty reply")
}

func TestRecorderCountsCallsInFlightWhileTheyRun(t *testing.T) {
	gate := &llmtest.Gate{Model: llmtest.Reply("ok")}
	rec := &llmtest.Recorder{Model: gate}
	const n = 4
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			_, err := rec.GenerateContent(context.Background(), human("x"))
			assert.NoError(t, err)
		})
	}
	require.Eventually(t, func() bool { return gate.Waiting() == n }, 5*time.Second, time.Millisecond)
	assert.Equal(t, n, rec.InFlight())
	assert.Len(t, rec.Requests(), n, "requests are readable while the calls run")
	gate.Open()
	wg.Wait()
	assert.Equal(t, 0, rec.InFlight())
	assert.Equal(t, n, rec.Peak())

	panicky := &llmtest.Recorder{Model: llmtest.Func(func(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
		panic("provider bug")
	})}
	assert.Panics(t, func() { _, _ = panicky.GenerateContent(t.Context(), human("x")) })
	assert.Equal(t, 0, panicky.InFlight(), "a panicking call is no longer in flight")
}

func TestGateHoldsCallsUntilReleasedOrCanceled(t *testing.T) {
	started := make(chan struct{}, 1)
	blocked := &llmtest.Gate{Started: started}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := blocked.GenerateContent(ctx, human("x"))
		done <- err
	}()
	<-started
	select {
	case err := <-done:
		t.Fatalf("the call went through a closed gate: %v", err)
	case <-time.After(10 * time.Millisecond):
	}
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	assert.Equal(t, 0, blocked.Waiting())

	g := &llmtest.Gate{Model: llmtest.Reply("let go")}
	g.Release(1) // a release given before the call is kept for it
	assert.Equal(t, "let go", answer(t, g, human("x")))

	results := make(chan string, 3)
	for range 3 {
		go func() {
			resp, err := g.GenerateContent(context.Background(), human("x"))
			if err != nil {
				results <- err.Error()
				return
			}
			results <- resp.Choices[0].Content
		}()
	}
	require.Eventually(t, func() bool { return g.Waiting() == 3 }, 5*time.Second, time.Millisecond)
	g.Release(1)
	assert.Equal(t, "let go", <-results)
	require.Eventually(t, func() bool { return g.Waiting() == 2 }, 5*time.Second, time.Millisecond)
	assert.Empty(t, results, "one release lets one call go")
	g.Open()
	assert.Equal(t, "let go", <-results)
	assert.Equal(t, "let go", <-results)
	assert.Equal(t, "let go", answer(t, g, human("x")), "an open gate holds nothing")

	g.Hold()
	ctx, cancel = context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	_, err := g.GenerateContent(ctx, human("x"))
	require.ErrorIs(t, err, context.DeadlineExceeded, "Hold closes the gate again")

	shared := &llmtest.Gate{Model: llmtest.Reply("own")}
	other := shared.Wrap(llmtest.Reply("other"))
	done = make(chan error, 1)
	go func() {
		resp, err := other.GenerateContent(context.Background(), human("x"))
		if err == nil && resp.Choices[0].Content != "other" {
			err = fmt.Errorf("the wrapped model answered %q", resp.Choices[0].Content)
		}
		done <- err
	}()
	require.Eventually(t, func() bool { return shared.Waiting() == 1 }, 5*time.Second, time.Millisecond, "a wrapped model's call waits at the gate")
	shared.Release(1)
	require.NoError(t, <-done)
	shared.Release(1)
	assert.Equal(t, "own", answer(t, shared, human("x")))

	empty := &llmtest.Gate{}
	empty.Open()
	assert.Empty(t, answer(t, empty, human("x")), "no model: an empty reply")
}

func TestLatencyAnswersAfterItsDelay(t *testing.T) {
	m := &llmtest.Latency{Model: llmtest.Reply("late"), Delay: 20 * time.Millisecond}
	began := time.Now()
	assert.Equal(t, "late", answer(t, m, human("x")))
	assert.GreaterOrEqual(t, time.Since(began), 20*time.Millisecond)

	slow := &llmtest.Latency{Model: llmtest.Reply("never"), Delay: time.Hour}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	_, err := slow.GenerateContent(ctx, human("x"))
	require.ErrorIs(t, err, context.DeadlineExceeded)

	assert.Empty(t, answer(t, &llmtest.Latency{}, human("x")), "no model: an empty reply")
}

func TestStreamWritesItsChunks(t *testing.T) {
	var got []string
	stream := llms.WithStreamingFunc(func(_ context.Context, c []byte) error {
		got = append(got, string(c))
		return nil
	})
	s := &llmtest.Stream{Chunks: []string{"Hel", "lo"}}
	assert.Equal(t, "Hello", answer(t, s, human("x"), stream))
	assert.Equal(t, []string{"Hel", "lo"}, got)
	assert.Equal(t, "Hello", answer(t, s, human("x")), "a call without a streaming function gets the reply")

	stop := errors.New("sink closed")
	_, err := s.GenerateContent(t.Context(), human("x"), llms.WithStreamingFunc(func(context.Context, []byte) error { return stop }))
	require.ErrorIs(t, err, stop)

	got = nil
	eof := errors.New("unexpected EOF")
	broken := &llmtest.Stream{Chunks: []string{"Thought: hal"}, Err: eof}
	_, err = broken.GenerateContent(t.Context(), human("x"), stream)
	require.ErrorIs(t, err, eof)
	assert.Equal(t, []string{"Thought: hal"}, got, "the chunks before the break are streamed")
}

func TestStreamRunsBeforeEachChunkAtItsPace(t *testing.T) {
	var at []int
	var times []time.Time
	s := &llmtest.Stream{Chunks: []string{"a", "b", "c"}, Interval: 5 * time.Millisecond, Before: func(_ context.Context, i int) error {
		at = append(at, i)
		times = append(times, time.Now())
		return nil
	}}
	began := time.Now()
	assert.Equal(t, "abc", answer(t, s, human("x")))
	assert.Equal(t, []int{0, 1, 2}, at, "Before runs even without a streaming function")
	require.Len(t, times, 3)
	assert.GreaterOrEqual(t, times[0].Sub(began), 5*time.Millisecond)
	assert.GreaterOrEqual(t, times[2].Sub(times[1]), 5*time.Millisecond)

	held := errors.New("held")
	var streamed []string
	_, err := (&llmtest.Stream{Chunks: []string{"a", "b"}, Before: func(_ context.Context, i int) error {
		if i == 1 {
			return held
		}
		return nil
	}}).GenerateContent(t.Context(), human("x"), llms.WithStreamingFunc(func(_ context.Context, c []byte) error {
		streamed = append(streamed, string(c))
		return nil
	}))
	require.ErrorIs(t, err, held)
	assert.Equal(t, []string{"a"}, streamed)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = (&llmtest.Stream{Chunks: []string{"a"}, Interval: time.Hour}).GenerateContent(ctx, human("x"))
	require.ErrorIs(t, err, context.Canceled)
}

func TestTextAndClone(t *testing.T) {
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, "sys"),
		{Role: llms.ChatMessageTypeHuman, Parts: []llms.ContentPart{llms.TextContent{Text: "look"}, llms.ImageURLPart("https://example.com/a.png")}},
		{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{llmtest.ToolCall("c1", "calc", "{}")}},
		{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: "c1", Content: "42"}}},
	}
	assert.Equal(t, "sys\nlook\n42\n", llmtest.Text(msgs))
	assert.Equal(t, "42", llmtest.LastText(msgs))
	assert.Empty(t, llmtest.LastText(nil))

	assert.Nil(t, llmtest.Clone(nil))
	orig := &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "a", FuncCall: &llms.FunctionCall{Name: "f"}}, nil}}
	c := llmtest.Clone(orig)
	assert.Equal(t, orig, c)
	c.Choices[0].FuncCall.Name = "g"
	assert.Equal(t, "f", orig.Choices[0].FuncCall.Name)
}
