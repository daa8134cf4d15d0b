package pipeline_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/builtin"
	"github.com/planner-engine/planner/tools/toolset"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reactPipeline is a one-node ReAct pipeline with tools; each case of the
// tests below changes one line of it.
const reactPipeline = `name: t
tools:
  - calculator
  - {name: search, corpus: demo}
nodes:
  - id: act
    type: react
    max_iterations: 8
edges:
  - {from: START, to: act}
  - {from: act, to: END}
`

// firstHourCase is a pipeline with one mistake in it, what building it
// must say (after "FILE:LINE: "), and the factory that builds its tools.
type firstHourCase struct {
	name, old, new string
	line           int
	want           string
	tools          pipeline.ToolFactory
}

func buildMistake(t *testing.T, tc firstHourCase) (string, error) {
	t.Helper()
	body := strings.Replace(reactPipeline, tc.old, tc.new, 1)
	require.NotEqual(t, reactPipeline, body, "the case changes the pipeline")
	path := write(t, "p.yaml", body)
	cfg, err := config.Load(path)
	if err == nil {
		_, err = pipeline.Build(context.Background(), cfg, pipeline.Options{Registry: planner.NodeKinds(), Tools: tc.tools,
			Models: llm.NewFactory(llm.WithProvider("scripted", scripted.Label, scripted.Build))})
	}
	return path, err
}

func TestFirstHourMistakesSuggestTheNearestName(t *testing.T) {
	families := toolset.New(append(toolset.Basic(), builtin.Search())...)
	cases := []firstHourCase{
		{name: "node setting", old: "max_iterations: 8", new: "max_iteration: 8", line: 8, tools: builtin.Factory{},
			want: `node "act" (react): unknown setting "max_iteration" (did you mean "max_iterations"? known settings: `},
		{name: "node type", old: "type: react", new: "type: reactt", line: 7, tools: builtin.Factory{},
			want: `node "act": unknown node type "reactt" (did you mean "react"? known types: autopilot, cot, `},
		{name: "tool setting", old: "corpus: demo", new: "corpsu: demo", line: 4, tools: builtin.Factory{},
			want: `tool "search": unknown setting "corpsu" (did you mean "corpus"? known settings: corpus, snippet_length, top_k)`},
		{name: "tool name", old: "  - calculator", new: "  - calculater", line: 3, tools: families,
			want: `unknown tool "calculater" (did you mean "calculator"? known tools: ` + strings.Join(families.Names(), ", ") + ")"},
		{name: "node llm key", old: "max_iterations: 8", new: "llm:\n      provider: scripted\n      scirpt: s.yaml", line: 10, tools: builtin.Factory{},
			want: `node "act": unknown setting "llm.scirpt" (did you mean "llm.script"? known settings of llm: api_key_env, `},
		{name: "edge key", old: "{from: act, to: END}", new: "{from: act, too: END}", line: 11, tools: builtin.Factory{},
			want: `unknown key "too" in edges[1] (did you mean "to"? known keys: from, to)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path, err := buildMistake(t, tc)
			require.ErrorIs(t, err, config.ErrInvalid)
			assert.Contains(t, err.Error(), fmt.Sprintf("%s:%d: %s", path, tc.line, tc.want))
			assert.NotContains(t, err.Error(), "\n", "one line")
		})
	}
}

func TestAnUnknownToolFarFromEveryNameKeepsTheFactorysMessage(t *testing.T) {
	families := toolset.New(toolset.Calculator())
	path, err := buildMistake(t, firstHourCase{old: "  - calculator", new: "  - abacus_pro", tools: families})
	require.ErrorIs(t, err, tools.ErrUnknownTool)
	assert.Contains(t, err.Error(), path+`:3: tool "abacus_pro": unknown tool "abacus_pro" (registered tools: calculator; planner.WithTools registers them)`)
}

func TestNodeSettingsOfTheWrongTypeSayWhatTheyWant(t *testing.T) {
	cases := []firstHourCase{
		{name: "whole number", old: "max_iterations: 8", new: "max_iterations: ten", line: 8,
			want: `node "act" (react): setting "max_iterations": want a whole number, got "ten"`},
		{name: "number", old: "max_iterations: 8", new: "temperature: warm", line: 8,
			want: `node "act" (react): setting "temperature": want a number, got "warm"`},
		{name: "list", old: "max_iterations: 8", new: "tools: {calculator: yes}", line: 8,
			want: `node "act" (react): setting "tools": want a list, each item text, got a mapping`},
		{name: "node llm duration", old: "max_iterations: 8", new: "llm: {timeout: soon}", line: 8,
			want: `node "act": setting "llm.timeout": want a duration such as 30s, 1m30s or 2h, got "soon"`},
		{name: "node llm true or false", old: "max_iterations: 8", new: "llm: {prompt_cache: maybe}", line: 8,
			want: `node "act": setting "llm.prompt_cache": want true or false, got "maybe"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.tools = builtin.Factory{}
			path, err := buildMistake(t, tc)
			require.ErrorIs(t, err, config.ErrInvalid)
			assert.Contains(t, err.Error(), fmt.Sprintf("%s:%d: %s", path, tc.line, tc.want))
			for _, internal := range []string{"expected type", "' expected", "error(s) decoding", "decoding failed", "strconv.", "cannot parse", "invalid settings", "\n"} {
				assert.NotContains(t, err.Error(), internal)
			}
		})
	}
}
