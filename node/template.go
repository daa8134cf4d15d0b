package node

import (
	"fmt"
	"strings"
	"text/template"

	"github.com/planner-engine/planner/agent"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/plan"
)

// Template is a compiled prompt template (Go text/template syntax). The data
// it sees is a PromptData.
type Template struct {
	name string
	t    *template.Template
}

// PromptData is what a prompt template can reference: {{.Question}},
// {{.Reflections}}, {{.Notes.key}}, and node-specific Extra values.
type PromptData struct {
	Question    string
	Task        agent.Task
	Plan        []plan.Step
	Reflections []string
	Notes       map[string]string
	Extra       map[string]any
}

// ParseTemplate compiles text as a prompt template. key names the setting
// for error messages. missingkey=error makes typos fail at render time with
// the key's name rather than printing "<no value>".
func ParseTemplate(key, text string) (*Template, error) {
	t, err := template.New(key).Option("missingkey=error").Funcs(template.FuncMap{
		"join":     strings.Join,
		"trim":     strings.TrimSpace,
		"add":      func(a, b int) int { return a + b },
		"numbered": numbered,
	}).Parse(text)
	if err != nil {
		return nil, &config.SettingError{Key: key, Err: fmt.Errorf("%w: template: %w", config.ErrSettings, err)}
	}
	return &Template{name: key, t: t}, nil
}

// MustTemplate compiles a built-in template and panics on error; use it only
// for templates embedded in the program, which tests cover.
func MustTemplate(key, text string) *Template {
	t, err := ParseTemplate(key, text)
	if err != nil {
		panic(err)
	}
	return t
}

func numbered(items []string) string {
	var b strings.Builder
	for i, s := range items {
		fmt.Fprintf(&b, "%d. %s\n", i+1, s)
	}
	return b.String()
}

// Render executes the template on the state plus extra values.
func (t *Template) Render(st *agent.State, extra map[string]any) (string, error) {
	data := PromptData{Extra: extra}
	if st != nil {
		data.Question = st.Task.Question
		data.Task = st.Task
		data.Plan = st.Plan
		data.Reflections = st.Reflections
		data.Notes = st.Notes
	}
	var b strings.Builder
	if err := t.t.Execute(&b, data); err != nil {
		return "", fmt.Errorf("rendering prompt %q: %w", t.name, err)
	}
	return b.String(), nil
}
