package config_test

import (
	"errors"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type nodeSettings struct {
	MaxIterations int      `mapstructure:"max_iterations"`
	Temperature   *float64 `mapstructure:"temperature"`
	Tools         []string `mapstructure:"tools"`
}

func TestDecodeRejectsUnknownKeysNamingThem(t *testing.T) {
	var s nodeSettings
	err := config.Decode(map[string]any{"max_iterations": 3, "temprature": 0.2}, &s)
	require.ErrorIs(t, err, config.ErrSettings)
	var se *config.SettingError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "temprature", se.Key)
	assert.Contains(t, err.Error(), `unknown setting "temprature" (did you mean "temperature"? known settings: max_iterations, temperature, tools)`)
}

func TestDecodeAcceptsWeakTypesAndLists(t *testing.T) {
	var s nodeSettings
	require.NoError(t, config.Decode(map[string]any{"max_iterations": "5", "temperature": 0.5, "tools": "search,calculator"}, &s))
	assert.Equal(t, 5, s.MaxIterations)
	assert.Equal(t, 0.5, *s.Temperature)
	assert.Equal(t, []string{"search", "calculator"}, s.Tools)

	err := config.Decode(map[string]any{"max_iterations": "many"}, &s)
	var se *config.SettingError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "max_iterations", se.Key)
}

type promptKeys struct {
	System string `mapstructure:"system"`
	Prompt string `mapstructure:"prompt"`
}

// PromptKeys is exported, as the embedded settings of nodes are.
type PromptKeys = promptKeys

type squashedSettings struct {
	PromptKeys  `mapstructure:",squash"`
	Temperature *float64 `mapstructure:"temperature"`
}

type squashedUnexported struct {
	promptKeys `mapstructure:",squash"`
	MaxTokens  int `mapstructure:"max_tokens"`
}

func TestDecodeListsTheKeysOfSquashedStructsAsKnown(t *testing.T) {
	var s squashedSettings
	require.NoError(t, config.Decode(map[string]any{"system": "s", "prompt": "p", "temperature": 0.5}, &s))
	assert.Equal(t, "s", s.System)
	assert.Equal(t, "p", s.Prompt)

	err := config.Decode(map[string]any{"sytem": "s"}, &s)
	require.ErrorIs(t, err, config.ErrSettings)
	assert.Contains(t, err.Error(), "known settings: prompt, system, temperature)")

	var u squashedUnexported
	require.NoError(t, config.Decode(map[string]any{"system": "s", "max_tokens": 3}, &u))
	assert.Equal(t, "s", u.System)
	err = config.Decode(map[string]any{"promt": "p"}, &u)
	assert.Contains(t, err.Error(), "known settings: max_tokens, prompt, system)")
}

func TestNestSettingKeysANestedErrorUnderItsBlock(t *testing.T) {
	inner := config.SettingErrorf("max_iterations", "must be positive")
	var se *config.SettingError
	require.ErrorAs(t, config.NestSetting("react", inner), &se)
	assert.Equal(t, "react.max_iterations", se.Key)
	assert.ErrorIs(t, se, config.ErrSettings)
	plain := errors.New("no step agent")
	require.ErrorAs(t, config.NestSetting("dispatch", plain), &se)
	assert.Equal(t, "dispatch", se.Key)
	assert.ErrorIs(t, se, plain)
	assert.NoError(t, config.NestSetting("react", nil))
}
