package nodekind_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPromptsResolveInlineFileAndDefaults(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p.tmpl"), []byte("Q: {{.Question}}"), 0o644))
	env := nodekind.Env{BaseDir: dir}

	sys, tmpl, err := env.Prompts(nodekind.PromptSources{PromptFile: "p.tmpl"}, nodekind.TemplateSpec{}, "default system", "default {{.Question}}")
	require.NoError(t, err)
	assert.Equal(t, "default system", sys)
	out, err := tmpl.Render(state.NewState(state.Task{Question: "why?"}), nil)
	require.NoError(t, err)
	assert.Equal(t, "Q: why?", out)

	_, _, err = env.Prompts(nodekind.PromptSources{Prompt: "x", PromptFile: "p.tmpl"}, nodekind.TemplateSpec{}, "", "")
	var se *config.SettingError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "prompt", se.Key)

	_, _, err = env.Prompts(nodekind.PromptSources{PromptFile: "missing.tmpl"}, nodekind.TemplateSpec{}, "", "")
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "prompt_file", se.Key)

	_, _, err = env.Prompts(nodekind.PromptSources{Prompt: "{{.Question"}, nodekind.TemplateSpec{}, "", "")
	require.ErrorIs(t, err, config.ErrSettings)
}

func TestEnvTemplateResolvesInlineFileOrDefaultAndNamesItsKey(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "j.tmpl"), []byte("file {{.Question}}"), 0o644))
	env := nodekind.Env{BaseDir: dir}
	cases := []struct {
		name, inline, file string
		want               string
		errKey             string
	}{
		{name: "inline", inline: "inline {{.Question}}", want: "inline q"},
		{name: "file", file: "j.tmpl", want: "file q"},
		{name: "blank falls back to the default", inline: "  \n", want: "default q"},
		{name: "both set", inline: "x", file: "j.tmpl", errKey: "judge_prompt"},
		{name: "missing file", file: "nope.tmpl", errKey: "judge_prompt_file"},
		{name: "broken template", inline: "{{.Question", errKey: "judge_prompt"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := env.Template(nodekind.TemplateSpec{Key: "judge_prompt"}, tc.inline, tc.file, "default {{.Question}}")
			if tc.errKey != "" {
				require.ErrorIs(t, err, config.ErrSettings)
				var se *config.SettingError
				require.ErrorAs(t, err, &se)
				assert.Equal(t, tc.errKey, se.Key)
				return
			}
			require.NoError(t, err)
			out, err := tmpl.Render(state.NewState(state.Task{Question: "q"}), nil)
			require.NoError(t, err)
			assert.Equal(t, tc.want, out)
		})
	}
}

func TestTemplateTyposFailAtRenderWithTheKey(t *testing.T) {
	tmpl, err := nodekind.ParseTemplate("prompt", "{{.Extra.Missing}}")
	require.NoError(t, err)
	_, err = tmpl.Render(state.NewState(state.Task{}), map[string]any{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Missing")
}
