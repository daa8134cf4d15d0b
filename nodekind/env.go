package nodekind

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/keyword"
)

// Node is an agent graph node: it reads and updates the run state and
// returns the route to follow ("" for the default edge). It has the method
// set of graph.Node[*state.State].
type Node interface {
	Run(ctx context.Context, st *state.State) (route string, err error)
}

// Spec is one node as declared in a pipeline: its id, its type, and the
// remaining keys as type-specific settings.
type Spec struct {
	ID       string
	Type     string
	Settings map[string]any
}

// Env is what a node constructor may use: the model, the tools and where
// relative files (prompt_file) are resolved from.
type Env struct {
	// Model is the node's model (the pipeline's, or the node's own llm block).
	Model llm.Model
	// Tools is the pipeline's tool registry; may be empty but not nil.
	Tools *tools.Registry
	// BaseDir resolves relative paths in settings; usually the YAML's folder.
	BaseDir string
	// Compiled, when set, records every template compiled through Env, so
	// that the pipeline can report the completions of custom templates and
	// check their {{.Notes.KEY}} against the notes its nodes write. Nil
	// records nothing.
	Compiled *TemplateSet
	// Keywords builds the BM25 keyword indexes of the ReAct engine's tool
	// retrieval (method bm25 or hybrid) and of its recall tool's word
	// search (search.Keywords of package tools/search is the command
	// line's). Nil means none: a node that needs one fails with a setting
	// error naming the setting and the fix.
	Keywords keyword.Indexer
	// Subgraphs builds the pipelines that a node runs inside itself (the
	// `subgraph` and `map` kinds). Nil when the caller builds nodes
	// outside a pipeline: such a node fails with a setting error.
	Subgraphs SubgraphBuilder
	// prefix is the path of the settings block being built ("react."); see
	// Nested.
	prefix string
}

// Nested returns env for a block of settings nested under key, such as the
// `react:` block of an `execute` or `lats` node: templates compiled through
// it are recorded under "key.prompt" and so on. Errors still name the key
// within the block; the caller prefixes them, as it does for every other
// setting of the block.
func (env Env) Nested(key string) Env {
	env.prefix += key + "."
	return env
}

// TemplateSet records the templates compiled through an Env (Env.Compiled).
// It is not safe for concurrent use; constructors run one at a time.
type TemplateSet struct {
	list []*Template
}

// Templates returns the recorded templates in compilation order.
func (s *TemplateSet) Templates() []*Template { return s.list }

// SubgraphBuilder builds the pipeline a node runs inside itself: a
// pipeline file (path, relative to the node's pipeline) or an inline
// pipeline (the mapping written under the node's setting key). inputs
// are the vars the node gives each nested run when it starts, which the
// nested pipeline's templates and expressions may read. Errors name the
// file and line at fault.
type SubgraphBuilder interface {
	Subgraph(key, path string, inline map[string]any, inputs []string) (Subgraph, error)
}

// Subgraph is a built pipeline that runs nested inside a node's execution.
type Subgraph interface {
	// RunNested runs the pipeline on task, on a fresh state that starts
	// with vars, inside the node execution of ctx, on behalf of the run of
	// parent: its model and tool calls pass parent's hooks (budgets, usage,
	// journal, spans, audit) and are journaled under the scope of ctx,
	// then label ("sub", "item 3"), so that a resumed run replays them to
	// the same place. It returns the nested run's state, also on error.
	RunNested(ctx context.Context, parent *state.State, task state.Task, vars map[string]string, label string) (*state.State, error)
	// Name is the pipeline's name.
	Name() string
}

// Built is a constructed node with the non-default routes it may return.
type Built struct {
	Node   Node
	Routes []string
	// Notes are the note keys the node writes (st.Note), which templates
	// read as {{.Notes.KEY}}; validation checks every such read against
	// the notes some node of the pipeline writes.
	Notes []string
}

// Constructor builds a node from its spec. It validates its own settings
// and returns errors that name the offending setting.
type Constructor func(env Env, spec Spec) (Built, error)

// LoadText returns inline text, or the contents of file resolved against
// env.BaseDir when file is set. Setting both is an error.
func (env Env) LoadText(inline, file, key string) (string, error) {
	if file == "" {
		return inline, nil
	}
	if inline != "" {
		return "", &config.SettingError{Key: key, Err: fmt.Errorf("%w: set the text inline or %s_file, not both", config.ErrSettings, key)}
	}
	p := file
	if !filepath.IsAbs(p) && env.BaseDir != "" {
		p = filepath.Join(env.BaseDir, p)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", &config.SettingError{Key: key + "_file", Err: fmt.Errorf("%w: %w", config.ErrSettings, err)}
	}
	return string(b), nil
}

// PromptSources are a node's system and prompt overrides as written in
// YAML: inline text or a file, for each. Settings structs embed it with
// `mapstructure:",squash"`, so its keys sit beside the node's own; what
// the prompt template sees is documented by each node's settings.
type PromptSources struct {
	// System replaces the node's system message. Default: the node's own.
	System string `mapstructure:"system"`
	// SystemFile reads the system message from a file instead (relative
	// to the pipeline file).
	SystemFile string `mapstructure:"system_file"`
	// Prompt replaces the node's user message template (Go text/template).
	// Default: the node's built-in prompt.
	Prompt string `mapstructure:"prompt"`
	// PromptFile reads the prompt template from a file instead.
	PromptFile string `mapstructure:"prompt_file"`
}

// Template compiles the prompt template of the setting spec.Key, given
// inline or as a file (spec.Key+"_file"), falling back to def when neither
// is set or the text is blank. A custom template (inline or from a file)
// that does not use a field spec requires gets the requirement's text
// appended (see Requirement). Every template is then checked against spec:
// a reference to a field the data lacks ({{.Questoin}}, an undeclared
// {{.Extra.X}}), in any branch, or a failure to render with the sample
// values, is an error. Errors are *config.SettingError naming the key (the
// _file key for a file), wrapping config.ErrSettings.
func (env Env) Template(spec TemplateSpec, inline, file, def string) (*Template, error) {
	text, err := env.LoadText(inline, file, spec.Key)
	if err != nil {
		return nil, err
	}
	setting, source, custom := spec.Key, "", strings.TrimSpace(text) != ""
	switch {
	case !custom:
		text = def
	case file != "":
		setting, source = spec.Key+"_file", file
	}
	t, err := compile(spec, setting, source, text, custom)
	if err != nil {
		return nil, err
	}
	t.setting = env.prefix + t.setting
	if env.Compiled != nil {
		env.Compiled.list = append(env.Compiled.list, t)
	}
	return t, nil
}

// Prompts resolves a node's system message and compiles its prompt
// template (the setting "prompt", declared by spec): inline text wins over
// nothing, a file is read relative to BaseDir, and blank values fall back
// to the defaults. The system message is plain text, not a template.
// Errors are *config.SettingError naming the key.
func (env Env) Prompts(src PromptSources, spec TemplateSpec, defSystem, defPrompt string) (string, *Template, error) {
	system, err := env.LoadText(src.System, src.SystemFile, "system")
	if err != nil {
		return "", nil, err
	}
	if strings.TrimSpace(system) == "" {
		system = defSystem
	}
	spec.Key = "prompt"
	tmpl, err := env.Template(spec, src.Prompt, src.PromptFile, defPrompt)
	if err != nil {
		return "", nil, err
	}
	return system, tmpl, nil
}

// VarNamesSetting checks a setting (key) that lists var names, such as a
// nested run's `export`: the first name that is no valid var name is a
// *config.SettingError naming key[i] and why.
func VarNamesSetting(key string, names []string) error {
	for i, name := range names {
		if err := state.CheckVarName(name); err != nil {
			return &config.SettingError{Key: fmt.Sprintf("%s[%d]", key, i), Err: fmt.Errorf("%w: %w", config.ErrSettings, err)}
		}
	}
	return nil
}

// VarSetting parses a setting (key) that names where a value goes or
// comes from: "var:NAME", or, when answer is set, "answer" (or "") for the
// run's answer, returned as "". Errors are *config.SettingError naming
// key, with the forms it takes or why NAME is no valid var name.
func VarSetting(key, s string, answer bool) (string, error) {
	if answer && (s == "" || s == "answer") {
		return "", nil
	}
	name, ok := strings.CutPrefix(s, "var:")
	if !ok {
		if answer {
			return "", config.SettingErrorf(key, `want "answer" or "var:NAME", got %q`, s)
		}
		return "", config.SettingErrorf(key, `want "var:NAME", got %q`, s)
	}
	if err := state.CheckVarName(name); err != nil {
		return "", &config.SettingError{Key: key, Err: fmt.Errorf("%w: %w", config.ErrSettings, err)}
	}
	return name, nil
}
