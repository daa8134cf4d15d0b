package executor_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/search"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// descTool is a fakeTool with a description of its own.
type descTool struct {
	*fakeTool
	desc string
}

func (d descTool) Description() string { return d.desc }

// manyTools returns 20 tools on distinct subjects; each answers "<name>
// says <input>".
func manyTools() []tools.Tool {
	subjects := map[string]string{
		"weather":          "Current weather and forecast for a city.",
		"convert_currency": "Converts money between currencies at today's exchange rate.",
		"send_email":       "Sends an email message to recipients.",
		"search_flights":   "Finds airline flights between two airports on a date.",
		"translate":        "Translates text into another language.",
		"stock_quote":      "Latest share price of a listed company.",
		"calendar":         "Lists and creates events on the user's calendar.",
		"recipes":          "Finds cooking recipes by ingredient.",
		"track_package":    "Shipping status of a parcel from its tracking number.",
		"air_quality":      "Air pollution index of a city.",
		"movie_info":       "Cast, director and runtime of a film.",
		"book_lookup":      "Finds books by title, author or ISBN.",
		"sports_scores":    "Results and fixtures of sports leagues.",
		"dictionary":       "Definitions of an English word.",
		"qr_code":          "Makes a QR code image for a link.",
		"shorten_url":      "Makes a short link for a long URL.",
		"thermostat":       "Reads or sets the home thermostat temperature.",
		"holidays":         "Public holidays of a country in a year.",
		"geocode":          "Coordinates of a street address.",
		"transcribe":       "Transcribes speech in an audio recording into text.",
	}
	var out []tools.Tool
	for name, desc := range subjects {
		out = append(out, descTool{&fakeTool{name: name, fn: func(_ context.Context, in string) (string, error) {
			return name + " says " + in, nil
		}}, desc})
	}
	return out
}

// shownTools returns the tool headings ("### name") of a text-mode
// request's system message.
func shownTools(r request) []string {
	var out []string
	for _, line := range strings.Split(r.msgs[0].Parts[0].(llms.TextContent).Text, "\n") {
		if name, ok := strings.CutPrefix(line, "### "); ok {
			out = append(out, name)
		}
	}
	return out
}

func retrievalCfg(maxTools int) executor.ReActConfig {
	return executor.ReActConfig{ToolRetrieval: executor.ToolRetrieval{MaxTools: maxTools}}
}

func guardsNamed(h *harness, name string) []trace.Event {
	var out []trace.Event
	for _, e := range h.ofKind(trace.KindGuard) {
		if e.Data["guard"] == name {
			out = append(out, e)
		}
	}
	return out
}

func TestRetrievalShowsOnlyTheRelevantToolsInTextMode(t *testing.T) {
	h := runScript(t, retrievalCfg(5), text(
		"Thought: I need the current share price of ACME first.\nAction: stock_quote\nAction Input: ACME",
		"Thought: ACME trades at 12 USD; now convert the currency to euros.\nAction: convert_currency\nAction Input: 12 USD to EUR",
		"Thought: Done.\nFinal Answer: 11 EUR",
	), "What is ACME's share price, converted to euros at today's exchange rate?", manyTools()...)
	require.NoError(t, h.err)
	require.True(t, h.out.Complete)
	reqs := requests(h.model)
	require.Len(t, reqs, 3)
	want := []string{"stock_quote", "convert_currency", ""}
	for i, r := range reqs {
		shown := shownTools(r)
		assert.LessOrEqual(t, len(shown), 5+i, "call %d shows at most max_tools plus the %d tools used: %v", i+1, i, shown)
		if want[i] != "" {
			assert.Contains(t, shown, want[i], "call %d", i+1)
		}
		if i > 0 {
			assert.Contains(t, shown, "stock_quote", "a tool used in the run stays shown")
		}
		action := r.msgs[0].Parts[0].(llms.TextContent).Text
		assert.Contains(t, action, "Action: <one of: "+strings.Join(shown, ", ")+">", "ToolNames lists the shown tools")
	}
	assert.NotContains(t, shownTools(reqs[0]), "recipes")
	assert.Empty(t, guardsNamed(h, executor.GuardToolNotShown))
	infos := h.ofKind(trace.KindInfo)
	require.NotEmpty(t, infos, "a selection emits an info event")
	assert.Contains(t, infos[0].Text, "of 21 tools", "20 tools and the search tool find_tools")
}

func TestRetrievalPassesTheSubsetNativelyInToolsMode(t *testing.T) {
	cfg := retrievalCfg(4)
	cfg.Mode = executor.ModeTools
	s := scripted.Script{Replies: []scripted.Reply{
		{Text: "I need the weather in Oslo.", ToolCalls: []scripted.ToolCall{{Name: "weather", Arguments: map[string]any{"input": "Oslo"}}}},
		{Text: "Final Answer: rainy"},
	}}
	h := runScript(t, cfg, s, "Will it rain in Oslo according to the forecast?", manyTools()...)
	require.NoError(t, h.err)
	require.True(t, h.out.Complete)
	reqs := requests(h.model)
	require.Len(t, reqs, 2)
	for i, r := range reqs {
		var names []string
		for _, tl := range r.opts.Tools {
			names = append(names, tl.Function.Name)
		}
		assert.LessOrEqual(t, len(names), 4+i, "call %d: %v", i+1, names)
		assert.Contains(t, names, "weather", "call %d", i+1)
	}
}

func TestAToolThatWasNotShownStillRunsAndIsNoted(t *testing.T) {
	h := runScript(t, retrievalCfg(3), text(
		"Thought: I'll make a QR code even though it was not offered.\nAction: qr_code\nAction Input: https://example.com",
		"Thought: Done.\nFinal Answer: ok",
	), "What is the weather in Rome?", manyTools()...)
	require.NoError(t, h.err)
	require.NotContains(t, shownTools(requests(h.model)[0]), "qr_code")
	assert.Contains(t, h.out.Entries[0].Observation, "qr_code says https://example.com", "the unshown tool ran")
	g := guardsNamed(h, executor.GuardToolNotShown)
	require.Len(t, g, 1)
	assert.Equal(t, "qr_code", g[0].Data["tool"])
	assert.Equal(t, 1, g[0].Data["step"])
	assert.Contains(t, shownTools(requests(h.model)[1]), "qr_code", "once used, a tool is shown")
}

func TestUnknownToolMessageListsEveryTool(t *testing.T) {
	h := runScript(t, retrievalCfg(3), text(
		"Thought: try a tool that does not exist.\nAction: teleport\nAction Input: Mars",
		"Thought: Done.\nFinal Answer: no",
	), "What is the weather in Rome?", manyTools()...)
	require.NoError(t, h.err)
	for _, name := range []string{"recipes", "weather", "transcribe", "qr_code"} {
		assert.Contains(t, h.out.Entries[0].Error, name)
	}
}

func TestRetrievalFallsBackToEveryToolWhenNothingMatches(t *testing.T) {
	h := runScript(t, retrievalCfg(3), text("Thought: Done.\nFinal Answer: yes"), "is it so?", manyTools()...)
	require.NoError(t, h.err)
	assert.Len(t, shownTools(requests(h.model)[0]), 20)
	g := guardsNamed(h, executor.GuardToolRetrievalFallback)
	require.Len(t, g, 1)
	assert.Contains(t, g[0].Text, "match no tool")
}

func TestFirstCallAllShowsEveryToolUntilTheFirstThought(t *testing.T) {
	cfg := retrievalCfg(3)
	cfg.ToolRetrieval.FirstCall = executor.FirstCallAll
	h := runScript(t, cfg, text(
		"Thought: I need the air pollution index of Delhi.\nAction: air_quality\nAction Input: Delhi",
		"Thought: Done.\nFinal Answer: poor",
	), "Is it healthy to run outside in Delhi today?", manyTools()...)
	require.NoError(t, h.err)
	reqs := requests(h.model)
	assert.Len(t, shownTools(reqs[0]), 20)
	assert.LessOrEqual(t, len(shownTools(reqs[1])), 4)
	assert.Contains(t, shownTools(reqs[1]), "air_quality")
}

func TestAlwaysToolsAreShownOnEveryCall(t *testing.T) {
	cfg := retrievalCfg(2)
	cfg.ToolRetrieval.Always = []string{"Shorten-URL"}
	h := runScript(t, cfg, text("Thought: Done.\nFinal Answer: sunny"), "What's the weather forecast in Rome?", manyTools()...)
	require.NoError(t, h.err)
	shown := shownTools(requests(h.model)[0])
	assert.Contains(t, shown, "shorten_url")
	assert.Contains(t, shown, "weather")
	assert.LessOrEqual(t, len(shown), 3)
}

func TestBelowTheThresholdPromptsAreUnchanged(t *testing.T) {
	script := func() scripted.Script {
		return text("Thought: look.\nAction: weather\nAction Input: Rome", "Thought: Done.\nFinal Answer: sunny")
	}
	off := runScript(t, executor.ReActConfig{ToolRetrieval: executor.ToolRetrieval{Disabled: true}}, script(), "weather in Rome?", manyTools()...)
	def := runScript(t, executor.ReActConfig{}, script(), "weather in Rome?", manyTools()...)
	high := runScript(t, retrievalCfg(20), script(), "weather in Rome?", manyTools()...)
	for _, h := range []*harness{off, def, high} {
		require.NoError(t, h.err)
	}
	assert.Less(t, len(shownTools(requests(def.model)[0])), 13, "20 tools pass the default max_tools of 12")
	for i := range 2 {
		assert.Equal(t, off.prompt(i), high.prompt(i), "20 tools and max_tools 20: no retrieval")
	}
	assert.Len(t, shownTools(requests(high.model)[0]), 20)
	assert.Empty(t, high.ofKind(trace.KindInfo))
}

func TestToolRetrievalSettingErrors(t *testing.T) {
	reg := registry(t, manyTools()...)
	env := nodekind.Env{Keywords: search.Keywords{}, Model: llm.Model{LLM: scripted.Texts("x"), Provider: "scripted"}, Tools: reg}
	for _, tc := range []struct {
		cfg  executor.ToolRetrieval
		key  string
		text string
	}{
		{executor.ToolRetrieval{MaxTools: -1}, "tool_retrieval.max_tools", "must be 1 or more"},
		{executor.ToolRetrieval{Method: "tfidf"}, "tool_retrieval.method", `"bm25", "embedding", "hybrid"`},
		{executor.ToolRetrieval{FirstCall: "some"}, "tool_retrieval.first_call", `want "retrieve" or "all"`},
		{executor.ToolRetrieval{Always: []string{"nope"}}, "tool_retrieval.always", `no tool "nope"`},
		{executor.ToolRetrieval{Always: []string{" "}}, "tool_retrieval.always", "entry 1 is empty"},
		{executor.ToolRetrieval{Method: "embedding"}, "tool_retrieval.method", `provider "scripted"`},
	} {
		_, err := executor.NewLoop(env, executor.ReActConfig{ToolRetrieval: tc.cfg})
		var se *config.SettingError
		require.ErrorAs(t, err, &se, "%+v", tc.cfg)
		assert.Equal(t, tc.key, se.Key)
		assert.ErrorIs(t, err, config.ErrSettings)
		assert.ErrorContains(t, err, tc.text)
	}
}

func TestToolRetrievalDecodesFromSettings(t *testing.T) {
	var cfg executor.ReActConfig
	require.NoError(t, config.Decode(map[string]any{"tool_retrieval": map[string]any{
		"max_tools": 8, "method": "hybrid", "always": []any{"calculator"}, "first_call": "all", "sticky": false, "disabled": false,
	}}, &cfg))
	assert.Equal(t, executor.ToolRetrieval{MaxTools: 8, Method: "hybrid", Always: []string{"calculator"}, FirstCall: "all", Sticky: boolp(false)}, cfg.ToolRetrieval)
	err := config.Decode(map[string]any{"tool_retrieval": map[string]any{"max_tool": 8}}, &cfg)
	assert.ErrorContains(t, err, "max_tool")
}

// embedModel is a recorded model (newRecModel) whose client offers embeddings (as
// langchaingo's OpenAI client does): each text's vector counts the
// occurrences of a few words.
type embedModel struct {
	*llmtest.Recorder
	calls int
}

var embedWords = []string{"weather", "forecast", "rain", "money", "currency", "email", "flight", "film"}

func (m *embedModel) CreateEmbedding(_ context.Context, texts []string) ([][]float32, error) {
	m.calls++
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, len(embedWords)+1)
		v[len(embedWords)] = 0.01
		for j, w := range embedWords {
			v[j] = float32(strings.Count(strings.ToLower(t), w))
		}
		out[i] = v
	}
	return out, nil
}

func TestEmbeddingMethodUsesTheModelsEmbeddings(t *testing.T) {
	sm, err := scripted.New(text("Thought: Done.\nFinal Answer: rain", "Thought: Done.\nFinal Answer: rain"))
	require.NoError(t, err)
	m := &embedModel{Recorder: newRecModel(sm)}
	cfg := executor.ReActConfig{ToolRetrieval: executor.ToolRetrieval{MaxTools: 1, Method: "embedding"}}
	l, err := executor.NewLoop(nodekind.Env{Keywords: search.Keywords{}, Model: llm.Model{LLM: m}, Tools: registry(t, manyTools()...)}, cfg)
	require.NoError(t, err)
	for range 2 {
		_, err = l.Run(context.Background(), hookedState(state.Task{Question: "will it rain?"}), executor.Input{Task: "Is rain in the forecast?"})
		require.NoError(t, err)
	}
	for _, r := range requests(m.Recorder) {
		assert.Equal(t, []string{"find_tools", "weather"}, shownTools(r), "the best tool, and the search tool")
	}
	assert.Equal(t, 3, m.calls, "the tools are embedded once per loop, then one query per call")
}

func TestEmbeddingFailureFallsBackToEveryTool(t *testing.T) {
	sm, err := scripted.New(text("Thought: Done.\nFinal Answer: rain"))
	require.NoError(t, err)
	m := &failingEmbedModel{Recorder: newRecModel(sm)}
	cfg := executor.ReActConfig{ToolRetrieval: executor.ToolRetrieval{MaxTools: 2, Method: "hybrid"}}
	l, err := executor.NewLoop(nodekind.Env{Keywords: search.Keywords{}, Model: llm.Model{LLM: m}, Tools: registry(t, manyTools()...)}, cfg)
	require.NoError(t, err)
	rec := &trace.Recorder{}
	ctx := trace.WithTracer(context.Background(), trace.New("test", rec))
	out, err := l.Run(ctx, hookedState(state.Task{Question: "q"}), executor.Input{Task: "Is rain in the forecast?"})
	require.NoError(t, err)
	assert.True(t, out.Complete)
	assert.Len(t, shownTools(requests(m.Recorder)[0]), 20)
	var texts []string
	for _, e := range rec.OfKind(trace.KindGuard) {
		texts = append(texts, fmt.Sprint(e.Data["guard"], ": ", e.Text))
	}
	assert.Contains(t, strings.Join(texts, "\n"), "tool_retrieval_fallback: tool retrieval: showing every tool: retrieve: embedding failed")
}

type failingEmbedModel struct{ *llmtest.Recorder }

func (failingEmbedModel) CreateEmbedding(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("embeddings are not enabled for this key")
}

func TestStickySelectionKeepsThePromptWhileItsTopToolIsShown(t *testing.T) {
	for _, sticky := range []bool{true, false} {
		cfg := retrievalCfg(2)
		cfg.ToolRetrieval.Sticky = boolp(sticky)
		h := runScript(t, cfg, text(
			"Thought: First the weather forecast in Delhi.\nAction: weather\nAction Input: Delhi",
			"Thought: Done.\nFinal Answer: hot and smoggy",
		), "What are the weather and the air pollution index in Delhi? Then email me the result.", manyTools()...)
		require.NoError(t, h.err)
		reqs := requests(h.model)
		require.Len(t, reqs, 2)
		assert.Equal(t, []string{"air_quality", "find_tools", "weather"}, shownTools(reqs[0]))
		if sticky {
			assert.Equal(t, toolsKey(reqs[0]), toolsKey(reqs[1]), "the best new tool (air_quality) is still shown: the system prompt is kept byte for byte")
		} else {
			assert.Equal(t, []string{"air_quality", "find_tools", "send_email", "weather"}, shownTools(reqs[1]), "selected afresh: top 2 new tools plus the used one and the search tool")
		}
	}
}

func TestStickySelectionMovesWhenTheTopToolIsNotShown(t *testing.T) {
	for _, sticky := range []bool{true, false} {
		cfg := retrievalCfg(1)
		cfg.ToolRetrieval.Sticky = boolp(sticky)
		h := runScript(t, cfg, text(
			"Thought: Got it; next I must send an email message to Ana with the forecast.\nAction: weather\nAction Input: Rome",
			"Thought: Done.\nFinal Answer: sent",
		), "Check the forecast in Rome.", manyTools()...)
		require.NoError(t, h.err)
		reqs := requests(h.model)
		assert.Equal(t, []string{"find_tools", "weather"}, shownTools(reqs[0]), "sticky %v", sticky)
		assert.Equal(t, []string{"find_tools", "send_email", "weather"}, shownTools(reqs[1]), "sticky %v: the new best tool is selected", sticky)
	}
}
