package llm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

func TestParseSpec(t *testing.T) {
	cases := []struct {
		in   string
		want config.LLM
	}{
		{"openai:gpt-4o-mini", config.LLM{Provider: "openai", Model: "gpt-4o-mini"}},
		{"ollama:llama3.1:8b", config.LLM{Provider: "ollama", Model: "llama3.1:8b"}},
		{"scripted:examples/s.yaml", config.LLM{Provider: "scripted", Script: "examples/s.yaml"}},
		{"replay:run.jsonl", config.LLM{Provider: "replay", Script: "run.jsonl"}},
		{"sim", config.LLM{Provider: "sim"}},
		{"SIM:noisy", config.LLM{Provider: "sim", Profile: "noisy"}},
	}
	for _, tc := range cases {
		got, err := llm.ParseSpec(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
	for _, bad := range []string{"", "openai", "scripted:", "replay"} {
		_, err := llm.ParseSpec(bad)
		assert.ErrorIs(t, err, llm.ErrBadSpec, bad)
	}
}

func TestParseSpecErrorsSayWhatWouldWork(t *testing.T) {
	cases := []struct {
		in, problem, example string
	}{
		{"gpt-4o", "no provider given", "openai:gpt-4o"},
		{"claude-3-5-haiku-latest", "no provider given", "anthropic:claude-3-5-haiku-latest"},
		{"gemini-1.5-pro", "no provider given", "googleai:gemini-1.5-pro"},
		{"mistral-large-latest", "no provider given", "mistral:mistral-large-latest"},
		{"llama3.1", "no provider given", "ollama:llama3.1"},
		{"whatever", "no provider given", "openai:gpt-4o-mini"},
		{"openai", "no model given", "openai:gpt-4o-mini"},
		{"ollama:", "no model given", "ollama:llama3.1"},
		{"custom:", "no model given", "custom:MODEL"},
		{"scripted", "no file given", "scripted:FILE"},
		{"replay:", "no file given", "replay:FILE"},
	}
	for _, tc := range cases {
		_, err := llm.ParseSpec(tc.in)
		var se *llm.SpecError
		require.ErrorAs(t, err, &se, tc.in)
		assert.Equal(t, llm.SpecError{Spec: tc.in, Problem: tc.problem, Example: tc.example}, *se, tc.in)
		assert.ErrorIs(t, err, llm.ErrBadSpec)
		_, err = llm.ParseSpec(tc.example)
		if !strings.HasSuffix(tc.example, "MODEL") && !strings.HasSuffix(tc.example, "FILE") {
			assert.NoError(t, err, "the example %q parses", tc.example)
		}
	}
	_, err := llm.ParseSpec("gpt-4o")
	assert.EqualError(t, err, `bad llm spec "gpt-4o": no provider given (want provider:model, e.g. openai:gpt-4o)`)
}

func TestFactoryNamesUnknownProvidersAndLabelsModels(t *testing.T) {
	f := llm.NewFactory(llm.WithProvider("scripted", scripted.Label, scripted.Build))
	_, err := f.Model(context.Background(), config.LLM{Provider: "gpt"}, "")
	require.ErrorIs(t, err, llm.ErrUnknownProvider)
	assert.Contains(t, err.Error(), "scripted")
	assert.Contains(t, f.Label("scripted"), "not a real model")
	_, err = f.Model(context.Background(), config.LLM{Provider: "scripted"}, "")
	assert.ErrorIs(t, err, llm.ErrBadSpec)
}

func TestFactoryRejectsInvalidSettingsBeforeBuilding(t *testing.T) {
	built := false
	f := llm.NewFactory(llm.WithProvider("fake", "fake", func(context.Context, config.LLM, string) (llms.Model, error) {
		built = true
		return nil, nil
	}))
	_, err := f.Model(context.Background(), config.LLM{Provider: "fake", MaxReplyBytes: config.MaxMaxReplyBytes + 1}, "")
	require.ErrorIs(t, err, config.ErrInvalid)
	assert.Contains(t, err.Error(), "llm.max_reply_bytes")
	assert.False(t, built, "an invalid block is reported before the model is built")
}

func TestFactoryKnowsTheKindEachProviderWasRegisteredAs(t *testing.T) {
	build := func(context.Context, config.LLM, string) (llms.Model, error) { return nil, nil }
	f := llm.NewFactory(
		llm.WithProvider("api", "real: api", build),
		llm.WithProvider("scripted", scripted.Label, scripted.Build, llm.AsKind(llm.KindScripted)),
		llm.WithProvider("oracle", "SIMULATED", build, llm.AsKind(llm.KindSimulated)),
		llm.WithProvider("tape", "replay", build, llm.AsKind(llm.KindReplayed)),
	)
	assert.Equal(t, llm.KindReal, f.Kind("api"), "real by default")
	assert.Equal(t, llm.KindScripted, f.Kind("scripted"))
	assert.Equal(t, llm.KindSimulated, f.Kind("oracle"))
	assert.Equal(t, llm.KindReplayed, f.Kind("tape"))
	assert.Equal(t, llm.KindReal, f.Kind("unregistered"))
	for k, offline := range map[llm.Kind]bool{llm.KindReal: false, llm.KindScripted: true, llm.KindReplayed: true, llm.KindSimulated: true, "": false} {
		assert.Equal(t, offline, k.Offline(), k)
	}
	f = llm.NewFactory(llm.WithProvider("x", "x", build, llm.AsKind(llm.KindSimulated)), llm.WithProvider("x", "x", build))
	assert.Equal(t, llm.KindReal, f.Kind("x"), "a later registration replaces the kind too")
}

func TestAnUnknownProviderErrorCarriesTheHint(t *testing.T) {
	f := llm.NewFactory(llm.WithUnknownProviderHint(func(p string) string { return "; register " + p }))
	_, err := f.Model(t.Context(), config.LLM{Provider: "openai", Model: "m"}, "")
	require.ErrorIs(t, err, llm.ErrUnknownProvider)
	assert.ErrorContains(t, err, `"openai" (available: ); register openai`)
}

func TestAnUnknownProviderSuggestsTheNearestFirst(t *testing.T) {
	build := func(context.Context, config.LLM, string) (llms.Model, error) { return nil, nil }
	f := llm.NewFactory(llm.WithProvider("openai", "real: openai", build), llm.WithProvider("ollama", "real: ollama", build),
		llm.WithProvider("sim", "sim", build, llm.AsKind(llm.KindSimulated)))
	_, err := f.Model(t.Context(), config.LLM{Provider: "opena", Model: "gpt-4o"}, "")
	require.ErrorIs(t, err, llm.ErrUnknownProvider)
	assert.EqualError(t, err, `unknown llm provider "opena" (did you mean "openai"? available: ollama, openai, sim)`)

	err = f.CheckProvider("opena")
	require.ErrorIs(t, err, llm.ErrUnknownProvider)
	assert.EqualError(t, err, `unknown llm provider "opena" (did you mean "openai"? available: ollama, openai, sim)`, "the same message as Model")
	assert.EqualError(t, f.CheckProvider("bedrock"), `unknown llm provider "bedrock" (available: ollama, openai, sim)`, "no suggestion when none is near")
	assert.NoError(t, f.CheckProvider("sim"))
}
