package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeModels(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "models.yaml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

func TestLoadModelsReadsLLMBlocksWithLabels(t *testing.T) {
	path := writeModels(t, `models:
  - {provider: openai, model: gpt-4o-mini, temperature: 0, label: greedy}
  - provider: openai
    model: gpt-4o-mini
    temperature: 0.8
    timeout: 30s
    label: sampled
  - {provider: sim, profile: noisy}
`)
	models, err := config.LoadModels(path)
	require.NoError(t, err)
	require.Len(t, models, 3)
	assert.Equal(t, "greedy", models[0].Label)
	require.NotNil(t, models[0].LLM.Temperature)
	assert.Zero(t, *models[0].LLM.Temperature)
	assert.Equal(t, "sampled", models[1].Label)
	assert.InDelta(t, 0.8, *models[1].LLM.Temperature, 1e-12)
	assert.Equal(t, "30s", models[1].LLM.Timeout.String())
	assert.Equal(t, config.LLM{Provider: "sim", Profile: "noisy"}, models[2].LLM)
	assert.Empty(t, models[2].Label)
}

func TestLoadModelsNamesTheLineOfABadModel(t *testing.T) {
	tests := map[string]struct {
		text, want string
		line       int
	}{
		"unknown key":     {"models:\n  - {provider: sim}\n  - {provider: sim, profil: noisy}\n", "profil", 3},
		"no provider":     {"models:\n  - {model: gpt-4o}\n", "provider is required", 2},
		"same model":      {"models:\n  - {provider: openai, model: m}\n  - {provider: openai, model: m, temperature: 1}\n", "distinct label", 3},
		"not a list":      {"models: openai\n", "must be a list", 1},
		"empty list":      {"models: []\n", "must be a list", 1},
		"other top key":   {"model: x\n", "models", 1},
		"bad label":       {"models:\n  - {provider: sim, label: 3}\n", "label must be", 2},
		"invalid setting": {"models:\n  - {provider: openai, model: m, timeout: -1s}\n", "timeout", 2},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := config.LoadModels(writeModels(t, tt.text))
			require.ErrorIs(t, err, config.ErrInvalid)
			var ce *config.Error
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tt.line, ce.Line, "%v", err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	_, err := config.LoadModels(filepath.Join(t.TempDir(), "missing.yaml"))
	require.ErrorIs(t, err, config.ErrInvalid)
}

func TestIsModelsFile(t *testing.T) {
	assert.True(t, config.IsModelsFile("models.yaml"))
	assert.True(t, config.IsModelsFile("dir/m.yml"))
	assert.False(t, config.IsModelsFile("scripted:replies.yaml"))
	assert.False(t, config.IsModelsFile("openai:gpt-4o"))
}
