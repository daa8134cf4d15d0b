package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/planner-engine/planner/tools"
)

// Node is an agent graph node: it reads and updates the run state and
// returns the route to follow ("" for the default edge). It has the method
// set of graph.Node[*State].
type Node interface {
	Run(ctx context.Context, st *State) (route string, err error)
}

// NodeSpec is one node as declared in a pipeline: its id, its type, and the
// remaining keys as type-specific settings.
type NodeSpec struct {
	ID       string
	Type     string
	Settings map[string]any
}

// Env is what a node constructor may use: the model, the tools and where
// relative files (prompt_file) are resolved from.
type Env struct {
	// Model is the node's model (the pipeline's, or the node's own llm block).
	Model Model
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
type Constructor func(env Env, spec NodeSpec) (Built, error)

// ErrSettings marks invalid node settings.
var ErrSettings = errors.New("invalid node settings")

// SettingError names the setting at fault, so the config loader can point
// at its line.
type SettingError struct {
	Key string
	Err error
}

func (e *SettingError) Error() string { return fmt.Sprintf("setting %q: %v", e.Key, e.Err) }

// Unwrap returns the cause.
func (e *SettingError) Unwrap() error { return e.Err }

// Decode decodes node settings into out (a pointer to a struct with
// mapstructure tags), rejecting unknown keys. Durations accept strings such
// as "30s". Errors are *SettingError wrapping ErrSettings.
func Decode(settings map[string]any, out any) error {
	var md mapstructure.Metadata
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		Result:           out,
		Metadata:         &md,
		WeaklyTypedInput: true,
		DecodeHook:       mapstructure.ComposeDecodeHookFunc(mapstructure.StringToTimeDurationHookFunc(), mapstructure.StringToSliceHookFunc(",")),
	})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrSettings, err)
	}
	if err := dec.Decode(settings); err != nil {
		key := ""
		var de *mapstructure.DecodeError
		if errors.As(err, &de) {
			key = de.Name()
		}
		return &SettingError{Key: key, Err: fmt.Errorf("%w: %w", ErrSettings, err)}
	}
	if len(md.Unused) > 0 {
		sort.Strings(md.Unused)
		return &SettingError{Key: md.Unused[0], Err: fmt.Errorf("%w: unknown setting (known: %s)", ErrSettings, strings.Join(knownKeys(out), ", "))}
	}
	return nil
}

func knownKeys(out any) []string {
	t := reflect.TypeOf(out)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := strings.Split(f.Tag.Get("mapstructure"), ",")[0]
		if tag == "-" {
			continue
		}
		if tag == "" {
			tag = strings.ToLower(f.Name)
		}
		keys = append(keys, tag)
	}
	sort.Strings(keys)
	return keys
}

// LoadText returns inline text, or the contents of file resolved against
// env.BaseDir when file is set. Setting both is an error.
func (env Env) LoadText(inline, file, key string) (string, error) {
	if file == "" {
		return inline, nil
	}
	if inline != "" {
		return "", &SettingError{Key: key, Err: fmt.Errorf("%w: set the text inline or %s_file, not both", ErrSettings, key)}
	}
	p := file
	if !filepath.IsAbs(p) && env.BaseDir != "" {
		p = filepath.Join(env.BaseDir, p)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", &SettingError{Key: key + "_file", Err: fmt.Errorf("%w: %w", ErrSettings, err)}
	}
	return string(b), nil
}

// PromptSources are a node's system and prompt overrides as written in
// YAML: inline text or a file, for each.
type PromptSources struct {
	System, SystemFile, Prompt, PromptFile string
}

// Template compiles a prompt template given inline or as a file (key and
// key_file), falling back to def when neither is set or the text is blank.
// Errors are *SettingError naming the key.
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
// *SettingError naming the key.
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

// SettingErrorf returns a *SettingError for key wrapping ErrSettings, with
// a message formatted like fmt.Sprintf.
func SettingErrorf(key, format string, args ...any) error {
	return &SettingError{Key: key, Err: fmt.Errorf("%w: %s", ErrSettings, fmt.Sprintf(format, args...))}
}
