package general

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/tmc/langchaingo/llms"
)

// DefaultMaxRetries is LLMSettings.MaxRetries when unset: how many times
// a reply that does not match the schema is sent back.
const DefaultMaxRetries = 2

// RouteFailed is the route an `llm` or `tool` node with `on_failure:
// route` takes when it fails: a reply that never matched the schema, or a
// tool call that failed.
const RouteFailed = "failed"

// GuardSchema names the trace event of a reply rejected by an llm node's
// schema (kind guard, Data["guard"]).
const GuardSchema = "schema"

// ErrSchema means an llm node got no reply matching its schema within its
// retries. It is returned inside a *SchemaError.
var ErrSchema = errors.New("no reply matches the JSON Schema")

// SchemaError is the error of an llm node whose replies never matched its
// schema. It matches ErrSchema.
type SchemaError struct {
	// Node is the node's id.
	Node string
	// Attempts is how many replies were checked.
	Attempts int
	// Reply is the last reply.
	Reply string
	// Problems are what was wrong with the last reply, each as "at /path:
	// what".
	Problems []string
}

// Error says how many replies were checked and what was wrong with the
// last one.
func (e *SchemaError) Error() string {
	return fmt.Sprintf("%v after %d attempt(s): %s", ErrSchema, e.Attempts, strings.Join(e.Problems, "; "))
}

// Unwrap returns ErrSchema.
func (e *SchemaError) Unwrap() error { return ErrSchema }

// LLMSettings configure an `llm` node: one prompt, one model call, the
// reply stored where `output` says. Every field is optional.
//
// The system message defaults to a short assistant role. The prompt
// template sees the run state ({{.Question}}, {{.Vars.NAME}},
// {{.Notes.KEY}}, ...) and {{.Extra.Schema}}, the schema as indented JSON
// ("" without one); it defaults to {{.Question}}, followed by the schema
// and a request for JSON when `schema` is set. A custom prompt of a node
// with a schema that does not use {{.Extra.Schema}} gets it appended.
type LLMSettings struct {
	// PromptSources are the system, system_file, prompt and prompt_file
	// keys.
	nodekind.PromptSources `mapstructure:",squash"`
	// Output is where the reply goes: "answer" (default) sets the run's
	// final answer; "note:<key>" stores it as a note; "var:<name>" in the
	// run's vars (a text reply is cut to state.MaxVarValue characters, a
	// JSON one must fit). With a schema whose type is "object",
	// "vars:<prefix>" (or "vars", prefix the node's id) stores each
	// top-level field as the var <prefix>.<field> (which a template reads
	// as {{index .Vars "<prefix>.<field>"}}): strings as they are, other
	// values as JSON.
	Output string `mapstructure:"output"`
	// Schema is a JSON Schema (draft 2020-12 unless its "$schema" says
	// otherwise) the reply must match: a YAML mapping, or text holding
	// JSON or YAML. Write it as text when property names have capitals:
	// the pipeline loader lower-cases the keys of mappings. It is checked
	// against the draft's meta-schema when the pipeline is built, and may
	// not refer to other documents. With a schema the reply's JSON value
	// is taken from the text (the whole reply, a code fence, or a value
	// inside prose), validated, and stored as compact JSON with sorted
	// keys. Default: none; the reply is stored as text, trimmed.
	Schema any `mapstructure:"schema"`
	// MaxRetries is how many times a reply that does not match the schema
	// is sent back, with what is wrong, before the node fails. Default 2
	// (DefaultMaxRetries); 0 disables retries. Only with a schema.
	MaxRetries *int `mapstructure:"max_retries"`
	// JSONMode asks the provider for JSON (llms.WithJSONMode), where it
	// can. Default true when the schema's type is "object" (providers'
	// JSON modes return objects), false otherwise. Only with a schema.
	JSONMode *bool `mapstructure:"json_mode"`
	// OnFailure is what happens when no reply matches the schema within
	// the retries: "error" ends the run with a *SchemaError (ErrSchema);
	// "route" notes the incident (failure kind "parse") and takes the
	// `failed` route, which the pipeline must then map. Default "error".
	OnFailure string `mapstructure:"on_failure"`
	// Temperature overrides the model's sampling temperature.
	Temperature *float64 `mapstructure:"temperature"`
	// MaxTokens caps the completion; 0 uses the model default.
	MaxTokens int `mapstructure:"max_tokens"`
	// Role names what the call does ("sort", "merge", "classify"), as
	// llm.CallMeta.Role: traces, usage by role and models that play roles
	// (the sim) read it. Default none.
	Role string `mapstructure:"role"`
}

const llmSystem = "You are a careful, concise assistant. Follow the instructions exactly."

const llmPrompt = `{{.Question}}`

const llmSchemaPrompt = `{{.Question}}

` + schemaRequirement

// schemaFeedback is the user message that sends an invalid reply back.
const schemaFeedback = `Your reply does not match the JSON Schema:
%s
Reply again with the corrected JSON value only.`

// LLM is the `llm` node: it renders its prompt over the run state, calls
// the model, and stores the reply (checked against its schema, if any).
type LLM struct {
	id, kind   string
	role       string
	model      llm.Model
	system     string
	prompt     *nodekind.Template
	opts       []llms.CallOption
	out        output
	schema     *schema
	maxRetries int
	routeOnErr bool
}

// NewLLM builds an `llm` node (see LLMSettings).
func NewLLM(env nodekind.Env, spec nodekind.Spec) (nodekind.Built, error) {
	var s LLMSettings
	if err := config.Decode(spec.Settings, &s); err != nil {
		return nodekind.Built{}, err
	}
	n := &LLM{id: spec.ID, kind: spec.Type, role: s.Role, model: env.Model, maxRetries: DefaultMaxRetries}
	tspec, defPrompt := llmSpec(), llmPrompt
	if s.Schema != nil {
		sch, err := compileSchema(spec.ID, s.Schema)
		if err != nil {
			return nodekind.Built{}, &config.SettingError{Key: "schema", Err: fmt.Errorf("%w: %w", config.ErrSettings, err)}
		}
		n.schema, defPrompt = sch, llmSchemaPrompt
	} else {
		tspec = tspec.Without("Schema")
		for _, k := range []struct {
			key string
			set bool
		}{{"max_retries", s.MaxRetries != nil}, {"json_mode", s.JSONMode != nil}} {
			if k.set {
				return nodekind.Built{}, config.SettingErrorf(k.key, "applies only with a schema; set schema: or remove %s", k.key)
			}
		}
	}
	system, tmpl, err := env.Prompts(s.PromptSources, tspec, llmSystem, defPrompt)
	if err != nil {
		return nodekind.Built{}, err
	}
	n.system, n.prompt = system, tmpl
	if n.out, err = parseOutput(s.Output, outAnswer, spec.ID, n.schema != nil && n.schema.object); err != nil {
		return nodekind.Built{}, err
	}
	if s.MaxRetries != nil {
		if *s.MaxRetries < 0 {
			return nodekind.Built{}, config.SettingErrorf("max_retries", "must be 0 or more, got %d", *s.MaxRetries)
		}
		n.maxRetries = *s.MaxRetries
	}
	if n.routeOnErr, err = onFailure(s.OnFailure); err != nil {
		return nodekind.Built{}, err
	}
	if s.Temperature != nil {
		n.opts = append(n.opts, llms.WithTemperature(*s.Temperature))
	}
	if s.MaxTokens > 0 {
		n.opts = append(n.opts, llms.WithMaxTokens(s.MaxTokens))
	}
	if n.schema != nil && (s.JSONMode == nil && n.schema.object || s.JSONMode != nil && *s.JSONMode) {
		n.opts = append(n.opts, llms.WithJSONMode())
	}
	b := nodekind.Built{Node: n, Notes: n.out.notes()}
	if n.routeOnErr {
		b.Routes = []string{RouteFailed}
	}
	return b, nil
}

// onFailure parses the on_failure setting: true for "route".
func onFailure(s string) (bool, error) {
	switch s {
	case "", "error":
		return false, nil
	case "route":
		return true, nil
	}
	return false, config.SettingErrorf("on_failure", "want error or route, got %q", s)
}

// Run renders the prompt, calls the model (again, with what was wrong,
// while a reply does not match the schema and retries are left) and
// stores the result.
func (n *LLM) Run(ctx context.Context, st *state.State) (string, error) {
	extra := map[string]any{"Schema": ""}
	if n.schema != nil {
		extra["Schema"] = n.schema.text
	}
	user, err := n.prompt.Render(st, extra)
	if err != nil {
		return "", err
	}
	msgs := llm.Prompt(n.system, user)
	caller := llm.CallMeta{Node: n.id, Kind: n.kind, Role: n.role}
	tr := trace.From(ctx)
	for attempt := 1; ; attempt++ {
		text, _, err := n.model.Call(ctx, st, caller, msgs, n.opts...)
		if err != nil {
			return "", err
		}
		text = strings.TrimSpace(text)
		if n.schema == nil {
			return "", n.out.storeText(ctx, st, n.id, text, true)
		}
		r, problems := n.schema.check(text)
		if problems == nil {
			if n.out.kind == outVars {
				obj, _ := r.value.(map[string]any) // an object: the schema's type is "object"
				return "", n.out.spread(ctx, st, n.id, obj)
			}
			return "", n.out.storeText(ctx, st, n.id, r.canonical, false)
		}
		left := n.maxRetries + 1 - attempt
		tr.Emit(trace.Event{Node: n.id, Kind: trace.KindGuard, Text: "reply rejected by the schema: " + strings.Join(problems, "; "),
			Data: map[string]any{"guard": GuardSchema, "attempt": attempt, "retries_left": left}})
		if left <= 0 {
			return n.fail(ctx, st, &SchemaError{Node: n.id, Attempts: attempt, Reply: text, Problems: problems})
		}
		msgs = append(msgs, llm.Text(llms.ChatMessageTypeAI, text),
			llm.Text(llms.ChatMessageTypeHuman, fmt.Sprintf(schemaFeedback, "- "+strings.Join(problems, "\n- "))))
	}
}

// fail ends the node with err, or, with on_failure: route, notes the
// incident and takes the failed route.
func (n *LLM) fail(ctx context.Context, st *state.State, err *SchemaError) (string, error) {
	if !n.routeOnErr {
		return "", err
	}
	st.NoteIncident(state.FailureParse)
	trace.From(ctx).Emit(trace.Event{Node: n.id, Kind: trace.KindError, Text: err.Error(), Data: map[string]any{"route": RouteFailed}})
	return RouteFailed, nil
}
