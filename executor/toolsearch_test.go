package executor_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/memstore"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools/search"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// healthTask matches neither air_quality nor qr_code by its words.
const healthTask = "Is it healthy to run outside in Delhi today?"

// searchThen scripts a search for query, then a call of tool, then a
// final answer; the thoughts name no tool.
func searchThen(query, tool string) scripted.Script {
	return text(
		"Thought: None of the listed tools fits, so I look for one.\nAction: find_tools\nAction Input: "+query,
		"Thought: Now I call it.\nAction: "+tool+"\nAction Input: Delhi",
		"Thought: Done.\nFinal Answer: ok",
	)
}

func TestSearchToolFindsAToolThatWasNotShownAndKeepsItShown(t *testing.T) {
	for _, tc := range []struct{ query, tool, other string }{
		{"air pollution index of a city", "air_quality", "qr_code"},
		{"make a QR code image", "qr_code", "air_quality"},
	} {
		h := runScript(t, retrievalCfg(3), searchThen(tc.query, tc.tool), healthTask, manyTools()...)
		require.NoError(t, h.err)
		require.True(t, h.out.Complete)
		reqs := requests(h.model)
		require.Len(t, reqs, 3)
		assert.Contains(t, shownTools(reqs[0]), "find_tools", "the search tool is shown on every call")
		assert.NotContains(t, shownTools(reqs[0]), tc.tool, "the task alone does not retrieve %s", tc.tool)
		obs := h.out.Entries[0].Observation
		assert.Contains(t, obs, fmt.Sprintf("match %q", tc.query))
		assert.Contains(t, obs, "- "+tc.tool+": ", "the search returns the tool's name and description")
		assert.Contains(t, obs, `Input schema: {"properties":`, "and its input schema")
		for i := 1; i < 3; i++ {
			assert.Contains(t, shownTools(reqs[i]), tc.tool, "call %d shows the tool the search found", i+1)
			assert.Contains(t, shownTools(reqs[i]), "find_tools")
			assert.NotContains(t, shownTools(reqs[i]), tc.other, "call %d: only what the search found is added", i+1)
		}
		assert.Empty(t, guardsNamed(h, executor.GuardToolNotShown), "the tool was shown when it was called")
	}
}

func TestSearchToolDescriptionSaysMoreToolsExist(t *testing.T) {
	for _, lang := range []string{executor.LanguageEnglish, executor.LanguageChinese} {
		cfg := retrievalCfg(3)
		cfg.Language = lang
		h := runScript(t, cfg, text("Thought: x\nAction: find_tools\nAction Input: air pollution", "Thought: Done.\nFinal Answer: ok"), healthTask, manyTools()...)
		require.NoError(t, h.err)
		system := requests(h.model)[0].msgs[0].Parts[0].(llms.TextContent).Text
		want := map[string][]string{
			executor.LanguageEnglish: {"Finds tools that are not listed", "out of 20", "- air_quality: "},
			executor.LanguageChinese: {"查找未列出的工具", "共有 20 个工具", "- air_quality: "},
		}[lang]
		assert.Contains(t, system, want[0], lang)
		assert.Contains(t, system, want[1], lang)
		assert.Contains(t, h.out.Entries[0].Observation, want[2], lang)
	}
}

func TestSearchToolInToolsMode(t *testing.T) {
	cfg := retrievalCfg(3)
	cfg.Mode = executor.ModeTools
	s := scripted.Script{Replies: []scripted.Reply{
		{Text: "I need a tool for the air.", ToolCalls: []scripted.ToolCall{{Name: "find_tools", Arguments: map[string]any{"query": "air pollution index"}}}},
		{Text: "Now the index.", ToolCalls: []scripted.ToolCall{{Name: "air_quality", Arguments: map[string]any{"input": "Delhi"}}}},
		{Text: "Final Answer: poor"},
	}}
	h := runScript(t, cfg, s, healthTask, manyTools()...)
	require.NoError(t, h.err)
	require.True(t, h.out.Complete)
	names := func(r request) []string {
		var out []string
		for _, tl := range r.opts.Tools {
			out = append(out, tl.Function.Name)
		}
		return out
	}
	reqs := requests(h.model)
	require.Len(t, reqs, 3)
	assert.Contains(t, names(reqs[0]), "find_tools")
	assert.NotContains(t, names(reqs[0]), "air_quality")
	assert.Contains(t, names(reqs[1]), "air_quality", "the found tool is passed natively on the next call")
	assert.Empty(t, guardsNamed(h, executor.GuardToolNotShown))
}

func TestSearchToolIsAddedOnlyWhenRetrievalIsOnAndNotTurnedOff(t *testing.T) {
	env := nodekind.Env{Keywords: search.Keywords{}, Model: llm.Model{LLM: scripted.Texts("x")}, Tools: registry(t, manyTools()...)}
	for _, tc := range []struct {
		name string
		cfg  executor.ToolRetrieval
		want bool
	}{
		{"default, 20 tools over max_tools 12", executor.ToolRetrieval{}, true},
		{"max_tools 20: retrieval off", executor.ToolRetrieval{MaxTools: 20}, false},
		{"disabled", executor.ToolRetrieval{Disabled: true}, false},
		{"search_tool false", executor.ToolRetrieval{SearchTool: boolp(false)}, false},
		{"renamed", executor.ToolRetrieval{SearchToolName: "tool_search"}, true},
	} {
		l, err := executor.NewLoop(env, executor.ReActConfig{ToolRetrieval: tc.cfg})
		require.NoError(t, err, tc.name)
		name := tc.cfg.SearchToolName
		if name == "" {
			name = executor.DefaultSearchToolName
		}
		if tc.want {
			assert.Contains(t, l.Tools(), name, tc.name)
			assert.Len(t, l.Tools(), 21, tc.name)
		} else {
			assert.Len(t, l.Tools(), 20, tc.name)
		}
	}
}

func TestSearchToolWithSearchToolOffShowsTheSamePromptAsBefore(t *testing.T) {
	cfg := retrievalCfg(3)
	cfg.ToolRetrieval.SearchTool = boolp(false)
	h := runScript(t, cfg, text("Thought: Done.\nFinal Answer: ok"), "What's the weather forecast in Rome?", manyTools()...)
	require.NoError(t, h.err)
	assert.NotContains(t, h.prompt(0), "find_tools")
	assert.Contains(t, shownTools(requests(h.model)[0]), "weather")
}

func TestSearchToolSettingErrors(t *testing.T) {
	env := nodekind.Env{Keywords: search.Keywords{}, Model: llm.Model{LLM: scripted.Texts("x")}, Tools: registry(t, manyTools()...)}
	for _, tc := range []struct {
		cfg       executor.ToolRetrieval
		key, text string
	}{
		{executor.ToolRetrieval{SearchResults: -1}, "tool_retrieval.search_results", "must be 1 or more"},
		{executor.ToolRetrieval{SearchToolName: "Recall"}, "tool_retrieval.search_tool_name", "recall tool"},
		{executor.ToolRetrieval{SearchToolName: "find tools"}, "tool_retrieval.search_tool_name", "no spaces"},
		{executor.ToolRetrieval{SearchToolName: "QR-Code"}, "tool_retrieval.search_tool_name", "the pipeline has a tool of that name"},
	} {
		_, err := executor.NewLoop(env, executor.ReActConfig{ToolRetrieval: tc.cfg})
		var se *config.SettingError
		require.ErrorAs(t, err, &se, "%+v", tc.cfg)
		assert.Equal(t, tc.key, se.Key)
		assert.ErrorIs(t, err, config.ErrSettings)
		assert.ErrorContains(t, err, tc.text)
	}
}

func TestSearchToolDecodesFromSettings(t *testing.T) {
	var cfg executor.ReActConfig
	require.NoError(t, config.Decode(map[string]any{"tool_retrieval": map[string]any{
		"search_tool": false, "search_tool_name": "tool_search", "search_results": 3,
	}}, &cfg))
	assert.Equal(t, executor.ToolRetrieval{SearchTool: boolp(false), SearchToolName: "tool_search", SearchResults: 3}, cfg.ToolRetrieval)
}

func TestSearchToolInputsAndResultCount(t *testing.T) {
	cfg := retrievalCfg(3)
	cfg.ToolRetrieval.SearchResults = 2
	h := runScript(t, cfg, text(
		"Thought: a\nAction: find_tools\nAction Input: ",
		"Thought: b\nAction: find_tools\nAction Input: {\"query\": 3}",
		"Thought: c\nAction: find_tools\nAction Input: zzyzx quux",
		"Thought: d\nAction: find_tools\nAction Input: {\"query\": \"city\"}",
		"Thought: Done.\nFinal Answer: ok",
	), healthTask, manyTools()...)
	require.NoError(t, h.err)
	e := h.out.Entries
	require.Len(t, e, 5)
	assert.Contains(t, e[0].Observation, "describe the capability you need")
	assert.Contains(t, e[1].Observation, "not valid JSON")
	assert.Contains(t, e[2].Observation, `No tool matches "zzyzx quux"`)
	assert.Contains(t, e[3].Observation, `2 tools match "city"`, "search_results caps the matches")
	assert.Equal(t, 2, countLines(e[3].Observation, "- "))
	last := shownTools(requests(h.model)[4])
	assert.LessOrEqual(t, len(last), 3+1+2, "max_tools, the search tool and the 2 found")
}

// countLines counts the lines of s that begin with prefix.
func countLines(s, prefix string) int {
	n := 0
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, prefix) {
			n++
		}
	}
	return n
}

// A resumed thread shows the same tools: the found tools are read from
// the searches the journal replays, not from state kept aside.
func TestSearchToolReplaysTheSameTools(t *testing.T) {
	store := memstore.New()
	ctx := context.Background()
	require.NoError(t, store.Create(ctx, journal.Thread{Name: "t", Status: journal.StatusRunning}))
	run := func(m llms.Model) (executor.Outcome, [][]string) {
		j, err := journal.Open(ctx, store, "t")
		require.NoError(t, err)
		l, err := executor.NewLoop(nodekind.Env{Keywords: search.Keywords{}, Model: llm.Model{LLM: m}, Tools: registry(t, manyTools()...)}, retrievalCfg(3))
		require.NoError(t, err)
		rec := &trace.Recorder{}
		rctx := journal.WithScope(journal.WithRun(trace.WithTracer(ctx, trace.New("test", rec)), j), journal.NodeScope(1, "act"))
		out, err := l.Run(rctx, hookedState(state.Task{Question: healthTask}), executor.Input{NodeID: "act", Task: healthTask})
		require.NoError(t, err)
		var shown [][]string
		for _, e := range rec.OfKind(trace.KindInfo) {
			if names, ok := e.Data["tools"].([]string); ok {
				shown = append(shown, names)
			}
		}
		return out, shown
	}
	sm, err := scripted.New(searchThen("air pollution index of a city", "air_quality"))
	require.NoError(t, err)
	first, shownFirst := run(sm)
	require.True(t, first.Complete)
	require.NotEmpty(t, shownFirst)
	assert.Contains(t, shownFirst[len(shownFirst)-1], "air_quality")

	dead, err := scripted.New(scripted.Script{Replies: []scripted.Reply{{Error: "no live calls in a replay", Times: 100}}})
	require.NoError(t, err)
	again, shownAgain := run(dead)
	require.True(t, again.Complete, again.Reason)
	assert.Equal(t, first.Entries, again.Entries)
	assert.Equal(t, shownFirst, shownAgain, "the replay shows the same tools on every call")
}
