package scripted_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/middleware"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

func ask(ctx context.Context, m llms.Model, prompt string, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	return m.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, prompt)}, opts...)
}

func caller(node, kind, role string) context.Context {
	return llm.WithCallMeta(context.Background(), llm.CallMeta{Node: node, Kind: kind, Role: role})
}

func TestStrictScriptMustMatchInOrderAndNamesTheUnexpectedCall(t *testing.T) {
	m, err := scripted.New(scripted.Script{Replies: []scripted.Reply{
		{Node: "plan", Text: "first"},
		{Node: "act", Contains: "Paris", Text: "second"},
	}})
	require.NoError(t, err)
	resp, err := ask(caller("plan", "planner", ""), m, "anything")
	require.NoError(t, err)
	assert.Equal(t, "first", resp.Choices[0].Content)

	_, err = ask(caller("act", "react", ""), m, "about London")
	require.ErrorIs(t, err, scripted.ErrUnexpectedCall)
	assert.Contains(t, err.Error(), "act (react)")
	assert.Contains(t, err.Error(), "about London")
	assert.Contains(t, err.Error(), "1 reply left; strict order: the next one, reply 2, wants node act and a prompt containing \"Paris\"")

	resp, err = ask(caller("act", "react", ""), m, "about Paris")
	require.NoError(t, err)
	assert.Equal(t, "second", resp.Choices[0].Content)
	assert.Equal(t, 0, m.Remaining())
	assert.Equal(t, 2, m.Calls())
}

func TestNonStrictMatchesAnywhereAndFallsBack(t *testing.T) {
	f := false
	m, err := scripted.New(scripted.Script{Strict: &f, Fallback: "I don't know", Replies: []scripted.Reply{
		{Role: "finalize", Text: "final", Times: 2},
		{Regex: `step \d+`, Text: "stepped"},
	}})
	require.NoError(t, err)
	for _, tc := range []struct {
		ctx    context.Context
		prompt string
		want   string
	}{
		{caller("a", "react", ""), "do step 3", "stepped"},
		{caller("a", "react", "finalize"), "x", "final"},
		{caller("a", "react", "finalize"), "x", "final"},
		{caller("a", "react", "finalize"), "x", "I don't know"},
	} {
		resp, err := ask(tc.ctx, m, tc.prompt)
		require.NoError(t, err)
		assert.Equal(t, tc.want, resp.Choices[0].Content)
	}
}

func TestStopWordsCutLikeARealAPIUnlessIgnored(t *testing.T) {
	text := "Thought: t\nAction: search\nAction Input: x\nObservation: invented"
	m := scripted.Texts(text)
	resp, err := ask(context.Background(), m, "q", llms.WithStopWords([]string{"\nObservation:"}))
	require.NoError(t, err)
	assert.Equal(t, "Thought: t\nAction: search\nAction Input: x", resp.Choices[0].Content)

	ignoring, err := scripted.New(scripted.Script{IgnoreStop: true, Replies: []scripted.Reply{{Text: text}}})
	require.NoError(t, err)
	resp, err = ask(context.Background(), ignoring, "q", llms.WithStopWords([]string{"\nObservation:"}))
	require.NoError(t, err)
	assert.Equal(t, text, resp.Choices[0].Content)
}

func TestToolCallsAndSplitChoices(t *testing.T) {
	m, err := scripted.New(scripted.Script{Replies: []scripted.Reply{
		{Text: "thinking", ToolCalls: []scripted.ToolCall{{Name: "search", Arguments: map[string]any{"query": "Eiffel"}}}, SplitChoices: true},
		{ToolCalls: []scripted.ToolCall{{ID: "c9", Name: "calculator", Arguments: `{"expression":"2+2"}`}}},
	}})
	require.NoError(t, err)
	resp, err := ask(context.Background(), m, "q")
	require.NoError(t, err)
	require.Len(t, resp.Choices, 2)
	assert.Empty(t, resp.Choices[0].ToolCalls)
	assert.JSONEq(t, `{"query":"Eiffel"}`, resp.Choices[1].ToolCalls[0].FunctionCall.Arguments)
	assert.Equal(t, "call_1", resp.Choices[1].ToolCalls[0].ID)

	resp, err = ask(context.Background(), m, "q")
	require.NoError(t, err)
	require.Len(t, resp.Choices, 1)
	assert.Equal(t, "c9", resp.Choices[0].ToolCalls[0].ID)
}

func TestScriptedErrorsAndStreaming(t *testing.T) {
	m, err := scripted.New(scripted.Script{Replies: []scripted.Reply{{Error: "HTTP 500"}, {Text: "streamed reply text"}}})
	require.NoError(t, err)
	_, err = ask(context.Background(), m, "q")
	require.ErrorIs(t, err, scripted.ErrScriptedFailure)

	var chunks []string
	resp, err := ask(context.Background(), m, "q", llms.WithStreamingFunc(func(_ context.Context, b []byte) error {
		chunks = append(chunks, string(b))
		return nil
	}))
	require.NoError(t, err)
	assert.Greater(t, len(chunks), 1)
	joined := ""
	for _, c := range chunks {
		joined += c
	}
	assert.Equal(t, resp.Choices[0].Content, joined)
}

func TestLoadValidatesTheScriptFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	_, err := scripted.Load(write("typo.yaml", "replies:\n  - txt: hi\n"))
	require.ErrorIs(t, err, scripted.ErrBadScript)
	_, err = scripted.Load(write("empty.yaml", "replies:\n  - node: a\n"))
	require.ErrorIs(t, err, scripted.ErrBadScript)
	_, err = scripted.Load(write("re.yaml", "replies:\n  - regex: '('\n    text: x\n"))
	require.ErrorIs(t, err, scripted.ErrBadScript)
	_, err = scripted.Load(write("bad.jsonl", "{\"text\":\"a\"}\n{oops\n"))
	require.ErrorIs(t, err, scripted.ErrBadScript)
	assert.Contains(t, err.Error(), "bad.jsonl:2")
	m, err := scripted.Load(write("ok.jsonl", "{\"text\":\"a\"}\n\n{\"node\":\"x\",\"text\":\"b\"}\n"))
	require.NoError(t, err)
	assert.Equal(t, 2, m.Remaining())
	_, err = scripted.Load(filepath.Join(dir, "missing.yaml"))
	require.ErrorIs(t, err, scripted.ErrBadScript)
}

func TestAnUnexpectedCallNamesTheScriptFileAndWhy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "demo.yaml")
	require.NoError(t, os.WriteFile(path, []byte("replies:\n  - node: cot\n    contains: \"17 rows\"\n    text: \"Answer: 1173\"\n"), 0o644))
	m, err := scripted.Load(path)
	require.NoError(t, err)
	_, err = ask(caller("answer", "direct", ""), m, "What is the capital of France?")
	require.ErrorIs(t, err, scripted.ErrUnexpectedCall)
	assert.Contains(t, err.Error(), path+` has no reply for call 1 (1 reply left; strict order: the next one, reply 1, wants node cot and a prompt containing "17 rows")`)
	assert.Contains(t, err.Error(), "call from node answer (direct)")
	assert.ErrorIs(t, err, middleware.ErrPermanent, "the call would fail again: no retry")

	_, err = ask(caller("cot", "cot", ""), m, "17 rows of 23")
	require.NoError(t, err)
	_, err = ask(caller("cot", "cot", ""), m, "17 rows of 23")
	require.ErrorIs(t, err, scripted.ErrUnexpectedCall)
	assert.Contains(t, err.Error(), path+" has no reply for call 2 (every reply is used up)")

	loose := false
	m, err = scripted.New(scripted.Script{Strict: &loose, Replies: []scripted.Reply{{Node: "a", Text: "x"}, {Node: "b", Text: "y"}}})
	require.NoError(t, err)
	_, err = ask(caller("c", "cot", ""), m, "q")
	assert.ErrorContains(t, err, "the script has no reply for call 1 (none of the 2 replies left matches)")
}

func TestConcurrentCallsEachGetOneReply(t *testing.T) {
	f := false
	m, err := scripted.New(scripted.Script{Strict: &f, Replies: []scripted.Reply{{Text: "ok", Times: 50}}})
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, 60)
	for i := 0; i < 60; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := ask(context.Background(), m, "q")
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	failed := 0
	for err := range errs {
		if err != nil {
			failed++
		}
	}
	assert.Equal(t, 10, failed)
	assert.Equal(t, 50, m.Calls())
}
