package usage

import (
	"strings"
	"sync"
	"testing"

	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// corpus exercises every alternative of the pre-tokenisation patterns:
// contractions, mixed case, digits, punctuation, line breaks, trailing
// whitespace, non-Latin scripts and combining marks.
// Estimators are built once per encoding for the tests that only read from
// them; building one takes about half a second under -race.
var (
	sharedEstimator = sync.OnceValues(func() (*Estimator, error) { return NewEstimator() })
	sharedCL100k    = sync.OnceValues(func() (*Estimator, error) { return NewEstimator(WithEncoding(EncodingCL100k)) })
)

var corpus = []string{
	"hello world",
	"Hello, World! It's a test; they'll see we've done it.",
	"HTTPServer returned 12345678 bytes in 0.25s\n\n\tDone.   ",
	"func main() {\n\tfmt.Println(\"héllo\")\n}\n",
	"日本語のテキストと English mixed — with “quotes” and emoji 🚀🚀.",
	"path/to/file.go:42:7: undefined: x\r\n",
	"Café naïve coöperate ÅNGSTRÖM McDonald's I'M DONE",
	"<|endoftext|> is just text here",
	"    indented\n        more\n",
}

func TestEstimatorMatchesReferenceTokenizer(t *testing.T) {
	// The reference is tiktoken-go's own encoding built through its global
	// loader; the Estimator must tokenise identically without touching it.
	tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
	for name, build := range map[string]func() (*Estimator, error){EncodingO200k: sharedEstimator, EncodingCL100k: sharedCL100k} {
		t.Run(name, func(t *testing.T) {
			est, err := build()
			require.NoError(t, err)
			assert.Equal(t, name, est.Encoding())
			ref, err := tiktoken.GetEncoding(name)
			require.NoError(t, err)
			for _, text := range corpus {
				assert.Equal(t, len(ref.Encode(text, nil, []string{})), est.Count(text), "text %q", text)
				assert.Equal(t, ref.EncodeOrdinary(text), reference(t, est).EncodeOrdinary(text), "text %q", text)
			}
		})
	}
}

func TestEstimatorKnownCounts(t *testing.T) {
	est, err := sharedEstimator()
	require.NoError(t, err)
	assert.Equal(t, EncodingO200k, est.Encoding())
	tests := []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"Hello, world!", 4},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			assert.Equal(t, tt.want, est.Count(tt.text))
		})
	}
}

func TestNewEstimatorRejectsUnknownEncoding(t *testing.T) {
	_, err := NewEstimator(WithEncoding("gpt2"))
	assert.ErrorIs(t, err, ErrUnknownEncoding)
}

func TestEstimateMessagesAddsDocumentedOverheads(t *testing.T) {
	est, err := sharedEstimator()
	require.NoError(t, err)
	sys, q := "You are terse.", "What is 2+2?"
	args := `{"expression":"2+2"}`
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, sys),
		{Role: llms.ChatMessageTypeHuman, Parts: []llms.ContentPart{
			llms.TextContent{Text: q}, llms.ImageURLPart("https://example.com/a.png"),
		}},
		{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{llms.ToolCall{
			ID: "call_1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "calculator", Arguments: args},
		}}},
		{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{
			ToolCallID: "call_1", Name: "calculator", Content: "4",
		}}},
	}
	want := ReplyOverhead + 4*MessageOverhead +
		est.Count(sys) +
		est.Count(q) + ImageTokens +
		est.Count("call_1") + est.Count("calculator") + est.Count(args) +
		est.Count("call_1") + est.Count("4")
	assert.Equal(t, want, est.EstimateMessages(msgs))
	assert.Equal(t, 0, est.EstimateMessages(nil))
	assert.Equal(t, ReplyOverhead+MessageOverhead, est.EstimateMessages([]llms.MessageContent{{Role: llms.ChatMessageTypeHuman}}))
}

func TestEstimateResponseAndResolve(t *testing.T) {
	est, err := sharedEstimator()
	require.NoError(t, err)
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Say hi")}
	resp := &llms.ContentResponse{Choices: []*llms.ContentChoice{
		{Content: "Hi there", ReasoningContent: "greet"},
		{ToolCalls: []llms.ToolCall{{FunctionCall: &llms.FunctionCall{Name: "search", Arguments: `{"q":"x"}`}}}},
		{FuncCall: &llms.FunctionCall{Name: "legacy", Arguments: "{}"}},
	}}
	wantCompletion := est.Count("Hi there") + est.Count("greet") +
		est.Count("search") + est.Count(`{"q":"x"}`) + est.Count("legacy") + est.Count("{}")
	assert.Equal(t, wantCompletion, est.EstimateResponse(resp))
	assert.Equal(t, 0, est.EstimateResponse(nil))

	estimated := est.Resolve(msgs, resp)
	assert.Equal(t, Usage{PromptTokens: est.EstimateMessages(msgs), CompletionTokens: wantCompletion, Estimated: true}, estimated)

	resp.Choices[0].GenerationInfo = map[string]any{"PromptTokens": 100, "CompletionTokens": 50}
	assert.Equal(t, Usage{PromptTokens: 100, CompletionTokens: 50}, est.Resolve(msgs, resp))
}

func TestEstimatorIsSafeForConcurrentUse(t *testing.T) {
	est, err := sharedCL100k()
	require.NoError(t, err)
	want := make([]int, len(corpus))
	for i, text := range corpus {
		want[i] = est.Count(text)
	}
	var wg sync.WaitGroup
	got := make([][]int, 8)
	for g := range got {
		got[g] = make([]int, len(corpus))
		wg.Go(func() {
			for i, text := range corpus {
				got[g][i] = est.Count(text)
			}
		})
	}
	wg.Wait()
	for g := range got {
		assert.Equal(t, want, got[g], "goroutine %d", g)
	}
}

func BenchmarkNewEstimator(b *testing.B) {
	for b.Loop() {
		if _, err := NewEstimator(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCount(b *testing.B) {
	est, err := NewEstimator()
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 100)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		_ = est.Count(text)
	}
	b.ReportMetric(float64(est.Count(text)), "tokens/op")
}
