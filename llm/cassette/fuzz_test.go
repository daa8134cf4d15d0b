package cassette

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// fuzzModel answers every call with a fixed tool-calling response, or
// fails when the prompt is "fail".
func fuzzModel() llmtest.Func {
	return func(_ context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
		if len(msgs) > 0 && len(msgs[0].Parts) > 0 && msgs[0].Parts[0] == llms.ContentPart(llms.TextContent{Text: "fail"}) {
			return nil, errors.New("API returned unexpected status code: 503: overloaded")
		}
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{
			Content: "Thought: look it up", StopReason: "tool_calls", ReasoningContent: "hmm",
			ToolCalls: []llms.ToolCall{{ID: "call_1", Type: "function",
				FunctionCall: &llms.FunctionCall{Name: "search", Arguments: `{"q":"Paris"}`}}},
			GenerationInfo: map[string]any{"PromptTokens": 12, "CompletionTokens": 5, "score": 0.5},
		}}}, nil
	}
}

// fuzzPrompt is the live call each fuzz iteration replays.
func fuzzPrompt() []llms.MessageContent {
	return []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hello")}
}

// recordedSeed records a few calls, one failed, with every part type and
// the common options, as a Recorder writes them.
func recordedSeed(f *testing.F) []byte {
	var buf bytes.Buffer
	rec := NewRecorder(fuzzModel(), &buf, WithEnviron([]string{"OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwxyz"}))
	ctx := context.Background()
	_, err := rec.GenerateContent(ctx, fuzzPrompt())
	require.NoError(f, err)
	_, err = rec.GenerateContent(ctx, []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, "You are careful.\nAnswer briefly."),
		{Role: llms.ChatMessageTypeHuman, Parts: []llms.ContentPart{
			llms.TextContent{Text: "Look"}, llms.ImageURLWithDetailPart("https://example.com/a.png", "low"),
			llms.BinaryPart("image/png", []byte{0x89, 'P', 'N', 'G'}),
		}},
		{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{llms.ToolCall{ID: "call_0", Type: "function",
			FunctionCall: &llms.FunctionCall{Name: "lookup", Arguments: `{"x":1}`}}}},
		{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: "call_0", Name: "lookup", Content: "42"}}},
	}, llms.WithModel("gpt-4o-mini"), llms.WithTemperature(0.2), llms.WithMaxTokens(256),
		llms.WithStopWords([]string{"Observation:"}), llms.WithJSONMode(), llms.WithToolChoice("auto"),
		llms.WithTools([]llms.Tool{{Type: "function", Function: &llms.FunctionDefinition{
			Name: "search", Parameters: map[string]any{"type": "object", "properties": map[string]any{"password": map[string]any{"type": "string"}}},
		}}}), llms.WithMetadata(map[string]any{"api_key": "sk-abcdefghijklmnopqrstuvwxyz"}))
	require.NoError(f, err)
	_, err = rec.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "fail")})
	require.Error(f, err)
	require.NoError(f, rec.Close())
	return buf.Bytes()
}

func addCassetteSeeds(f *testing.F) {
	f.Add(recordedSeed(f))
	for _, s := range []string{
		"",
		"\n\n   \n",
		`{"v":1,"seq":0,"request":{"messages":[{"role":"human","parts":[{"type":"text","text":"hello"}]}],"options":{}},"response":{"choices":[{"content":"hi"}]}}`,
		`{"v":1,"seq":3,"request":{"messages":[]},"error":"boom"}` + "\n" + `{"v":1,"seq":-2,"request":{},"response":{"choices":[]}}`,
		`{"v":1,"seq":0,"request":{},"response":{"choices":[{"content":"x","generation_info":{"t":1e300,"n":9007199254740993}}]}}`,
		`{"v":1,"seq":0,"request":{"options":{"tool_choice":{"type":"function"},"metadata":{"a":[1,{"b":null}]}}},"response":null,"error":""}`,
		`{"v":2,"seq":0}`,
		`{"V":1,"SEQ":1,"Request":{"Messages":[{"Role":"ai","Parts":[{"Type":"binary","Data":"AAE="}]}]},"Response":{"Choices":[]}}`,
		`{"v":1,"seq":0,"request":{},"response":{"choices":[]}}` + "\n" + `not json`,
		`{"v":1,"v":2}`,
		`[1]`,
	} {
		f.Add([]byte(s))
	}
}

var lineRe = regexp.MustCompile(`line (\d+)`)

// nonBlankLines counts the lines the readers parse.
func nonBlankLines(data []byte) int {
	n := 0
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) > 0 {
			n++
		}
	}
	return n
}

// requireBadCassette checks a reader error: it wraps ErrBadCassette and
// names a line of the input.
func requireBadCassette(t *testing.T, data []byte, err error) {
	require.ErrorIs(t, err, ErrBadCassette)
	m := lineRe.FindStringSubmatch(err.Error())
	require.NotNil(t, m, "error names no line: %v", err)
	n, convErr := strconv.Atoi(m[1])
	require.NoError(t, convErr)
	require.GreaterOrEqual(t, n, 1)
	require.LessOrEqual(t, n, bytes.Count(data, []byte("\n"))+1)
}

// FuzzReadEntries checks that ReadEntries either fails with ErrBadCassette
// naming a line, or returns one entry of the current version per non-blank
// line, and that the entries survive writing and reading them back.
func FuzzReadEntries(f *testing.F) {
	addCassetteSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := ReadEntries(bytes.NewReader(data))
		if err != nil {
			requireBadCassette(t, data, err)
			return
		}
		require.Len(t, entries, nonBlankLines(data))
		var again bytes.Buffer
		for _, e := range entries {
			require.Equal(t, FormatVersion, e.Version)
			b, err := json.Marshal(e)
			require.NoError(t, err)
			again.Write(b)
			again.WriteByte('\n')
		}
		back, err := ReadEntries(&again)
		require.NoError(t, err)
		want, err := json.Marshal(entries)
		require.NoError(t, err)
		got, err := json.Marshal(back)
		require.NoError(t, err)
		require.JSONEq(t, string(want), string(got))
	})
}

// FuzzNewReplayer checks that NewReplayer either fails with ErrBadCassette
// naming a line, or serves every non-blank line once, ordered by seq, agrees
// with ReadEntries, and answers a live call with a response, a recorded
// failure, ErrMismatch or ErrExhausted.
func FuzzNewReplayer(f *testing.F) {
	addCassetteSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := NewReplayer(bytes.NewReader(data), WithEnviron(nil))
		entries, readErr := ReadEntries(bytes.NewReader(data))
		if err != nil {
			requireBadCassette(t, data, err)
			if readErr == nil {
				// ReadEntries does not require a response or error, nor a
				// request (which it leaves empty); NewReplayer does.
				require.Regexp(t, `neither response nor error|line \d+: request: `, err.Error())
			}
			return
		}
		require.Equal(t, nonBlankLines(data), p.Remaining())
		require.Len(t, p.recs, p.Remaining())
		keyed := 0
		for _, recs := range p.byKey {
			keyed += len(recs)
		}
		require.Equal(t, len(p.recs), keyed)
		for i, rec := range p.recs {
			require.True(t, rec.resp != nil || rec.errText != "", "line %d has neither response nor error", rec.lineNo)
			if i > 0 {
				require.LessOrEqual(t, p.recs[i-1].seq, rec.seq, "recordings are served in seq order")
			}
		}
		if readErr == nil {
			require.Len(t, entries, len(p.recs))
		}

		resp, err := p.GenerateContent(context.Background(), fuzzPrompt())
		var recorded *RecordedError
		switch {
		case err == nil:
			require.NotNil(t, resp)
			require.Equal(t, len(p.recs)-1, p.Remaining())
		case errors.As(err, &recorded):
			require.ErrorIs(t, err, ErrRecordedFailure)
			require.NotEmpty(t, recorded.Message)
			require.Equal(t, len(p.recs)-1, p.Remaining())
		case errors.Is(err, ErrMismatch), errors.Is(err, ErrExhausted):
			require.Equal(t, len(p.recs), p.Remaining())
		default:
			require.Fail(t, fmt.Sprintf("unexpected replay error %T: %v", err, err))
		}
	})
}

func TestReplayerOrdersExtremeSeqsWithoutOverflow(t *testing.T) {
	lines := []string{
		`{"v":1,"seq":9223372036854775807,"request":{},"response":{"choices":[{"content":"max"}]}}`,
		`{"v":1,"seq":-1,"request":{},"response":{"choices":[{"content":"minus one"}]}}`,
		`{"v":1,"seq":-9223372036854775808,"request":{},"response":{"choices":[{"content":"min"}]}}`,
	}
	p, err := NewReplayer(strings.NewReader(strings.Join(lines, "\n")))
	require.NoError(t, err)
	require.Len(t, p.recs, 3)
	assert.Equal(t, []int{math.MinInt64, -1, math.MaxInt64}, []int{p.recs[0].seq, p.recs[1].seq, p.recs[2].seq})
}
