package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/planner-engine/planner/agent"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/tools"
)

// Node is an agent graph node: it reads and updates the run state and
// returns the route to follow ("" for the default edge). It has the method
// set of graph.Node[*agent.State].
type Node interface {
	Run(ctx context.Context, st *agent.State) (route string, err error)
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
}

// Built is a constructed node with the non-default routes it may return.
type Built struct {
	Node   Node
	Routes []string
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

// Template compiles a prompt template given inline or as a file (key and
// key_file), falling back to def when neither is set or the text is blank.
// Errors are *config.SettingError naming the key.
func (env Env) Template(key, inline, file, def string) (*Template, error) {
	text, err := env.LoadText(inline, file, key)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(text) == "" {
		text = def
	}
	return ParseTemplate(key, text)
}

// Prompts resolves a node's system message and compiles its prompt
// template: inline text wins over nothing, a file is read relative to
// BaseDir, and blank values fall back to the defaults. Errors are
// *config.SettingError naming the key.
func (env Env) Prompts(src PromptSources, defSystem, defPrompt string) (string, *Template, error) {
	system, err := env.LoadText(src.System, src.SystemFile, "system")
	if err != nil {
		return "", nil, err
	}
	if strings.TrimSpace(system) == "" {
		system = defSystem
	}
	tmpl, err := env.Template("prompt", src.Prompt, src.PromptFile, defPrompt)
	if err != nil {
		return "", nil, err
	}
	return system, tmpl, nil
}
