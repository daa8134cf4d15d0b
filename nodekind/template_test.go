package nodekind_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// toolsSpec is a planner-like declaration: two values, one required.
func toolsSpec() nodekind.TemplateSpec {
	return nodekind.TemplateSpec{
		Key: "prompt",
		Extra: []nodekind.Field{
			{Name: "Tools", Doc: "the tools", Sample: "- calculator\n"},
			{Name: "MaxSteps", Doc: "the most steps", Sample: 8},
		},
		Required: []nodekind.Requirement{{Fields: []string{"Tools"}, Append: "Tools:\n{{.Extra.Tools}}"}},
	}
}

func TestTemplateCheckNamesUnknownFieldsInEveryBranch(t *testing.T) {
	cases := []struct {
		name, text string
		contains   []string
	}{
		{"typo of a state field", "Q: {{.Questoin}}", []string{"template line 1", "unknown template field .Questoin", "did you mean .Question?", ".Notes.KEY"}},
		{"typo of an extra field", "{{.Question}}\n{{.Extra.Tool}}", []string{"template line 2", ".Extra.Tool;", "did you mean .Extra.Tools?", "this setting's .Extra fields are .Extra.Tools, .Extra.MaxSteps"}},
		{"in a branch the sample does not take", "{{.Extra.Tools}}{{if not .Extra.MaxSteps}}{{.Extra.MaxStep}}{{end}}", []string{".Extra.MaxStep;", "did you mean .Extra.MaxSteps?"}},
		{"inside with .Extra", "{{.Extra.Tools}}{{with .Extra}}{{.Toolz}}{{end}}", []string{".Extra.Toolz"}},
		{"through $ inside range", "{{.Extra.Tools}}{{range .Plan}}{{$.Questoin}}{{end}}", []string{".Questoin"}},
		{"a field of the task", "{{.Extra.Tools}}{{.Task.Questoin}}", []string{".Task.Questoin", "did you mean .Task.Question?", ".Task has .Task.ID, .Task.Question"}},
		{"a field of a string", "{{.Extra.Tools}}{{.Question.Text}}", []string{".Question.Text", ".Question has no fields"}},
		{"an index of an unknown extra", `{{.Extra.Tools}}{{index .Extra "Toolz"}}`, []string{".Extra.Toolz"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := nodekind.Env{}.Template(toolsSpec(), tc.text, "", "default")
			require.ErrorIs(t, err, nodekind.ErrUnknownField)
			require.ErrorIs(t, err, config.ErrSettings)
			var se *config.SettingError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, "prompt", se.Key)
			for _, s := range tc.contains {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
}

func TestTemplateCheckRendersWithTypedSamples(t *testing.T) {
	// A function misused on a typed sample fails at build time, not mid-run.
	_, err := nodekind.Env{}.Template(toolsSpec(), "{{.Extra.Tools}}{{add .Extra.MaxSteps .Question}}", "", "")
	require.ErrorIs(t, err, config.ErrSettings)
	assert.Contains(t, err.Error(), "rendering with sample values")

	// The same with the right types renders.
	tmpl, err := nodekind.Env{}.Template(toolsSpec(), "{{.Extra.Tools}}{{add .Extra.MaxSteps 1}} {{range .Plan}}{{.Result}}{{end}} {{numbered .Reflections}}", "", "")
	require.NoError(t, err)
	out, err := tmpl.Render(state.NewState(state.Task{}), map[string]any{"Tools": "T", "MaxSteps": 2})
	require.NoError(t, err)
	assert.Equal(t, "T3  ", out)
}

func TestTemplateFromAFileIsReportedUnderTheFileKey(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p.tmpl"), []byte("{{.Extra.Tools}}\n\n{{.Questoin}}"), 0o644))
	_, err := nodekind.Env{BaseDir: dir}.Template(toolsSpec(), "", "p.tmpl", "")
	var se *config.SettingError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "prompt_file", se.Key)
	assert.Contains(t, err.Error(), "p.tmpl line 3: unknown template field .Questoin")
}

func TestCustomTemplateWithoutARequiredFieldIsCompleted(t *testing.T) {
	st := state.NewState(state.Task{Question: "q?"})
	extra := map[string]any{"Tools": "- calculator\n", "MaxSteps": 3}
	env := nodekind.Env{Compiled: &nodekind.TemplateSet{}}

	tmpl, err := env.Template(toolsSpec(), "Plan for {{.Question}}", "", "default {{.Extra.Tools}}")
	require.NoError(t, err)
	out, err := tmpl.Render(st, extra)
	require.NoError(t, err)
	assert.Equal(t, "Plan for q?\n\n"+nodekind.CompletionMarker+" the custom prompt does not use .Extra.Tools ---\nTools:\n- calculator\n", out)
	require.Len(t, tmpl.Completed(), 1)
	assert.Equal(t, []string{"Tools"}, tmpl.Completed()[0].Fields)
	assert.Equal(t, []*nodekind.Template{tmpl}, env.Compiled.Templates(), "the set records what the node compiled")

	for _, text := range []string{
		"{{.Question}} {{.Extra.Tools}}",
		"{{.Question}} {{with .Extra}}{{.Tools}}{{end}}",
		`{{.Question}} {{index .Extra "Tools"}}`,
		"{{.Question}} {{if .Extra.MaxSteps}}{{.Extra.Tools}}{{end}}",
	} {
		tmpl, err := nodekind.Env{}.Template(toolsSpec(), text, "", "")
		require.NoError(t, err)
		assert.Empty(t, tmpl.Completed(), text)
	}

	// The node's default is never completed, and Without drops a
	// requirement that does not apply.
	tmpl, err = nodekind.Env{}.Template(toolsSpec(), "", "", "default {{.Question}}")
	require.NoError(t, err)
	assert.Empty(t, tmpl.Completed())
	tmpl, err = nodekind.Env{}.Template(toolsSpec().Without("Tools"), "custom", "", "")
	require.NoError(t, err)
	assert.Empty(t, tmpl.Completed())
}

func TestRenderRejectsExtraValuesThatDifferFromTheDeclaration(t *testing.T) {
	tmpl, err := nodekind.Env{}.Template(toolsSpec(), "", "", "{{.Extra.Tools}}")
	require.NoError(t, err)
	st := state.NewState(state.Task{})
	for name, extra := range map[string]map[string]any{
		"undeclared": {"Tools": "t", "MaxSteps": 1, "Other": 1},
		"missing":    {"Tools": "t"},
		"wrong type": {"Tools": "t", "MaxSteps": "1"},
	} {
		_, err := tmpl.Render(st, extra)
		assert.ErrorIs(t, err, nodekind.ErrUndeclaredExtra, name)
	}
}

func TestTemplatesRecordTheNotesTheyReadAndTheirNestedSetting(t *testing.T) {
	set := &nodekind.TemplateSet{}
	env := nodekind.Env{Compiled: set}.Nested("react")
	tmpl, err := env.Template(nodekind.TemplateSpec{Key: "prompt"}, "{{.Notes.summary}} {{if .Notes.draft}}{{.Notes.draft}}{{end}}", "", "")
	require.NoError(t, err, "notes are checked by the pipeline, which knows which ones its nodes write")
	assert.Equal(t, []string{"draft", "summary"}, tmpl.Notes())
	assert.Equal(t, "react.prompt", tmpl.Setting())
	assert.Equal(t, []*nodekind.Template{tmpl}, set.Templates())
}

func TestStateFieldsDocumentEveryPromptDataFieldButExtra(t *testing.T) {
	var want []string
	ty := reflect.TypeOf(nodekind.PromptData{})
	for i := 0; i < ty.NumField(); i++ {
		if name := ty.Field(i).Name; name != "Extra" {
			want = append(want, name)
		}
	}
	var got []string
	for _, f := range nodekind.StateFields() {
		got = append(got, f.Name)
	}
	assert.Equal(t, want, got)
}

func TestTemplateDocsListEachKindsSettingsAndRequiredFields(t *testing.T) {
	doc := nodekind.TemplateDocs([]nodekind.Kind{
		{Name: "demo", Templates: []nodekind.TemplateSpec{toolsSpec(), {Key: "other_prompt"}}},
		{Name: "host", Templates: nodekind.Nested("demo", []nodekind.TemplateSpec{toolsSpec()})},
	})
	assert.Contains(t, doc, "- `.Question`: the task's text\n")
	assert.Contains(t, doc, "| `demo` | `prompt` | `.Extra.Tools`: the tools; **required**<br>`.Extra.MaxSteps`: the most steps |\n")
	assert.Contains(t, doc, "| `demo` | `other_prompt` | none |\n")
	assert.Contains(t, doc, "| `host` | `demo.prompt` | as for `demo`'s `prompt` |\n")
}
