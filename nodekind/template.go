package nodekind

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"strings"
	"text/template"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/state"
)

// ErrUnknownField means a prompt template references a field its data does
// not have: a typo such as {{.Questoin}}, or an .Extra field the node does
// not pass to that template.
var ErrUnknownField = errors.New("unknown template field")

// ErrUndeclaredExtra means a node rendered a template with .Extra values
// other than those its TemplateSpec declares: a programming error that
// tests catch, since validation and the documentation rely on the
// declaration.
var ErrUndeclaredExtra = errors.New("template data differs from its declaration")

// CompletionMarker starts the line put before the text appended to a custom
// template that leaves out a required field (see Requirement).
const CompletionMarker = "--- added automatically:"

// Template is a compiled prompt template (Go text/template syntax). The data
// it sees is a PromptData.
type Template struct {
	name string
	t    *template.Template
	// spec is the declaration the template was compiled against; nil for
	// ParseTemplate and MustTemplate.
	spec *TemplateSpec
	// setting is the setting's path in the node's settings, such as
	// "prompt" or "react.system".
	setting string
	// completed are the requirements whose text was appended.
	completed []Requirement
	// notes are the keys the template reads as {{.Notes.KEY}}.
	notes []string
	// vars are the names the template reads as {{.Vars.NAME}} (or with
	// index); Render gives those not set the empty string.
	vars []string
}

// PromptData is what a prompt template can reference: {{.Question}},
// {{.Reflections}}, {{.Notes.key}}, {{.Vars.name}}, and node-specific
// Extra values.
type PromptData struct {
	Question string
	// History is the conversation's earlier turns (state.Task.History):
	// {{.History}} shows them briefly ("" for a first question), and
	// {{range .History}} reads each .Question and .Answer.
	History     state.History
	Task        state.Task
	Plan        []plan.Step
	Reflections []string
	Notes       map[string]string
	// Vars is a snapshot of the run's vars (State.Vars) taken when the
	// template renders; a var the template names but the run has not set
	// renders as "".
	Vars  map[string]string
	Extra map[string]any
}

// StateFields documents the fields of PromptData that every template sees
// whatever its node: all but Extra, which each TemplateSpec declares.
func StateFields() []Field {
	return []Field{
		{Name: "Question", Doc: "the task's text"},
		{Name: "History", Doc: "the conversation's earlier turns (a follow-up on a thread): `{{.History}}` shows them briefly, \"\" for a first question; `{{range .History}}` reads each `.Question` and `.Answer`"},
		{Name: "Task", Doc: "the task: `.ID`, `.Question`, `.Answer` (the reference answer, when known), `.Tags`"},
		{Name: "Plan", Doc: "the plan's steps, each with `.ID`, `.Description`, `.Tool`, `.Input`, `.DependsOn`, `.Status`, `.Result`, `.Error` (empty before a planner ran)"},
		{Name: "Reflections", Doc: "the lessons of earlier trials (Reflexion's `reflect` node), a list"},
		{Name: "Notes", Doc: "`.Notes.KEY` is the note KEY written by a node with `output: note:KEY`"},
		{Name: "Vars", Doc: "`.Vars.NAME` is the run's var NAME (working memory), set by a node with `output: var:NAME`, by the `vars` tool, or by the execute node (`.Vars.E1` is the result of plan step 1); \"\" while not set"},
	}
}

// Field is one value a prompt template sees under .Extra.
type Field struct {
	// Name is the key: {{.Extra.Name}}.
	Name string
	// Doc says what the value is, for the README's table.
	Doc string
	// Sample is a value of the type the node passes when it renders the
	// template; validation renders templates with it.
	Sample any
}

// Requirement is something a custom template must carry, such as the tool
// list of a planner's prompt. A custom template that references none of
// Fields gets Append (template text) appended, after a line that starts
// with CompletionMarker; the pipeline reports it.
type Requirement struct {
	// Fields are the .Extra fields of which the template must use one.
	Fields []string
	// Append is the template text appended when it uses none.
	Append string
	// When says, for the documentation, when the requirement applies
	// ("unless output: tool"); constructors drop requirements that do not
	// apply to a node with Without. Empty means always.
	When string
}

// TemplateSpec declares one prompt template setting of a node kind: its
// key, the .Extra values the node passes when it renders it, and what a
// custom template must carry. Kinds publish their specs (Kind.Templates),
// constructors compile templates against them (Env.Template), so
// validation renders every template with samples of the real values, and
// the README's table of template fields is generated from them.
type TemplateSpec struct {
	// Key is the setting, such as "prompt" or "propose_prompt"; its file
	// variant is Key+"_file".
	Key string
	// Extra are the values under .Extra.
	Extra []Field
	// Required are what a custom template must carry.
	Required []Requirement
}

// Without returns a copy of s without the requirements that name field,
// for a node whose settings make it unnecessary (a planner whose plan
// comes back as a tool call needs no schema in its prompt).
func (s TemplateSpec) Without(field string) TemplateSpec {
	s.Required = slices.DeleteFunc(slices.Clone(s.Required), func(r Requirement) bool { return slices.Contains(r.Fields, field) })
	return s
}

// Nested returns specs with their keys under prefix ("react" gives
// "react.prompt"), for kinds that take another kind's settings as a block.
func Nested(prefix string, specs []TemplateSpec) []TemplateSpec {
	out := make([]TemplateSpec, len(specs))
	for i, s := range specs {
		s.Key = prefix + "." + s.Key
		out[i] = s
	}
	return out
}

// field returns the declared field called name.
func (s *TemplateSpec) field(name string) (Field, bool) {
	for _, f := range s.Extra {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// checkExtra reports values that differ from the declaration: undeclared
// keys, missing keys, or values of another type than the sample's.
func (s *TemplateSpec) checkExtra(extra map[string]any) error {
	for k, v := range extra {
		f, ok := s.field(k)
		if !ok {
			return fmt.Errorf("%w: %q passes .Extra.%s, which is not declared", ErrUndeclaredExtra, s.Key, k)
		}
		if reflect.TypeOf(v) != reflect.TypeOf(f.Sample) {
			return fmt.Errorf("%w: %q passes .Extra.%s as %T, declared as %T", ErrUndeclaredExtra, s.Key, k, v, f.Sample)
		}
	}
	for _, f := range s.Extra {
		if _, ok := extra[f.Name]; !ok {
			return fmt.Errorf("%w: %q does not pass the declared .Extra.%s", ErrUndeclaredExtra, s.Key, f.Name)
		}
	}
	return nil
}

// ParseTemplate compiles text as a prompt template. key names the setting
// for error messages. missingkey=error makes typos fail at render time with
// the key's name rather than printing "<no value>".
func ParseTemplate(key, text string) (*Template, error) {
	t, err := parseText(key, text)
	if err != nil {
		return nil, &config.SettingError{Key: key, Err: fmt.Errorf("%w: template: %w", config.ErrSettings, err)}
	}
	return &Template{name: key, t: t, setting: key, vars: varRefs(references(t))}, nil
}

func parseText(name, text string) (*template.Template, error) {
	return template.New(name).Option("missingkey=error").Funcs(template.FuncMap{
		"join":     strings.Join,
		"trim":     strings.TrimSpace,
		"add":      func(a, b int) int { return a + b },
		"numbered": numbered,
	}).Parse(text)
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

// Setting is the template's setting path in its node's settings, such as
// "prompt", "prompt_file" (when the text came from a file) or
// "react.system" (see Env.Nested).
func (t *Template) Setting() string { return t.setting }

// Completed returns the requirements whose text was appended to this
// custom template, in declaration order.
func (t *Template) Completed() []Requirement { return slices.Clone(t.completed) }

// Notes returns the note keys the template reads as {{.Notes.KEY}},
// sorted.
func (t *Template) Notes() []string { return slices.Clone(t.notes) }

// Vars returns the var names the template reads as {{.Vars.NAME}} (or
// {{index .Vars "NAME"}}), sorted.
func (t *Template) Vars() []string { return slices.Clone(t.vars) }

// Render executes the template on the state plus extra values. A template
// compiled against a TemplateSpec fails with ErrUndeclaredExtra when extra
// differs from the declaration.
func (t *Template) Render(st *state.State, extra map[string]any) (string, error) {
	if t.spec != nil {
		if err := t.spec.checkExtra(extra); err != nil {
			return "", fmt.Errorf("rendering prompt %q: %w", t.name, err)
		}
	}
	data := PromptData{Extra: extra}
	if st != nil {
		data.Question = st.Task.Question
		data.History = st.Task.History
		data.Task = st.Task
		data.Plan = st.Plan
		data.Reflections = st.Reflections
		data.Notes = st.Notes
		if st.Vars.Len() > 0 { // most runs set none: no copy per render
			data.Vars = st.Vars.All()
		}
	}
	data.Vars = withVarNames(data.Vars, t.vars)
	var b strings.Builder
	if err := t.t.Execute(&b, data); err != nil {
		return "", fmt.Errorf("rendering prompt %q: %w", t.name, err)
	}
	return b.String(), nil
}

// compile parses text against spec. custom is true for text the pipeline
// gave (not the node's default): its missing requirements are appended.
// Every template is then checked: each field reference, in every branch,
// must name a field of the data, and the template must render with sample
// data. source names where the text came from in messages (a file, or "");
// errors are *config.SettingError for setting.
func compile(spec TemplateSpec, setting, source, text string, custom bool) (*Template, error) {
	fail := func(err error) error {
		return &config.SettingError{Key: setting, Err: fmt.Errorf("%w: %w", config.ErrSettings, err)}
	}
	t, err := parseText(spec.Key, text)
	if err != nil {
		return nil, fail(fmt.Errorf("template: %w", err))
	}
	out := &Template{name: spec.Key, t: t, spec: &spec, setting: setting}
	if custom {
		for _, r := range spec.Required {
			if uses(t, r.Fields) {
				continue
			}
			text = strings.TrimRight(text, "\n") + "\n\n" + completionLine(r.Fields) + "\n" + r.Append
			out.completed = append(out.completed, r)
		}
		if len(out.completed) > 0 {
			if t, err = parseText(spec.Key, text); err != nil {
				return nil, fail(fmt.Errorf("template: %w", err)) // unreachable: Append is a built-in, tested template
			}
			out.t = t
		}
	}
	sample := sampleData(&spec)
	refs := references(t)
	for _, r := range refs {
		if len(r.chain) >= 2 && r.chain[0] == "Notes" && !slices.Contains(out.notes, r.chain[1]) {
			out.notes = append(out.notes, r.chain[1])
			sample.Notes[r.chain[1]] = "sample note " + r.chain[1]
		}
	}
	sort.Strings(out.notes)
	out.vars = varRefs(refs)
	for _, name := range out.vars {
		if err := state.CheckVarName(name); err != nil {
			return nil, fail(fmt.Errorf("{{.Vars.%s}}: no var can have this name: %w", name, err))
		}
		sample.Vars[name] = "sample var " + name
	}
	for _, r := range refs {
		if err := checkChain(&spec, reflect.ValueOf(sample), r, source); err != nil {
			return nil, fail(err)
		}
	}
	if err := t.Execute(io.Discard, sample); err != nil {
		where := ""
		if source != "" {
			where = " (" + source + ")"
		}
		return nil, fail(fmt.Errorf("rendering with sample values%s: %w", where, err))
	}
	return out, nil
}

// completionLine is the marker line before appended text.
func completionLine(fields []string) string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = ".Extra." + f
	}
	return fmt.Sprintf("%s the custom prompt does not use %s ---", CompletionMarker, strings.Join(names, " or "))
}

// sampleData is the data validation renders a template with: a sample run
// state (one plan step, one lesson) and the declared .Extra samples. Notes
// are filled in with the keys the template reads; the pipeline checks that
// some node writes them.
func sampleData(spec *TemplateSpec) PromptData {
	q := "What is 17 * 23 + 4?"
	d := PromptData{
		Question: q,
		History:  state.History{{Question: "What is 17 * 23?", Answer: "391"}},
		Task:     state.Task{ID: "sample-1", Question: q, Answer: "395", Tags: []string{"sample"}, History: state.History{{Question: "What is 17 * 23?", Answer: "391"}}},
		Plan: []plan.Step{{ID: "1", Description: "Compute 17 * 23 + 4", Tool: "calculator", Input: "17 * 23 + 4",
			Status: plan.StatusDone, Result: "395"}},
		Reflections: []string{"Check the arithmetic with the calculator."},
		Notes:       map[string]string{},
		Vars:        map[string]string{},
		Extra:       map[string]any{},
	}
	for _, f := range spec.Extra {
		d.Extra[f.Name] = f.Sample
	}
	return d
}

// checkChain resolves a field chain against the sample data and describes
// the first name that resolves to nothing.
func checkChain(spec *TemplateSpec, root reflect.Value, r ref, source string) error {
	v := root
	for i, name := range r.chain {
		for v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return nil
			}
			v = v.Elem()
		}
		var known []string
		switch v.Kind() {
		case reflect.Struct:
			if _, ok := v.Type().MethodByName(name); ok {
				return nil // a method: its result is checked by rendering
			}
			if f, ok := v.Type().FieldByName(name); ok && f.IsExported() {
				v = v.FieldByIndex(f.Index)
				continue
			}
			for j := 0; j < v.NumField(); j++ {
				if f := v.Type().Field(j); f.IsExported() {
					known = append(known, f.Name)
				}
			}
		case reflect.Map:
			if v.Type().Key().Kind() != reflect.String {
				return nil
			}
			if e := v.MapIndex(reflect.ValueOf(name)); e.IsValid() {
				v = e
				continue
			}
			for _, k := range v.MapKeys() {
				known = append(known, k.String())
			}
			sort.Strings(known)
			if i == 1 && r.chain[0] == "Extra" {
				// Keep the declaration's order, which the docs use.
				known = known[:0]
				for _, f := range spec.Extra {
					known = append(known, f.Name)
				}
			}
		default:
			// A field of a string, number or list: text/template fails on
			// it at render time; say so now, for every branch.
		}
		return unknownField(r, i, known, source)
	}
	return nil
}

// unknownField describes chain[i] as unknown, with the known names at that
// level and the closest one.
func unknownField(r ref, i int, known []string, source string) error {
	parent := "." + strings.Join(r.chain[:i], ".")
	if i == 0 {
		parent = ""
	}
	bad := parent + "." + r.chain[i]
	loc := "template"
	if source != "" {
		loc = source
	}
	var more strings.Builder
	if c := config.Closest(r.chain[i], known); c != "" {
		fmt.Fprintf(&more, "; did you mean %s.%s?", parent, c)
	}
	switch {
	case i == 0:
		more.WriteString(" (a prompt template sees .Question, .Task, .Plan, .Reflections, .Notes.KEY, .Vars.NAME and .Extra.NAME)")
	case i == 1 && r.chain[0] == "Extra" && len(known) == 0:
		more.WriteString(" (this setting's template gets no .Extra fields)")
	case len(known) > 0:
		names := make([]string, len(known))
		for j, k := range known {
			names[j] = parent + "." + k
		}
		what := parent + " has"
		if i == 1 && r.chain[0] == "Extra" {
			what = "this setting's .Extra fields are"
		}
		fmt.Fprintf(&more, " (%s %s)", what, strings.Join(names, ", "))
	default:
		fmt.Fprintf(&more, " (%s has no fields)", parent)
	}
	return fmt.Errorf("%s line %d: %w %s%s", loc, r.line, ErrUnknownField, bad, more.String())
}

// varRefs returns the var names refs read ({{.Vars.NAME}}), sorted, each
// once.
func varRefs(refs []ref) []string {
	var names []string
	for _, r := range refs {
		if len(r.chain) >= 2 && r.chain[0] == "Vars" && !slices.Contains(names, r.chain[1]) {
			names = append(names, r.chain[1])
		}
	}
	sort.Strings(names)
	return names
}

// withVarNames returns vars with "" for each of names it lacks, so that a
// template reading a var the run has not set renders it empty rather than
// failing (templates run with missingkey=error). vars may be nil.
func withVarNames(vars map[string]string, names []string) map[string]string {
	if vars == nil {
		vars = make(map[string]string, len(names))
	}
	for _, n := range names {
		if _, ok := vars[n]; !ok {
			vars[n] = ""
		}
	}
	return vars
}
