package executor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/memstore"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/middleware"
	"github.com/planner-engine/planner/llm/provider"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/search"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/llms"
)

// concepts are the dimensions of the fake embedding server's vectors:
// a text's value on one is the number of its words, so that "rain" and
// "umbrella" are near the weather tool though its text has neither.
var concepts = [][]string{
	{"weather", "forecast", "rain", "umbrella", "sunny"},
	{"currency", "money", "euro", "exchange", "price"},
	{"email", "mail", "recipients"},
	{"flight", "airline", "airport"},
	{"translate", "language"},
	{"share", "stock", "company"},
	{"calendar", "event", "meeting"},
	{"recipe", "cooking", "ingredient"},
}

// conceptVector embeds text over concepts.
func conceptVector(text string) []float32 {
	text = strings.ToLower(text)
	v := make([]float32, len(concepts))
	for i, words := range concepts {
		for _, w := range words {
			v[i] += float32(strings.Count(text, w))
		}
	}
	return v
}

// eightTools are tools on distinct subjects, described without the
// words the tests' queries use.
func eightTools() []tools.Tool {
	subjects := map[string]string{
		"weather":          "Current weather and forecast for a city.",
		"convert_currency": "Converts money between currencies at today's exchange rate.",
		"send_email":       "Sends an email message to recipients.",
		"search_flights":   "Finds airline flights between two airports on a date.",
		"translate":        "Translates text into another language.",
		"stock_quote":      "Latest share price of a listed company.",
		"calendar":         "Lists and creates events on the user's calendar.",
		"recipes":          "Finds cooking recipes by ingredient.",
	}
	var out []tools.Tool
	for name, desc := range subjects {
		out = append(out, descTool{&fakeTool{name: name, fn: func(_ context.Context, in string) (string, error) {
			return name + " says " + in, nil
		}}, desc})
	}
	return out
}

// openAIServer is an OpenAI-compatible server: POST /v1/embeddings embeds
// with conceptVector (or fails with 500 when broken), POST
// /v1/chat/completions replies with the next of replies.
type openAIServer struct {
	*httptest.Server
	replies []string
	broken  bool

	mu     sync.Mutex
	chats  []string   // each chat request's system message
	embeds [][]string // each embedding request's inputs
	models []string   // each embedding request's model
}

func newOpenAIServer(t *testing.T, replies ...string) *openAIServer {
	s := &openAIServer{replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *openAIServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if s.broken {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":{"message":"this server is broken","type":"invalid_request_error"}}`)
		return
	}
	switch r.URL.Path {
	case "/v1/embeddings":
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		_ = json.Unmarshal(body, &req)
		s.embeds = append(s.embeds, req.Input)
		s.models = append(s.models, req.Model)
		type datum struct {
			Embedding []float32 `json:"embedding"`
			Index     int       `json:"index"`
		}
		var data []datum
		for i, in := range req.Input {
			data = append(data, datum{Embedding: conceptVector(in), Index: i})
		}
		raw, _ := json.Marshal(map[string]any{"object": "list", "data": data, "model": req.Model,
			"usage": map[string]int{"prompt_tokens": 5, "total_tokens": 5}})
		_, _ = w.Write(raw)
	case "/v1/chat/completions":
		var req struct {
			Messages []struct {
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		_ = json.Unmarshal(body, &req)
		s.chats = append(s.chats, messageText(req.Messages[0].Content))
		reply := "Thought: Done.\nFinal Answer: done"
		if n := len(s.chats) - 1; n < len(s.replies) {
			reply = s.replies[n]
		}
		raw, _ := json.Marshal(map[string]any{"id": "c", "object": "chat.completion", "model": "gpt-4o-mini",
			"choices": []map[string]any{{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": reply}}},
			"usage":   map[string]int{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}})
		_, _ = w.Write(raw)
	default:
		http.NotFound(w, r)
	}
}

// messageText reads a chat message's content: a string, or text parts.
func messageText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// shownOf returns the tools of eightTools a system prompt shows.
func shownOf(system string) []string {
	var out []string
	for _, line := range strings.Split(system, "\n") {
		if name, ok := strings.CutPrefix(line, "### "); ok && name != "find_tools" {
			out = append(out, name)
		}
	}
	return out
}

func (s *openAIServer) record() (chats []string, embeds [][]string, models []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.chats), slices.Clone(s.embeds), slices.Clone(s.models)
}

// providerFactory builds models as the planner does: the real providers of
// llm/provider, with the middleware around the chat calls and the
// embedding requests.
func providerFactory() *llm.Factory {
	mc := middleware.DefaultConfig()
	mc.Retry.MaxAttempts = 1
	build := func(ctx context.Context, cfg config.LLM, _ string) (llms.Model, error) {
		return provider.New(ctx, provider.Config{Provider: cfg.Provider, Model: cfg.Model, BaseURL: cfg.BaseURL,
			APIKeyEnv: cfg.APIKeyEnv, EmbeddingModel: cfg.EmbeddingModel})
	}
	opts := []llm.FactoryOption{
		llm.WithWrapper(func(_ config.LLM, m llms.Model) llms.Model { return middleware.Apply(m, mc) }),
		llm.WithEmbeddingWrapper(func(_ config.LLM, c embeddings.EmbedderClient) embeddings.EmbedderClient {
			return embeddings.EmbedderClientFunc(middleware.ApplyEmbed(c.CreateEmbedding, mc))
		}),
		// The planner traces each embedding request (the root's observer).
		llm.WithEmbeddingObserver(func(ctx context.Context, e llm.EmbeddingEvent) {
			trace.From(ctx).Emit(trace.Event{Node: e.Node, Kind: trace.KindInfo,
				Data: map[string]any{llm.TraceEmbeddingTexts: e.Texts, llm.TraceEmbeddingModel: e.Model}})
		}),
	}
	for _, p := range provider.Providers() {
		opts = append(opts, llm.WithProvider(p, "real: "+p, build))
	}
	return llm.NewFactory(opts...)
}

// embeddingLoop builds a text-mode loop over eightTools from an openai
// llm block pointed at srv, with tool_retrieval decoded from settings.
func embeddingLoop(t *testing.T, srv *openAIServer, method string) *executor.Loop {
	t.Helper()
	t.Setenv("TEST_EMBED_OPENAI_KEY", "sk-test")
	m, err := providerFactory().Model(context.Background(), config.LLM{Provider: "openai", Model: "gpt-4o-mini",
		BaseURL: srv.URL + "/v1", APIKeyEnv: "TEST_EMBED_OPENAI_KEY"}, "")
	require.NoError(t, err)
	require.NotNil(t, m.Embedder, "openai offers embeddings")
	var cfg executor.ReActConfig
	require.NoError(t, config.Decode(map[string]any{"mode": "text",
		"tool_retrieval": map[string]any{"method": method, "max_tools": 3}}, &cfg))
	l, err := executor.NewLoop(nodekind.Env{Keywords: search.Keywords{}, Model: m, Tools: registry(t, eightTools()...)}, cfg)
	require.NoError(t, err)
	return l
}

const umbrellaTask = "Will it rain in Lyon tomorrow, so that I should pack an umbrella?"

var umbrellaReplies = []string{
	"Thought: I need the rain outlook for Lyon.\nAction: weather\nAction Input: Lyon tomorrow",
	"Thought: Rain is likely. Next the umbrella's price in euro, converted from dollars.\nAction: convert_currency\nAction Input: 20 USD to EUR",
	"Thought: Done.\nFinal Answer: Pack an umbrella; one costs about 18 EUR.",
}

func TestEmbeddingRetrievalThroughAProviderShowsTheNearestTools(t *testing.T) {
	for _, method := range []string{"embedding", "hybrid"} {
		t.Run(method, func(t *testing.T) {
			srv := newOpenAIServer(t, umbrellaReplies...)
			l := embeddingLoop(t, srv, method)
			rec := &trace.Recorder{}
			ctx := trace.WithTracer(context.Background(), trace.New("test", rec))
			out, err := l.Run(ctx, hookedState(state.Task{Question: umbrellaTask}), executor.Input{NodeID: "act", Task: umbrellaTask})
			require.NoError(t, err)
			require.True(t, out.Complete, out.Reason)

			chats, embeds, models := srv.record()
			require.Len(t, chats, 3)
			first := shownOf(chats[0])
			assert.Contains(t, first, "weather", "rain and umbrella are nearest the weather tool")
			assert.LessOrEqual(t, len(first), 3)
			assert.NotContains(t, first, "recipes")
			if method == "embedding" {
				assert.Equal(t, []string{"weather"}, first, "the only tool of positive similarity")
			}
			assert.Equal(t, first, shownOf(chats[1]), "the weather tool still ranks first: the selection sticks")
			third := shownOf(chats[2])
			assert.Contains(t, third, "convert_currency", "the latest thought's price in euro moves the selection")
			assert.Contains(t, third, "weather", "a used tool stays shown")

			require.NotEmpty(t, embeds)
			assert.GreaterOrEqual(t, len(embeds[0]), len(eightTools()), "the tools are embedded once, in one request")
			assert.Len(t, embeds, 1+len(chats), "then one query per model call")
			for _, q := range embeds[1:] {
				assert.Len(t, q, 1)
			}
			for _, m := range models {
				assert.Equal(t, "text-embedding-3-small", m, "openai's default embedding model")
			}
			var embedEvents int
			for _, e := range rec.OfKind(trace.KindInfo) {
				if _, ok := e.Data[llm.TraceEmbeddingTexts]; ok {
					embedEvents++
					assert.Equal(t, "act", e.Node)
				}
			}
			assert.Equal(t, len(embeds), embedEvents, "each embedding request is traced")
		})
	}
}

func TestEmbeddingRetrievalNeedsAProviderWithEmbeddings(t *testing.T) {
	t.Setenv("TEST_EMBED_ANTHROPIC_KEY", "sk-test")
	m, err := providerFactory().Model(context.Background(), config.LLM{Provider: "anthropic", Model: "claude-3-5-haiku-latest",
		APIKeyEnv: "TEST_EMBED_ANTHROPIC_KEY", EmbeddingModel: "anything"}, "")
	require.NoError(t, err)
	assert.Nil(t, m.Embedder)
	for _, method := range []string{"embedding", "hybrid"} {
		_, err = executor.NewLoop(nodekind.Env{Keywords: search.Keywords{}, Model: m, Tools: registry(t, eightTools()...)},
			executor.ReActConfig{ToolRetrieval: executor.ToolRetrieval{Method: method, MaxTools: 3}})
		var se *config.SettingError
		require.ErrorAs(t, err, &se, method)
		assert.Equal(t, "tool_retrieval.method", se.Key)
		assert.ErrorContains(t, err, `provider "anthropic"`)
		assert.ErrorContains(t, err, "openai")
	}
	_, err = executor.NewLoop(nodekind.Env{Keywords: search.Keywords{}, Model: m, Tools: registry(t, eightTools()...)},
		executor.ReActConfig{ToolRetrieval: executor.ToolRetrieval{MaxTools: 3}})
	assert.NoError(t, err, "bm25 needs no embeddings")
}

// A resumed run selects the journaled tools: the replay embeds nothing
// (the server is broken by then) and shows the model the prompts of the
// journal.
func TestEmbeddingSelectionsAreReplayedFromTheJournal(t *testing.T) {
	srv := newOpenAIServer(t, umbrellaReplies...)
	store := memstore.New()
	ctx := context.Background()
	require.NoError(t, store.Create(ctx, journal.Thread{Name: "t", Status: journal.StatusRunning}))
	run := func() (executor.Outcome, error) {
		j, err := journal.Open(ctx, store, "t")
		require.NoError(t, err)
		l := embeddingLoop(t, srv, "embedding")
		rctx := journal.WithScope(journal.WithRun(ctx, j), journal.NodeScope(1, "act"))
		return l.Run(rctx, hookedState(state.Task{Question: umbrellaTask}), executor.Input{NodeID: "act", Task: umbrellaTask})
	}
	first, err := run()
	require.NoError(t, err)
	require.True(t, first.Complete, first.Reason)
	chats, embeds, _ := srv.record()
	require.Len(t, chats, 3)

	entries, err := store.Entries(ctx, "t")
	require.NoError(t, err)
	var selections []string
	for _, e := range entries {
		if e.Kind == journal.KindTool && strings.Contains(string(e.Request), executor.RetrievalJournalTool) {
			selections = append(selections, string(e.Response))
		}
	}
	require.Len(t, selections, 3, "one journaled selection per model call")
	assert.Contains(t, selections[0], `"output":"weather"`)

	srv.mu.Lock()
	srv.broken = true
	srv.mu.Unlock()
	again, err := run()
	require.NoError(t, err, "the journal answers every call")
	require.True(t, again.Complete, again.Reason)
	assert.Equal(t, first.Answer, again.Answer)
	chats2, embeds2, _ := srv.record()
	assert.Len(t, chats2, len(chats), "no live chat call")
	assert.Len(t, embeds2, len(embeds), "no live embedding request")
}

// Without a journal a failing embedding server makes retrieval fall back
// to every tool, and the trace says why.
func TestEmbeddingProviderFailureFallsBack(t *testing.T) {
	srv := newOpenAIServer(t)
	l := embeddingLoop(t, srv, "embedding")
	srv.mu.Lock()
	srv.broken = true
	srv.mu.Unlock()
	rec := &trace.Recorder{}
	ctx := trace.WithTracer(context.Background(), trace.New("test", rec))
	_, err := l.Run(ctx, hookedState(state.Task{Question: umbrellaTask}), executor.Input{NodeID: "act", Task: umbrellaTask})
	require.Error(t, err, "the chat call fails too")
	var why []string
	for _, e := range rec.OfKind(trace.KindGuard) {
		if e.Data["guard"] == executor.GuardToolRetrievalFallback {
			why = append(why, fmt.Sprint(e.Data["error"]))
		}
	}
	require.NotEmpty(t, why)
	assert.Contains(t, why[0], "400")
	assert.Contains(t, why[0], "text-embedding-3-small")
}
