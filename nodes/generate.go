package nodes

import (
	"context"
	"fmt"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/planner-engine/planner/verify"
	"github.com/tmc/langchaingo/llms"
)

// GenerateSettings configure the single-call generator nodes `direct` and
// `cot`.
//
// The system message defaults to a short assistant role. The prompt
// template sees {{.Question}}, the task; its default depends on the type.
type GenerateSettings struct {
	// PromptSources are the system, system_file, prompt and prompt_file
	// keys.
	nodekind.PromptSources `mapstructure:",squash"`
	// Temperature overrides the model's sampling temperature.
	Temperature *float64 `mapstructure:"temperature"`
	// MaxTokens caps the completion; 0 uses the model default.
	MaxTokens int `mapstructure:"max_tokens"`
	// Extract pulls the final answer out of the reply ("Answer: ...",
	// "#### n", \boxed{}, ...). Default false for direct, true for cot.
	Extract *bool `mapstructure:"extract"`
	// Output is where the reply goes: "answer" (default) sets the final
	// answer; "note:<key>" stores it as a note for later nodes;
	// "var:<name>" stores it in the run's vars (working memory, read as
	// {{.Vars.name}}; cut to state.MaxVarValue characters).
	Output string `mapstructure:"output"`
}

const defaultSystem = "You are a careful, concise assistant. Answer the user's question accurately."

const directPrompt = `{{with .History}}{{.}}
{{end}}{{.Question}}

Reply with the answer only.`

const cotPrompt = `{{with .History}}{{.}}
{{end}}Question: {{.Question}}

Let's think step by step. Work through the problem, then write the final answer on its own last line in the form:
Answer: <answer>`

// Generate is a node that makes one model call and records the reply as the
// answer or as a note.
type Generate struct {
	id, kind string
	model    llm.Model
	system   string
	prompt   *nodekind.Template
	opts     []llms.CallOption
	extract  bool
	noteKey  string
	varName  string
}

// NewDirect builds a `direct` node: one model call, the reply is the answer.
func NewDirect(env nodekind.Env, spec nodekind.Spec) (nodekind.Built, error) {
	return newGenerate(env, spec, directPrompt, false)
}

// NewCoT builds a `cot` node: zero-shot chain of thought with answer
// extraction from the final "Answer:" line.
func NewCoT(env nodekind.Env, spec nodekind.Spec) (nodekind.Built, error) {
	return newGenerate(env, spec, cotPrompt, true)
}

func newGenerate(env nodekind.Env, spec nodekind.Spec, defPrompt string, defExtract bool) (nodekind.Built, error) {
	var s GenerateSettings
	if err := config.Decode(spec.Settings, &s); err != nil {
		return nodekind.Built{}, err
	}
	g, err := buildGenerate(env, spec, s, defPrompt, defExtract)
	if err != nil {
		return nodekind.Built{}, err
	}
	return nodekind.Built{Node: g, Notes: g.notes()}, nil
}

func buildGenerate(env nodekind.Env, spec nodekind.Spec, s GenerateSettings, defPrompt string, defExtract bool) (*Generate, error) {
	system, tmpl, err := env.Prompts(s.PromptSources, generateSpec(), defaultSystem, defPrompt)
	if err != nil {
		return nil, err
	}
	g := &Generate{id: spec.ID, kind: spec.Type, model: env.Model, system: system, prompt: tmpl, extract: defExtract}
	if s.Extract != nil {
		g.extract = *s.Extract
	}
	switch {
	case s.Output == "" || s.Output == "answer":
	case strings.HasPrefix(s.Output, "note:") && len(s.Output) > len("note:"):
		g.noteKey = strings.TrimPrefix(s.Output, "note:")
	case strings.HasPrefix(s.Output, "var:"):
		g.varName = strings.TrimPrefix(s.Output, "var:")
		if err := state.CheckVarName(g.varName); err != nil {
			return nil, &config.SettingError{Key: "output", Err: fmt.Errorf("%w: %w", config.ErrSettings, err)}
		}
	default:
		return nil, &config.SettingError{Key: "output", Err: fmt.Errorf("%w: want \"answer\", \"note:<key>\" or \"var:<name>\", got %q", config.ErrSettings, s.Output)}
	}
	if s.Temperature != nil {
		g.opts = append(g.opts, llms.WithTemperature(*s.Temperature))
	}
	if s.MaxTokens > 0 {
		g.opts = append(g.opts, llms.WithMaxTokens(s.MaxTokens))
	}
	return g, nil
}

// notes are the note keys g writes: its output note, if any.
func (g *Generate) notes() []string {
	if g.noteKey == "" {
		return nil
	}
	return []string{g.noteKey}
}

// Run makes the call and records the result.
func (g *Generate) Run(ctx context.Context, st *state.State) (string, error) {
	user, err := g.prompt.Render(st, nil)
	if err != nil {
		return "", err
	}
	text, _, err := g.model.Call(ctx, st, llm.CallMeta{Node: g.id, Kind: g.kind}, llm.Prompt(g.system, user), g.opts...)
	if err != nil {
		return "", err
	}
	text = strings.TrimSpace(text)
	out := text
	if g.extract {
		if a, ok := verify.Extract(text); ok {
			out = a
		}
		if out != text {
			trace.From(ctx).Emit(trace.Event{Node: g.id, Kind: trace.KindThought, Text: text})
		}
	}
	if g.noteKey != "" {
		st.Note(g.noteKey, out)
		trace.From(ctx).Emit(trace.Event{Node: g.id, Kind: trace.KindInfo, Text: g.noteKey + ": " + out})
		return "", nil
	}
	if g.varName != "" {
		if err := st.Vars.SetClipped(g.varName, out); err != nil {
			return "", fmt.Errorf("%s: output var:%s: %w", g.id, g.varName, err)
		}
		trace.From(ctx).Emit(trace.Event{Node: g.id, Kind: trace.KindInfo, Text: "var " + g.varName + " = " + out, Data: map[string]any{"var": g.varName}})
		return "", nil
	}
	if out == "" {
		st.SetPartial("", "the model returned an empty answer", state.FailureParse)
	} else {
		st.SetAnswer(out)
	}
	trace.From(ctx).Emit(trace.Event{Node: g.id, Kind: trace.KindAnswer, Text: out})
	return "", nil
}
