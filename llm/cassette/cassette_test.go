package cassette

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// scriptedModel answers each prompt with a numbered answer derived from
// the last message's text (the n-th call with a text gets answer n),
// fails on the prompt failOn (when set), and adds extra to each reply's
// GenerationInfo.
func scriptedModel(failOn string, extra map[string]any) llmtest.Func {
	var mu sync.Mutex
	counts := map[string]int{}
	return func(_ context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
		last := llmtest.LastText(msgs)
		if failOn != "" && last == failOn {
			return nil, fmt.Errorf("API returned unexpected status code: 503: overloaded while answering %q", last)
		}
		mu.Lock()
		counts[last]++
		n := counts[last]
		mu.Unlock()
		info := map[string]any{"PromptTokens": len(last), "CompletionTokens": n, "score": 0.5}
		for k, v := range extra {
			info[k] = v
		}
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{
			Content:    fmt.Sprintf("answer %d to %s", n, last),
			StopReason: "stop",
			ToolCalls: []llms.ToolCall{{
				ID: "call_" + fmt.Sprint(n), Type: "function",
				FunctionCall: &llms.FunctionCall{Name: "search", Arguments: `{"q":"` + last + `"}`},
			}},
			FuncCall:         &llms.FunctionCall{Name: "search", Arguments: `{"q":"` + last + `"}`},
			ReasoningContent: "thinking",
			GenerationInfo:   info,
		}}}, nil
	}
}

// conversation builds a multi-turn request using every part type.
func conversation(question string) []llms.MessageContent {
	return []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, "You are a careful agent.\nThink step by step.\nAnswer briefly."),
		{Role: llms.ChatMessageTypeHuman, Parts: []llms.ContentPart{
			llms.TextContent{Text: "Look at this"}, llms.ImageURLWithDetailPart("https://example.com/a.png", "low"),
			llms.BinaryPart("image/png", []byte{0x89, 'P', 'N', 'G'}),
		}},
		{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{llms.ToolCall{
			ID: "call_0", Type: "function", FunctionCall: &llms.FunctionCall{Name: "lookup", Arguments: `{"x":1}`},
		}}},
		{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: "call_0", Name: "lookup", Content: "42"}}},
		llms.TextParts(llms.ChatMessageTypeHuman, question),
	}
}

func callOptions() []llms.CallOption {
	return []llms.CallOption{
		llms.WithModel("gpt-4o-mini"), llms.WithTemperature(0.2), llms.WithMaxTokens(256),
		llms.WithStopWords([]string{"Observation:"}), llms.WithJSONMode(),
		llms.WithTools([]llms.Tool{{Type: "function", Function: &llms.FunctionDefinition{
			Name: "search", Description: "web search",
			Parameters: map[string]any{"type": "object", "properties": map[string]any{
				"q": map[string]any{"type": "string"}, "password": map[string]any{"type": "string"},
			}},
		}}}),
		llms.WithToolChoice("auto"),
	}
}

func record(t *testing.T, model llms.Model, opts []Option, run func(m llms.Model)) []byte {
	t.Helper()
	var buf bytes.Buffer
	rec := NewRecorder(model, &buf, opts...)
	run(rec)
	require.NoError(t, rec.Close())
	return buf.Bytes()
}

var testEnv = WithEnviron([]string{"HOME=/root"})

func TestReplayReturnsTheRecordedResponses(t *testing.T) {
	questions := []string{"first?", "second?", "first?"}
	var want []*llms.ContentResponse
	data := record(t, scriptedModel("", nil), []Option{testEnv}, func(m llms.Model) {
		for _, q := range questions {
			resp, err := m.GenerateContent(t.Context(), conversation(q), callOptions()...)
			require.NoError(t, err)
			want = append(want, resp)
		}
	})
	assert.Equal(t, len(questions), bytes.Count(data, []byte("\n")), "one line per call")

	replay, err := NewReplayer(bytes.NewReader(data), testEnv)
	require.NoError(t, err)
	assert.Equal(t, 3, replay.Remaining())
	for i, q := range questions {
		got, err := replay.GenerateContent(t.Context(), conversation(q), callOptions()...)
		require.NoError(t, err)
		assert.Equal(t, want[i], got, "call %d", i)
	}
	assert.Equal(t, 0, replay.Remaining())
	assert.Equal(t, "answer 2 to first?", want[2].Choices[0].Content, "identical requests replay in recorded order")
}

func TestReplayFailsWithADiffWhenThePromptChanged(t *testing.T) {
	prompt := "Question: what is 2+2?\nUse the calculator.\nReply in JSON."
	data := record(t, scriptedModel("", nil), []Option{testEnv}, func(m llms.Model) {
		_, err := m.GenerateContent(t.Context(), conversation(prompt), callOptions()...)
		require.NoError(t, err)
	})
	replay, err := NewReplayer(bytes.NewReader(data), testEnv)
	require.NoError(t, err)

	changed := strings.Replace(prompt, "Use the calculator.", "Use the abacus.", 1)
	_, err = replay.GenerateContent(t.Context(), conversation(changed), callOptions()...)
	require.ErrorIs(t, err, ErrMismatch)
	var me *MismatchError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, 0, me.Seq)
	assert.Contains(t, me.Diff, "--- recorded call #0")
	assert.Contains(t, me.Diff, "+++ actual call")

	var removed, added []string
	for _, line := range strings.Split(me.Diff, "\n") {
		switch {
		case strings.HasPrefix(line, "---"), strings.HasPrefix(line, "+++"):
		case strings.HasPrefix(line, "-"):
			removed = append(removed, strings.TrimSpace(line[1:]))
		case strings.HasPrefix(line, "+"):
			added = append(added, strings.TrimSpace(line[1:]))
		}
	}
	assert.Equal(t, []string{"Use the calculator."}, removed, "only the changed prompt line is removed")
	assert.Equal(t, []string{"Use the abacus."}, added, "only the changed prompt line is added")
	assert.Contains(t, err.Error(), "Use the abacus.")
	assert.Equal(t, 1, replay.Remaining(), "a mismatch must not use up the recording")

	got, err := replay.GenerateContent(t.Context(), conversation(prompt), callOptions()...)
	require.NoError(t, err)
	assert.Equal(t, "answer 1 to "+prompt, got.Choices[0].Content)
}

func TestReplayDetectsChangedOptions(t *testing.T) {
	data := record(t, scriptedModel("", nil), []Option{testEnv}, func(m llms.Model) {
		_, err := m.GenerateContent(t.Context(), conversation("q"), callOptions()...)
		require.NoError(t, err)
	})
	replay, err := NewReplayer(bytes.NewReader(data), testEnv)
	require.NoError(t, err)
	opts := append(callOptions(), llms.WithTemperature(0.9))
	_, err = replay.GenerateContent(t.Context(), conversation("q"), opts...)
	var me *MismatchError
	require.ErrorAs(t, err, &me)
	assert.Contains(t, me.Diff, "-  temperature: 0.2")
	assert.Contains(t, me.Diff, "+  temperature: 0.9")
}

func TestReplayPicksTheClosestRecordingForTheDiff(t *testing.T) {
	data := record(t, scriptedModel("", nil), []Option{testEnv}, func(m llms.Model) {
		for _, q := range []string{"alpha beta gamma", "completely different text here"} {
			_, err := m.GenerateContent(t.Context(), []llms.MessageContent{
				llms.TextParts(llms.ChatMessageTypeSystem, "sys"), llms.TextParts(llms.ChatMessageTypeHuman, q),
			})
			require.NoError(t, err)
		}
	})
	replay, err := NewReplayer(bytes.NewReader(data), testEnv)
	require.NoError(t, err)
	_, err = replay.GenerateContent(t.Context(), []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, "sys"), llms.TextParts(llms.ChatMessageTypeHuman, "completely different text HERE"),
	})
	var me *MismatchError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, 1, me.Seq)
}

func TestReplayExhausted(t *testing.T) {
	data := record(t, scriptedModel("", nil), []Option{testEnv}, func(m llms.Model) {
		for _, q := range []string{"a", "b"} {
			_, err := m.GenerateContent(t.Context(), conversation(q))
			require.NoError(t, err)
		}
	})
	tests := []struct {
		name  string
		calls []string
	}{
		{"same request once more than recorded", []string{"a", "a"}},
		{"extra call after all recordings were used", []string{"a", "b", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			replay, err := NewReplayer(bytes.NewReader(data), testEnv)
			require.NoError(t, err)
			for _, q := range tt.calls[:len(tt.calls)-1] {
				_, err := replay.GenerateContent(t.Context(), conversation(q))
				require.NoError(t, err)
			}
			_, err = replay.GenerateContent(t.Context(), conversation(tt.calls[len(tt.calls)-1]))
			assert.ErrorIs(t, err, ErrExhausted)
			assert.NotErrorIs(t, err, ErrMismatch)
		})
	}
}

func TestReplayIsSafeUnderConcurrentCallsInAnyOrder(t *testing.T) {
	var questions []string
	for i := range 12 {
		questions = append(questions, fmt.Sprintf("q%d", i%4)) // each question asked three times
	}
	data := record(t, scriptedModel("", nil), []Option{testEnv}, func(m llms.Model) {
		var wg sync.WaitGroup
		for _, q := range questions {
			wg.Go(func() {
				_, err := m.GenerateContent(t.Context(), conversation(q))
				assert.NoError(t, err)
			})
		}
		wg.Wait()
	})
	replay, err := NewReplayer(bytes.NewReader(data), testEnv)
	require.NoError(t, err)

	var (
		mu  sync.Mutex
		got = map[string][]string{}
		wg  sync.WaitGroup
	)
	for i := len(questions) - 1; i >= 0; i-- {
		q := questions[i]
		wg.Go(func() {
			resp, err := replay.GenerateContent(t.Context(), conversation(q))
			if !assert.NoError(t, err) {
				return
			}
			mu.Lock()
			got[q] = append(got[q], resp.Choices[0].Content)
			mu.Unlock()
		})
	}
	wg.Wait()
	for i := range 4 {
		q := fmt.Sprintf("q%d", i)
		assert.ElementsMatch(t, []string{"answer 1 to " + q, "answer 2 to " + q, "answer 3 to " + q}, got[q])
	}
	assert.Equal(t, 0, replay.Remaining())
}

func TestSecretsAreScrubbedFromTheCassette(t *testing.T) {
	const apiKey = "sk-test-abcdefghijklmnopqrstuvwxyz"
	const dbPass = "hunter2hunter2"
	env := WithEnviron([]string{
		"OPENAI_API_KEY=" + apiKey, "DB_PASSWORD=" + dbPass, "SHORT_TOKEN=abc", "PATH=/usr/bin",
	})
	model := scriptedModel("leak "+dbPass, map[string]any{
		"Authorization": "Bearer abcdefghijklmnop", "echo": "key is " + apiKey,
	})
	prompt := "my key is " + apiKey + " and abc is short; header Bearer zyxwvutsrqponm"
	opts := append(callOptions(), llms.WithMetadata(map[string]any{"x-api-key": "anything-goes-here", "user": "bob"}))
	data := record(t, model, []Option{env}, func(m llms.Model) {
		_, err := m.GenerateContent(t.Context(), conversation(prompt), opts...)
		require.NoError(t, err)
		_, err = m.GenerateContent(t.Context(), conversation("leak "+dbPass))
		require.Error(t, err)
	})
	text := string(data)
	for _, secret := range []string{apiKey, dbPass, "abcdefghijklmnop", "zyxwvutsrqponm", "anything-goes-here"} {
		assert.NotContains(t, text, secret)
	}
	assert.Contains(t, text, "[REDACTED:OPENAI_API_KEY]")
	assert.Contains(t, text, "[REDACTED:DB_PASSWORD]")
	assert.Contains(t, text, "Bearer [REDACTED]")
	assert.Contains(t, text, "abc is short", "values shorter than 8 characters are not secrets")
	assert.Contains(t, text, `"user":"bob"`)
	assert.Contains(t, text, `"password":{"type":"string"}`, "schemas keep credential-named properties")
	assert.Contains(t, text, `"PromptTokens"`, "token counts are not credentials")

	replay, err := NewReplayer(bytes.NewReader(data), env)
	require.NoError(t, err)
	resp, err := replay.GenerateContent(t.Context(), conversation(prompt), opts...)
	require.NoError(t, err, "the live request is scrubbed the same way before matching")
	assert.Contains(t, resp.Choices[0].Content, "[REDACTED:OPENAI_API_KEY]")
	_, err = replay.GenerateContent(t.Context(), conversation("leak "+dbPass))
	var re *RecordedError
	require.ErrorAs(t, err, &re)
	assert.ErrorIs(t, err, ErrRecordedFailure)
	assert.Contains(t, re.Message, "503")
	assert.Contains(t, re.Message, "[REDACTED:DB_PASSWORD]")
}

func TestScrubberReplacesLongerSecretsFirstAndExtraValues(t *testing.T) {
	s := newScrubber(buildConfig([]Option{
		WithEnviron([]string{"A_KEY=abcdefgh", "B_KEY=abcdefghijkl", "C_SECRET_NAME=zzzzzzzzzz"}),
		WithSecrets("custom-value-1"),
	}))
	assert.Equal(t, "[REDACTED:B_KEY] [REDACTED:A_KEY] zzzzzzzzzz [REDACTED]",
		s.text("abcdefghijkl abcdefgh zzzzzzzzzz custom-value-1"))

	s = newScrubber(buildConfig([]Option{WithEnviron([]string{"C_SECRET_NAME=zzzzzzzzzz"}), WithSecretSuffixes("_name")}))
	assert.Equal(t, "[REDACTED:C_SECRET_NAME]", s.text("zzzzzzzzzz"))
}

func TestRecorderSkipsCallsCanceledByTheCaller(t *testing.T) {
	blocking := &llmtest.Gate{} // never opened: each call waits for its context
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	data := record(t, blocking, []Option{testEnv}, func(m llms.Model) {
		_, err := m.GenerateContent(ctx, conversation("x"))
		require.ErrorIs(t, err, context.Canceled)
	})
	assert.Empty(t, data)
}

func TestRecorderFailsWhenTheCassetteCannotBeWritten(t *testing.T) {
	rec := NewRecorder(scriptedModel("", nil), failingWriter{}, testEnv)
	_, err := rec.GenerateContent(t.Context(), conversation("x"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "disk full")

	rec = NewRecorder(scriptedModel("", nil), &bytes.Buffer{}, testEnv)
	require.NoError(t, rec.Close())
	_, err = rec.GenerateContent(t.Context(), conversation("x"))
	assert.ErrorContains(t, err, "closed")
}

func TestCassetteFileRoundTripWithStreamingAndCall(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	rec, err := CreateRecorder(scriptedModel("", map[string]any{"ch": make(chan int)}), path, testEnv)
	require.NoError(t, err)
	recorded, err := rec.Call(t.Context(), "hello")
	require.NoError(t, err)
	require.NoError(t, rec.Close())

	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"ch":"\u003cunserialisable chan int\u003e"`)
	entries, err := ReadEntries(bytes.NewReader(raw))
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, FormatVersion, entries[0].Version)
	assert.Equal(t, "human", entries[0].Request.Messages[0].Role)
	assert.Equal(t, "search", entries[0].Response.Choices[0].ToolCalls[0].Name)

	replay, err := OpenReplay(path, testEnv)
	require.NoError(t, err)
	var chunks []string
	resp, err := replay.GenerateContent(t.Context(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hello")},
		llms.WithStreamingFunc(func(_ context.Context, c []byte) error {
			chunks = append(chunks, string(c))
			return nil
		}))
	require.NoError(t, err)
	assert.Equal(t, recorded, resp.Choices[0].Content)
	assert.Equal(t, []string{recorded}, chunks)
	assert.Equal(t, 5, resp.Choices[0].GenerationInfo["PromptTokens"], "integral numbers come back as int")
	assert.InDelta(t, 0.5, resp.Choices[0].GenerationInfo["score"], 1e-12)

	_, err = OpenReplay(filepath.Join(t.TempDir(), "missing.jsonl"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestReadingMalformedCassettes(t *testing.T) {
	tests := []struct {
		name, data, wantLine string
	}{
		{"not json", `{"v":1,"seq":0,"request":{},"response":{"choices":[]}}` + "\n\nnot json\n", "line 3"},
		{"wrong version", `{"v":2,"seq":0}`, "line 1"},
		{"neither response nor error", `{"v":1,"seq":0,"request":{"messages":[]}}`, "line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewReplayer(strings.NewReader(tt.data), testEnv)
			require.ErrorIs(t, err, ErrBadCassette)
			assert.Contains(t, err.Error(), tt.wantLine)
		})
	}
	entries, err := ReadEntries(strings.NewReader(""))
	require.NoError(t, err)
	assert.Empty(t, entries)
}

func TestReplayHonoursCanceledContext(t *testing.T) {
	replay, err := NewReplayer(strings.NewReader(""), testEnv)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = replay.GenerateContent(ctx, conversation("x"))
	assert.ErrorIs(t, err, context.Canceled)
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }
