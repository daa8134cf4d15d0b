package executor_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

func TestInvalidSettingsNameTheKey(t *testing.T) {
	cases := []struct {
		name     string
		settings map[string]any
		tools    []tools.Tool
		key      string
		contains string
	}{
		{"unknown mode", map[string]any{"mode": "json"}, nil, "mode", `want "text" or "tools"`},
		{"unknown language", map[string]any{"language": "fr"}, nil, "language", `"en" or "zh"`},
		{"unknown format", map[string]any{"format": "xml"}, nil, "format", `"react" or "react-paper"`},
		{"negative iterations", map[string]any{"max_iterations": -1}, nil, "max_iterations", "must not be negative"},
		{"negative keep_steps", map[string]any{"keep_steps": -2}, nil, "keep_steps", "0 keeps every step"},
		{"misspelt key", map[string]any{"max_iteration": 3}, nil, "max_iteration", "max_iterations"},
		{"tool not in the pipeline", map[string]any{"tools": []any{"echo", "serch"}}, nil, "tools", `unknown tool "serch"`},
		{"no tools at all", map[string]any{}, []tools.Tool{}, "tools", "at least one tool"},
		{"template typo", map[string]any{"prompt": "Task: {{.Extra.Taks}}"}, nil, "prompt", "Taks"},
		{"template syntax error", map[string]any{"system": "{{if}}"}, nil, "system", "template"},
		{"inline text and file", map[string]any{"examples": "x", "examples_file": "ex.txt"}, nil, "examples", "not both"},
		{"missing file", map[string]any{"system_file": "nope.tmpl"}, nil, "system_file", "nope.tmpl"},
		{"unknown style", map[string]any{"style": "prose"}, nil, "style", `"chat" or "completion"`},
		{"completion style in tools mode", map[string]any{"style": "completion", "mode": "tools"}, nil, "mode", `needs mode "text"`},
		{"completion style in the react format", map[string]any{"style": "completion", "format": "react"}, nil, "format", `needs format "react-paper"`},
		{"completion style in Chinese", map[string]any{"style": "completion", "language": "zh"}, nil, "language", `needs language "en"`},
		{"unknown compaction", map[string]any{"compaction": "sliding"}, nil, "compaction", `want "block", "window" or "summarize", got "sliding"`},
		{"summarize compaction in completion style", map[string]any{"style": "completion", "compaction": "summarize"}, nil, "compaction", `compacts as "window"`},
		{"negative summary tokens", map[string]any{"compaction": "summarize", "summary_max_tokens": -5}, nil, "summary_max_tokens", "must not be negative"},
		{"block compaction in completion style", map[string]any{"style": "completion", "compaction": "block"}, nil, "compaction", `compacts as "window"`},
		{"negative compaction budget", map[string]any{"compaction_budget": -1}, nil, "compaction_budget", "must not be negative"},
		{"observation limit below -1", map[string]any{"observation_limit": -2}, nil, "observation_limit", "-1 (no limit)"},
		{"missing examples file", map[string]any{"examples_file": "ex.txt"}, nil, "examples_file", "ex.txt"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := tc.tools
			if ts == nil {
				ts = []tools.Tool{echoTool()}
			}
			_, err := executor.NewReAct(nodekind.Env{Tools: registry(t, ts...), BaseDir: t.TempDir()}, nodekind.Spec{ID: "act", Type: "react", Settings: tc.settings})
			require.Error(t, err)
			assert.ErrorIs(t, err, config.ErrSettings)
			var se *config.SettingError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tc.key, se.Key)
			assert.Contains(t, err.Error(), tc.contains)
		})
	}
}

func TestToolsSettingSelectsASubset(t *testing.T) {
	l, err := executor.NewLoop(nodekind.Env{Tools: registry(t, echoTool(), failTool(), panicTool())}, executor.ReActConfig{Tools: []string{"Echo", "panic"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"echo", "panic"}, l.Tools())
	l, err = executor.NewLoop(nodekind.Env{Tools: registry(t, echoTool(), failTool())}, executor.ReActConfig{})
	require.NoError(t, err)
	assert.Equal(t, []string{"echo", "fail"}, l.Tools())
}

// A node's tools setting naming a tool the pipeline lacks gets the
// nearest of the pipeline's tools, or where to declare it.
func TestAnUnknownToolOfANodeSuggestsThePipelines(t *testing.T) {
	_, err := executor.NewLoop(nodekind.Env{Tools: registry(t, echoTool(), failTool())}, executor.ReActConfig{Tools: []string{"ecko"}})
	require.ErrorIs(t, err, tools.ErrUnknownTool)
	require.ErrorIs(t, err, config.ErrSettings)
	assert.Contains(t, err.Error(), `unknown tool "ecko" (did you mean "echo"? the pipeline's tools: echo, fail;`)
	_, err = executor.NewLoop(nodekind.Env{Tools: registry(t)}, executor.ReActConfig{Tools: []string{"echo"}})
	require.ErrorIs(t, err, tools.ErrUnknownTool)
	assert.Contains(t, err.Error(), `unknown tool "echo": the pipeline declares no tools; add it to the pipeline's tools: block`)
}

// systemPrompt runs one turn and returns the system message.
func systemPrompt(t *testing.T, env nodekind.Env, cfg executor.ReActConfig) string {
	t.Helper()
	sm, err := scripted.New(text("Final Answer: a"))
	require.NoError(t, err)
	m := newRecModel(sm)
	env.Model = llm.Model{LLM: m}
	l, err := executor.NewLoop(env, cfg)
	require.NoError(t, err)
	_, err = l.Run(t.Context(), hookedState(state.Task{}), executor.Input{Task: "q"})
	require.NoError(t, err)
	msg := requests(m)[0].msgs[0]
	require.Equal(t, llms.ChatMessageTypeSystem, msg.Role)
	return msg.Parts[0].(llms.TextContent).Text
}

func TestEmbeddedPromptVariants(t *testing.T) {
	schema := `{"properties":{"text":{"type":"string"}},"required":["text"],"type":"object"}`
	cases := []struct {
		cfg         executor.ReActConfig
		contains    []string
		notContains []string
	}{
		{executor.ReActConfig{}, []string{"### schema\ntest tool schema\nInput schema: " + schema, "Action: <one of: echo, schema>",
			"Action Input: <the tool input", "Final Answer: <final answer>", "Never write \"Observation:\" yourself", "Action Input: {\"expression\": \"412 + 305\"}"},
			[]string{"Finish["}},
		{executor.ReActConfig{Format: executor.FormatPaper}, []string{"Action: <tool name>[<tool input>]", "Action: Finish[<final answer>]", "Action: calculator[412 + 305]"},
			[]string{"Action Input:"}},
		{executor.ReActConfig{Language: "zh"}, []string{"输入格式（JSON Schema）：" + schema, "行动：<以下之一：echo, schema>", "行动输入：", "最终答案：717", "绝不要自己写“观察：”"},
			[]string{"Thought:"}},
		{executor.ReActConfig{Language: "zh", Format: executor.FormatPaper}, []string{"行动：<工具名>[<工具输入>]", "行动：Finish[717]"}, []string{"行动输入："}},
		{executor.ReActConfig{Mode: executor.ModeTools}, []string{"Final Answer: <answer>", "several tools in one turn"}, []string{"Action Input", "## Examples", "### echo"}},
		{executor.ReActConfig{Mode: executor.ModeTools, Language: "zh"}, []string{"最终答案：<答案>"}, []string{"Final Answer"}},
	}
	for _, tc := range cases {
		t.Run(tc.cfg.Mode+"/"+tc.cfg.Language+"/"+tc.cfg.Format, func(t *testing.T) {
			sys := systemPrompt(t, nodekind.Env{Tools: registry(t, echoTool(), schemaTool{&fakeTool{name: "schema"}})}, tc.cfg)
			for _, s := range tc.contains {
				assert.Contains(t, sys, s)
			}
			for _, s := range tc.notContains {
				assert.NotContains(t, sys, s)
			}
		})
	}
}

func TestPromptOverrides(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ex.txt"), []byte("EXAMPLE FROM FILE"), 0o644))
	env := nodekind.Env{Tools: registry(t, echoTool()), BaseDir: dir}
	sys := systemPrompt(t, env, executor.ReActConfig{PromptSources: nodekind.PromptSources{System: "Tools: {{.Extra.ToolNames}}. {{.Extra.Examples}} ({{.Extra.Format}}, {{.Extra.Mode}})"}, ExamplesFile: "ex.txt"})
	assert.Equal(t, "Tools: echo. EXAMPLE FROM FILE (react, text)", sys)
	sys = systemPrompt(t, env, executor.ReActConfig{Mode: executor.ModeTools, Examples: "TOOLS EXAMPLE"})
	assert.Contains(t, sys, "Examples:\n\nTOOLS EXAMPLE")
}

func TestFinalizePromptOverride(t *testing.T) {
	s := scripted.Script{Replies: []scripted.Reply{
		{Text: "Thought: t\nAction: echo\nAction Input: a"},
		{Role: "finalize", Text: "just this"},
	}}
	cfg := executor.ReActConfig{MaxIterations: 1, FinalizePrompt: "WHY={{.Extra.Why}} PAD={{.Extra.Scratchpad}}"}
	h := runScript(t, cfg, s, "q", echoTool())
	require.NoError(t, h.err)
	assert.Equal(t, "WHY=you used all 1 steps you were allowed PAD=Thought: t\nAction: echo\nAction Input: a\nObservation: [echo] echo: a\n", h.prompt(-1))
	assert.Equal(t, "just this", h.out.Answer, "a reply without the label is the answer as a whole")
}
