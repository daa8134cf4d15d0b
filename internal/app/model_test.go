package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseModelNamesWhereTheModelCameFrom(t *testing.T) {
	t.Parallel()
	a, err := New()
	require.NoError(t, err)
	tests := []struct {
		spec    string
		src     ModelSource
		want    string
		wantErr error
	}{
		{spec: "gpt-4o", src: FromFlag, wantErr: llm.ErrBadSpec,
			want: "--llm gpt-4o: no provider given; use --llm openai:gpt-4o (providers: anthropic, googleai, mistral, ollama, openai, replay, scripted, sim)"},
		{spec: "claude-3-5-haiku-latest", src: FromEnv, wantErr: llm.ErrBadSpec,
			want: "PLANNER_LLM=claude-3-5-haiku-latest: no provider given; use PLANNER_LLM=anthropic:claude-3-5-haiku-latest (providers: anthropic, googleai, mistral, ollama, openai, replay, scripted, sim)"},
		{spec: "replay", src: FromFlag, wantErr: llm.ErrBadSpec,
			want: "--llm replay: no file given; use --llm replay:FILE (providers: anthropic, googleai, mistral, ollama, openai, replay, scripted, sim)"},
		{spec: "bogus:x", src: FromFlag, wantErr: llm.ErrUnknownProvider,
			want: `--llm bogus:x: unknown llm provider "bogus" (providers: anthropic, googleai, mistral, ollama, openai, replay, scripted, sim)`},
	}
	for _, tt := range tests {
		_, err := a.ParseModel(tt.spec, tt.src)
		require.ErrorIs(t, err, ErrModelFlag, tt.spec)
		require.ErrorIs(t, err, tt.wantErr, tt.spec)
		assert.EqualError(t, err, tt.want)
	}
	m, err := a.ParseModel("sim:noisy", FromFlag)
	require.NoError(t, err)
	assert.Equal(t, ModelFlag{Spec: "sim:noisy", Source: FromFlag, LLM: m.LLM}, m)
	assert.Equal(t, "noisy", m.LLM.Profile)
}

func TestLoadModelBlamesTheFlagNotThePipeline(t *testing.T) {
	t.Parallel()
	a, err := New()
	require.NoError(t, err)
	absent := filepath.Join(t.TempDir(), "absent.jsonl")
	tests := []struct {
		spec string
		want string
	}{
		{spec: "sim:nosuch", want: `--llm sim:nosuch: unknown profile "nosuch" (profiles: flaky-api, noisy, perfect, slow)`},
		{spec: "replay:" + absent, want: "--llm replay:" + absent + ": cannot read the cassette: open " + absent +
			": no such file or directory (record one with: planner run --record FILE --llm PROVIDER:MODEL ...)"},
		{spec: "scripted:" + absent, want: "--llm scripted:" + absent + ": cannot read the script: open " + absent +
			": no such file or directory (the shipped scripts are examples/scripts/*.yaml)"},
	}
	for _, tt := range tests {
		m, err := a.ParseModel(tt.spec, FromFlag)
		require.NoError(t, err, tt.spec)
		_, err = a.LoadModel(t.Context(), cotConfig, m, 0)
		require.ErrorIs(t, err, ErrModelFlag, tt.spec)
		assert.EqualError(t, err, tt.want)
	}

	// LoadWith, compare's loader, takes its llm block as the --llm flag's.
	_, err = a.LoadWith(t.Context(), cotConfig, config.LLM{Provider: "sim", Profile: "nosuch"}, 0)
	require.ErrorIs(t, err, ErrModelFlag)
	assert.EqualError(t, err, tests[0].want)

	// Without a model on the command line, the pipeline's errors are its own.
	_, err = a.LoadModel(t.Context(), cotConfig, ModelFlag{}, 0)
	require.ErrorIs(t, err, ErrNoModel)
	assert.False(t, errors.Is(err, ErrModelFlag))
}

// A misspelt provider gets a suggestion before the list of providers, and
// a pipeline naming a misspelt built-in tool gets one too (the built-in
// factory lists its names).
func TestMisspeltProvidersAndToolsGetASuggestion(t *testing.T) {
	a, err := New()
	require.NoError(t, err)
	_, err = a.ParseModel("opena:gpt-4o", FromFlag)
	require.ErrorIs(t, err, llm.ErrUnknownProvider)
	assert.Contains(t, err.Error(), `unknown llm provider "opena" (did you mean "openai"? providers: `)

	path := filepath.Join(t.TempDir(), "p.yaml")
	require.NoError(t, os.WriteFile(path, []byte("name: t\ntools: [calculater]\nnodes:\n  - {id: a, type: react}\nedges:\n  - {from: START, to: a}\n  - {from: a, to: END}\n"), 0o644))
	_, err = a.Validate(context.Background(), path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `p.yaml:2: unknown tool "calculater" (did you mean "calculator"? known tools: `)
}
