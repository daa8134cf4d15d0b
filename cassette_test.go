package planner

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/cassette"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

const (
	cotConfig = "configs/cot.yaml"
	cotScript = "examples/scripts/cot_demo.yaml"
	cotTask   = "A farmer has 3 fields of 17 rows with 23 plants each. How many plants?"
)

func readCassette(t *testing.T, path string) []cassette.Entry {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	entries, err := cassette.ReadEntries(f)
	require.NoError(t, err)
	return entries
}

// runOnce loads the cot pipeline with llmSpec in e and runs the demo task.
func runOnce(t *testing.T, e *Engine, llmSpec string) (*Result, error) {
	t.Helper()
	p, err := e.Load(t.Context(), cotConfig, WithLLM(llmSpec))
	require.NoError(t, err)
	res, err := p.Run(t.Context(), cotTask)
	require.NotNil(t, res)
	return res, err
}

func TestRecordingCreatesTheCassetteOnTheFirstCall(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.jsonl")
	e, err := New(WithRecording(path))
	require.NoError(t, err)
	p, err := e.Load(t.Context(), cotConfig, WithLLM("scripted:"+cotScript))
	require.NoError(t, err)
	assert.NoFileExists(t, path, "building the pipeline records nothing")
	assert.Empty(t, e.Recording())

	res, err := p.Run(t.Context(), cotTask)
	require.NoError(t, err)
	assert.Equal(t, "1173", res.Answer)
	assert.Equal(t, path, e.Recording())
	require.NoError(t, e.Close())
	require.NoError(t, e.Close(), "closing twice is harmless")

	entries := readCassette(t, path)
	require.Len(t, entries, 1)
	assert.Equal(t, 0, entries[0].Seq)
	require.NotNil(t, entries[0].Response)
	assert.Contains(t, entries[0].Response.Choices[0].Content, "Answer: 1173")
}

func TestWithRecordingNeedsAnExistingFolder(t *testing.T) {
	t.Parallel()
	_, err := New(WithRecording(filepath.Join(t.TempDir(), "absent", "run.jsonl")))
	require.ErrorIs(t, err, ErrRecording)
}

func TestReplayReproducesTheRecordedRun(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.jsonl")
	rec, err := New(WithRecording(path))
	require.NoError(t, err)
	want, err := runOnce(t, rec, "scripted:"+cotScript)
	require.NoError(t, err)
	require.NoError(t, rec.Close())

	e, err := New()
	require.NoError(t, err)
	got, err := runOnce(t, e, "replay:"+path)
	require.NoError(t, err)
	assert.Equal(t, want.Answer, got.Answer)
	assert.Equal(t, want.Usage, got.Usage)
	assert.Zero(t, e.UnusedRecordings())
}

func TestReplayersAreSharedWithinAnEngine(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.jsonl")
	rec, err := New(WithRecording(path))
	require.NoError(t, err)
	_, err = runOnce(t, rec, "scripted:"+cotScript)
	require.NoError(t, err)
	require.NoError(t, rec.Close())

	e, err := New()
	require.NoError(t, err)
	first, err := e.Load(t.Context(), cotConfig, WithLLM("replay:"+path))
	require.NoError(t, err)
	second, err := e.Load(t.Context(), cotConfig, WithLLM("replay:"+path))
	require.NoError(t, err)
	assert.Equal(t, 1, e.UnusedRecordings(), "one cassette opened once")

	_, err = first.Run(t.Context(), cotTask)
	require.NoError(t, err)
	assert.Zero(t, e.UnusedRecordings())
	_, err = second.Run(t.Context(), cotTask)
	require.ErrorIs(t, err, cassette.ErrExhausted, "the one recording was played by the first pipeline")
}

// writeScript writes a non-strict scripted-model script answering text.
func writeScript(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, []byte("strict: false\nreplies:\n  - text: "+text+"\n"), 0o600))
	return path
}

func TestModelsOfOneEngineShareTheCassette(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "run.jsonl")
	e, err := New(WithRecording(path))
	require.NoError(t, err)
	for i, text := range []string{"one", "two", "three"} {
		m, err := e.Models().Model(t.Context(), config.LLM{Provider: "scripted", Script: writeScript(t, dir, text+".yaml", text)}, "")
		require.NoError(t, err)
		got, _, err := m.Call(t.Context(), nil, llm.CallMeta{Node: "n"}, llm.Prompt("", "question "+text))
		require.NoError(t, err, "call %d", i)
		assert.Equal(t, text, got)
	}
	require.NoError(t, e.Close())

	entries := readCassette(t, path)
	require.Len(t, entries, 3)
	for i, en := range entries {
		assert.Equal(t, i, en.Seq, "one numbering for every model")
		require.NotNil(t, en.Response)
		assert.Equal(t, []string{"one", "two", "three"}[i], en.Response.Choices[0].Content)
	}
}

// fixedModel answers every call "ok", with a copy of info as the
// response's generation info.
func fixedModel(info map[string]any) *llmtest.Fixed {
	return llmtest.Respond(&llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "ok", GenerationInfo: info}}})
}

func TestRecordingNamesTheModelUnlessTheProviderDid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		cfgModel string
		info     map[string]any
		want     any
	}{
		{name: "named from the llm block", cfgModel: "gpt-4o-mini", info: map[string]any{"PromptTokens": 3}, want: "gpt-4o-mini"},
		{name: "provider's name kept", cfgModel: "alias", info: map[string]any{"model": "gpt-4o-mini-2024-07-18"}, want: "gpt-4o-mini-2024-07-18"},
		{name: "no model configured", info: map[string]any{"PromptTokens": 3}, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "run.jsonl")
			rec, err := newRecording(path)
			require.NoError(t, err)
			m := rec.wrap(config.LLM{Provider: "openai", Model: tt.cfgModel}, fixedModel(tt.info))
			resp, err := m.GenerateContent(t.Context(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")})
			require.NoError(t, err)
			assert.Equal(t, tt.want, resp.Choices[0].GenerationInfo[modelInfoKey])
			require.NoError(t, rec.close())
			entries := readCassette(t, path)
			require.Len(t, entries, 1)
			assert.Equal(t, tt.want, entries[0].Response.Choices[0].GenerationInfo[modelInfoKey])
		})
	}
}

// recordModels writes a cassette whose calls were answered by models with
// the given names ("" for none) and returns its path.
func recordModels(t *testing.T, dir string, names ...string) string {
	t.Helper()
	path := filepath.Join(dir, "models.jsonl")
	f, err := os.Create(path)
	require.NoError(t, err)
	for i, name := range names {
		info := map[string]any{}
		if name != "" {
			info[modelInfoKey] = name
		}
		r := cassette.NewRecorder(fixedModel(info), f)
		_, err := r.GenerateContent(t.Context(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, string(rune('a'+i)))})
		require.NoError(t, err)
	}
	require.NoError(t, f.Close())
	return path
}

func TestFillReplayModelPricesLikeTheRecording(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		models []string
		cfg    func(path string) config.LLM
		want   string
	}{
		{name: "one model", models: []string{"gpt-4o-mini", "gpt-4o-mini", ""},
			cfg: func(p string) config.LLM { return config.LLM{Provider: "replay", Script: p} }, want: "gpt-4o-mini"},
		{name: "relative to the pipeline folder", models: []string{"gpt-4o"},
			cfg: func(p string) config.LLM { return config.LLM{Provider: "replay", Script: filepath.Base(p)} }, want: "gpt-4o"},
		{name: "several models", models: []string{"gpt-4o-mini", "gpt-4o"},
			cfg: func(p string) config.LLM { return config.LLM{Provider: "replay", Script: p} }, want: ""},
		{name: "no model named", models: []string{""},
			cfg: func(p string) config.LLM { return config.LLM{Provider: "replay", Script: p} }, want: ""},
		{name: "model already set", models: []string{"gpt-4o-mini"},
			cfg: func(p string) config.LLM { return config.LLM{Provider: "replay", Script: p, Model: "o3"} }, want: "o3"},
		{name: "not a replay", models: []string{"gpt-4o-mini"},
			cfg: func(p string) config.LLM { return config.LLM{Provider: "scripted", Script: p} }, want: ""},
		{name: "missing cassette", models: nil,
			cfg: func(p string) config.LLM { return config.LLM{Provider: "replay", Script: p + ".absent"} }, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cfg := tt.cfg(recordModels(t, dir, tt.models...))
			fillReplayModel(&cfg, dir)
			assert.Equal(t, tt.want, cfg.Model)
		})
	}
}
