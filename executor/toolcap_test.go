package executor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/mcp"
	"github.com/planner-engine/planner/tools/mcp/mcptest"
	"github.com/planner-engine/planner/tools/search"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// manyMCPTools connects to an MCP server listing n tools (mcptest) and
// returns its tools.
func manyMCPTools(t *testing.T, n int) []tools.Tool {
	t.Helper()
	c, err := mcp.Connect(context.Background(), mcp.Config{URL: mcptest.ManyToolsServer(t, n), Name: "many"})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, c.Close()) })
	ts := c.PlannerTools()
	require.Len(t, ts, n)
	return ts
}

// shownPerCall returns how many tools each model call of h showed: the
// tool headings of the system prompt (text mode) or the native tools
// (tools mode); and the longest prompt, in bytes.
func shownPerCall(h *harness) (shown []int, longest int) {
	for _, r := range requests(h.model) {
		n := len(r.opts.Tools)
		if n == 0 {
			n = len(shownTools(r))
		}
		shown = append(shown, n)
		native, _ := json.Marshal(r.opts.Tools)
		longest = max(longest, len(r.text())+len(native))
	}
	return shown, longest
}

// TestTenThousandMCPToolsAreNotAllShown runs a loop over an MCP server
// that lists 10,000 tools with every setting that used to show them all
// (retrieval disabled, first_call all, a task that matches no tool, in
// text and tools mode): no call shows more than max_shown tools, and
// the trace says that the cap applied and how to change it.
func TestTenThousandMCPToolsAreNotAllShown(t *testing.T) {
	ts := manyMCPTools(t, 10_000)
	target := mcptest.ManyToolName(1234) // payroll_get_report_1
	textCall := func(tool string) scripted.Script {
		return text(fmt.Sprintf("Thought: I will use %s.\nAction: %s\nAction Input: {\"query\": \"march\"}", tool, tool), "Thought: done.\nFinal Answer: ok")
	}
	toolsCall := scripted.Script{Replies: []scripted.Reply{
		{ToolCalls: []scripted.ToolCall{{ID: "1", Name: target, Arguments: map[string]any{"query": "march"}}}},
		{Text: "ok"},
	}}
	matching := "Get the payroll report for shard 1."
	unmatched := "Say hello to the moon."
	tests := []struct {
		name   string
		cfg    executor.ReActConfig
		script scripted.Script
		task   string
		guards []string // guard events that must be there
	}{
		{"default", executor.ReActConfig{}, textCall(target), matching, nil},
		{"no tool matches", executor.ReActConfig{}, textCall(target), unmatched, []string{executor.GuardToolRetrievalFallback, executor.GuardToolCap}},
		{"first_call all", executor.ReActConfig{ToolRetrieval: executor.ToolRetrieval{FirstCall: executor.FirstCallAll}}, textCall(target), matching, []string{executor.GuardToolCap}},
		{"disabled", executor.ReActConfig{ToolRetrieval: executor.ToolRetrieval{Disabled: true}}, textCall(target), matching, []string{executor.GuardToolCap}},
		{"tools mode, no tool matches", executor.ReActConfig{Mode: executor.ModeTools}, toolsCall, unmatched, []string{executor.GuardToolCap}},
		{"tools mode, disabled", executor.ReActConfig{Mode: executor.ModeTools, ToolRetrieval: executor.ToolRetrieval{Disabled: true}}, toolsCall, matching, []string{executor.GuardToolCap}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := runScript(t, tc.cfg, tc.script, tc.task, ts...)
			require.NoError(t, h.err)
			require.True(t, h.out.Complete)
			shown, longest := shownPerCall(h)
			require.NotEmpty(t, shown)
			for i, n := range shown {
				assert.Positive(t, n, "call %d shows tools", i+1)
				assert.LessOrEqual(t, n, executor.DefaultMaxShown, "call %d", i+1)
			}
			// 10,000 tools took 1.9 MB of prompt; the cap keeps it near
			// 128 tools' worth, and the default far below.
			assert.Less(t, longest, 64<<10, "the longest prompt, in bytes")
			t.Logf("tools shown per call %v, longest prompt %d bytes, guards %v", shown, longest, h.guards())
			for _, g := range tc.guards {
				evs := guardsNamed(h, g)
				require.NotEmpty(t, evs, "guard %s", g)
				if g == executor.GuardToolCap {
					assert.Contains(t, evs[0].Text, "max_shown (128)")
					assert.Contains(t, evs[0].Text, "set tool_retrieval.max_shown to 10000 or more to show every tool")
				}
			}
			// The tool called runs, shown or not.
			assert.Contains(t, h.prompt(-1), target+`: {"query":"march"}`)
		})
	}
}

func TestMaxShownSettings(t *testing.T) {
	ts := manyTools() // 20 tools
	// Above max_shown, disabled turns retrieval on anyway; at or below,
	// it shows every tool.
	h := runScript(t, executor.ReActConfig{ToolRetrieval: executor.ToolRetrieval{Disabled: true, MaxTools: 5, MaxShown: 10}},
		text("Thought: done.\nFinal Answer: ok"), "What is ACME's share price?", ts...)
	require.NoError(t, h.err)
	shown, _ := shownPerCall(h)
	assert.LessOrEqual(t, shown[0], 10)
	evs := guardsNamed(h, executor.GuardToolCap)
	require.Len(t, evs, 1)
	assert.Contains(t, evs[0].Text, "tool retrieval is on although disabled is set: the loop has 20 tools, more than max_shown (10)")
	h = runScript(t, executor.ReActConfig{ToolRetrieval: executor.ToolRetrieval{Disabled: true, MaxTools: 5, MaxShown: 20}},
		text("Thought: done.\nFinal Answer: ok"), "What is ACME's share price?", ts...)
	require.NoError(t, h.err)
	shown, _ = shownPerCall(h)
	assert.Equal(t, []int{20}, shown)
	assert.Empty(t, guardsNamed(h, executor.GuardToolCap))

	// A selection of many tools used is cut to max_shown, keeping the
	// tools called.
	var replies []string
	names := []string{"weather", "translate", "recipes", "geocode", "holidays", "dictionary"}
	for _, n := range names {
		replies = append(replies, fmt.Sprintf("Thought: now %s.\nAction: %s\nAction Input: x", n, n))
	}
	replies = append(replies, "Thought: done.\nFinal Answer: ok")
	h = runScript(t, executor.ReActConfig{MaxIterations: 10, ToolRetrieval: executor.ToolRetrieval{MaxTools: 3, MaxShown: 5, SearchTool: boolp(false)}},
		text(replies...), "Weather, translation, recipes, coordinates, holidays and definitions.", ts...)
	require.NoError(t, h.err)
	shown, _ = shownPerCall(h)
	for i, n := range shown {
		assert.LessOrEqual(t, n, 5, "call %d", i+1)
	}
	last := shownTools(requests(h.model)[len(shown)-1])
	assert.Subset(t, names, last, "the last call shows tools called, most recent last cut")
	require.NotEmpty(t, guardsNamed(h, executor.GuardToolCap))

	for _, tc := range []struct {
		cfg  executor.ToolRetrieval
		want string
	}{
		{executor.ToolRetrieval{MaxShown: -1}, "tool_retrieval.max_shown"},
		{executor.ToolRetrieval{MaxTools: 20, MaxShown: 10}, "10 is less than max_tools 20"},
	} {
		_, err := executor.NewLoop(nodekind.Env{Keywords: search.Keywords{}, Model: llm.Model{LLM: scripted.Texts("Final Answer: x")}, Tools: registry(t, ts...)},
			executor.ReActConfig{ToolRetrieval: tc.cfg})
		require.Error(t, err)
		assert.True(t, strings.Contains(err.Error(), tc.want), "%v", err)
	}
}
