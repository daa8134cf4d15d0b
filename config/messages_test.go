package config_test

import (
	"testing"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decoderInternals are phrases of mapstructure's own errors that no
// message of a configuration error may show.
var decoderInternals = []string{"expected type", "' expected", "error(s) decoding", "decoding failed", "strconv.", "cannot parse value as", "mapstructure", "'"}

func assertClean(t *testing.T, msg string) {
	t.Helper()
	for _, bad := range decoderInternals {
		assert.NotContains(t, msg, bad, "decoder internals leak into %q", msg)
	}
	assert.NotContains(t, msg, "\n", "one line")
}

func TestUnknownKeysSuggestTheNearestKnownKeyFirst(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"top level", "name: x\nlimit: {max_steps: 3}\nnodes:\n  - {id: a, type: direct}\n",
			`p.yaml:2: unknown key "limit" at top level (did you mean "limits"? known keys: name, description, llm, tools, limits, nodes, edges, inputs; a block kept for YAML anchors needs a name starting with x-)`},
		{"llm block", "name: x\nllm: {provider: sim, modle: m}\nnodes:\n  - {id: a, type: direct}\n",
			`p.yaml:2: unknown key "modle" in llm (did you mean "model"? known keys: provider, model, `},
		{"limits", "name: x\nlimits:\n  max_step: 3\nnodes:\n  - {id: a, type: direct}\n",
			`p.yaml:3: unknown key "max_step" in limits (did you mean "max_steps"? known keys: max_steps, timeout, max_model_calls, max_tokens, max_cost_usd, max_parallel)`},
		{"edges", "name: x\nnodes:\n  - {id: a, type: direct}\nedges:\n  - {from: START, to: a}\n  - {from: a, too: END}\n",
			`p.yaml:6: unknown key "too" in edges[1] (did you mean "to"? known keys: from, to)`},
		{"no near key", "name: x\nlimits: {whatever: 3}\nnodes:\n  - {id: a, type: direct}\n",
			`p.yaml:2: unknown key "whatever" in limits (known keys: max_steps, `},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Parse("p.yaml", []byte(tc.yaml), env(nil))
			require.ErrorIs(t, err, config.ErrInvalid)
			assert.Contains(t, err.Error(), tc.want)
			assertClean(t, err.Error()[len(`p.yaml:2: unknown key "`):])
		})
	}
}

func TestUnknownKeyOfAnInlineGraphSuggestsTheNearestKey(t *testing.T) {
	p, err := config.Parse("p.yaml", []byte("name: x\nnodes:\n  - {id: a, type: direct}\n"), env(nil))
	require.NoError(t, err)
	_, err = p.Sub("nodes[0].graph", map[string]any{"nodez": []any{}})
	require.ErrorIs(t, err, config.ErrInvalid)
	assert.Contains(t, err.Error(), `p.yaml:3: unknown key "nodez" at top level (did you mean "nodes"? known keys: name, `)
}

func TestWrongTypesSayWhatTheKeyWantsAndGot(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"int", "name: x\nlimits:\n  max_steps: five\nnodes:\n  - {id: a, type: direct}\n",
			`p.yaml:3: limits.max_steps: want a whole number, got "five"`},
		{"float", "name: x\nlimits:\n  max_cost_usd: cheap\nnodes:\n  - {id: a, type: direct}\n",
			`p.yaml:3: limits.max_cost_usd: want a number, got "cheap"`},
		{"duration", "name: x\nlimits:\n  timeout: soon\nnodes:\n  - {id: a, type: direct}\n",
			`p.yaml:3: limits.timeout: want a duration such as 30s, 1m30s or 2h, got "soon"`},
		{"bool", "name: x\nllm: {provider: anthropic, model: m, prompt_cache: maybe}\nnodes:\n  - {id: a, type: direct}\n",
			`p.yaml:2: llm.prompt_cache: want true or false, got "maybe"`},
		{"list", "name: x\ninputs: {a: 1}\nnodes:\n  - {id: a, type: direct}\n",
			`p.yaml:2: inputs: want a list, each item text, got a mapping`},
		{"mapping", "name: x\nllm: [openai]\nnodes:\n  - {id: a, type: direct}\n",
			`p.yaml:2: llm: want a mapping, got a list`},
		{"nested int", "name: x\nllm:\n  retry:\n    max_attempts: [1, 2]\nnodes:\n  - {id: a, type: direct}\n",
			`p.yaml:4: llm.retry.max_attempts: want a whole number, got a list`},
		{"list", "name: x\ninputs: {a: 1}\nnodes:\n  - {id: a, type: direct}\n",
			`p.yaml:2: inputs: want a list, each item text, got a mapping`},
		{"list item", "name: x\ninputs: [a, [b]]\nnodes:\n  - {id: a, type: direct}\n",
			`p.yaml:2: inputs[1]: want text, got a list`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Parse("p.yaml", []byte(tc.yaml), env(nil))
			require.ErrorIs(t, err, config.ErrInvalid)
			assert.Equal(t, tc.want, err.Error())
			assertClean(t, err.Error())
		})
	}
}

type allKinds struct {
	Count   int               `mapstructure:"count"`
	Ratio   float64           `mapstructure:"ratio"`
	On      *bool             `mapstructure:"on"`
	Wait    time.Duration     `mapstructure:"wait"`
	Names   []string          `mapstructure:"names"`
	Weights map[string]int    `mapstructure:"weights"`
	Block   struct{ N int }   `mapstructure:"block"`
	Labels  map[string]string `mapstructure:"labels"`
}

func TestSettingsOfTheWrongTypeSayWhatTheyWantInOneLine(t *testing.T) {
	cases := []struct {
		settings map[string]any
		key      string
		want     string
	}{
		{map[string]any{"count": "ten"}, "count", `setting "count": want a whole number, got "ten"`},
		{map[string]any{"ratio": "half"}, "ratio", `setting "ratio": want a number, got "half"`},
		{map[string]any{"on": "maybe"}, "on", `setting "on": want true or false, got "maybe"`},
		{map[string]any{"wait": "soon"}, "wait", `setting "wait": want a duration such as 30s, 1m30s or 2h, got "soon"`},
		{map[string]any{"names": []any{"a", map[string]any{"b": 1}}}, "names[1]", `setting "names[1]": want text, got a mapping`},
		{map[string]any{"names": map[string]any{"b": 1}}, "names", `setting "names": want a list, each item text, got a mapping`},
		{map[string]any{"weights": map[string]any{"a": "heavy"}}, "weights[a]", `setting "weights[a]": want a whole number, got "heavy"`},
		{map[string]any{"weights": "heavy"}, "weights", `setting "weights": want a mapping, each value a whole number, got "heavy"`},
		{map[string]any{"block": 3}, "block", `setting "block": want a mapping, got 3`},
	}
	for _, tc := range cases {
		t.Run(tc.key, func(t *testing.T) {
			var s allKinds
			err := config.Decode(tc.settings, &s)
			require.ErrorIs(t, err, config.ErrSettings)
			var se *config.SettingError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tc.key, se.Key)
			assert.Equal(t, tc.want, err.Error())
			assertClean(t, err.Error())
		})
	}
}

func TestUnknownNestedSettingSuggestsUnderItsBlock(t *testing.T) {
	var s nodeSettings
	err := config.NestSetting("react", config.Decode(map[string]any{"max_iteration": 3}, &s))
	require.ErrorIs(t, err, config.ErrSettings)
	assert.EqualError(t, err, `unknown setting "react.max_iteration" (did you mean "react.max_iterations"? known settings of react: max_iterations, temperature, tools)`)
}
