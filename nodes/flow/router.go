package flow

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/tmc/langchaingo/llms"
)

// ErrRoute means a router's routes are declared wrongly: a route without
// a name or a condition, a name the edges cannot map, a duplicate label,
// routes by expression and by classification together, or routes without
// a default.
var ErrRoute = errors.New("bad router routes")

// RouterSettings configure a `router` node. It routes either by
// expressions (Routes) or by a classification (Classify.Labels), never
// both, and falls back to Default. A router that declares neither routes
// nor labels always follows Default, and with no Default its plain edge;
// a classify block without labels classifies nothing (its prompt is
// compiled and checked all the same), and the pipeline reports any edge
// that maps a label the router does not declare.
type RouterSettings struct {
	// Routes are tried in order; the first whose condition holds is
	// followed.
	Routes []RouteSetting `mapstructure:"routes"`
	// Default is the route followed when no condition holds, or when the
	// classification gave no valid label twice. Required with Routes or
	// Classify.Labels.
	Default string `mapstructure:"default"`
	// Classify routes by one model call instead of expressions.
	Classify *ClassifySettings `mapstructure:"classify"`
}

// RouteSetting is one route of a router and its condition.
type RouteSetting struct {
	// Route is the route's name, mapped to a node in the pipeline's edges.
	// Route names are lower case: the edges' route keys are read
	// lower-cased.
	Route string `mapstructure:"route"`
	// When is a boolean expression over the run state (ExprEnv), such as
	// `vars.kind == "math" && usage.model_calls < 10`.
	When string `mapstructure:"when"`
}

// ClassifySettings configure routing by classification: one model call
// (through the node's model) that names one of Labels, which are the
// router's routes. The reply is read leniently (case, punctuation, a
// "label:" line, a JSON {"label": ...}); a reply that names no label is
// asked for again once, with what was wrong, and a second such reply
// takes Default (with a guard event and a "parse" incident).
type ClassifySettings struct {
	// PromptSources are the system, system_file, prompt and prompt_file
	// keys; the prompt template sees {{.Extra.Labels}}, the labels.
	nodekind.PromptSources `mapstructure:",squash"`
	// Labels are the labels, each a route.
	Labels []string `mapstructure:"labels"`
	// MaxTokens caps the reply; 0 uses the model's default.
	MaxTokens int `mapstructure:"max_tokens"`
	// JSONMode asks the provider for a JSON reply (llms.WithJSONMode);
	// leave it off for providers without JSON mode.
	JSONMode bool `mapstructure:"json_mode"`
}

// GuardClassifyLabel is the guard name ("guard" in the event's Data) of
// the trace event of a router that took its default route because the
// classification named no valid label.
const GuardClassifyLabel = "classify_label"

const classifySystem = "You are a classifier. You sort a task into exactly one of a fixed set of labels."

const classifyPrompt = `Classify the task below into exactly one of these labels:
{{range .Extra.Labels}}- {{.}}
{{end}}
Task: {{.Question}}

Reply with JSON only, in the form {"label": "<label>"}, where <label> is one of: {{join .Extra.Labels ", "}}.`

const classifyAppend = `Reply with JSON only, in the form {"label": "<label>"}, where <label> is one of: {{join .Extra.Labels ", "}}.`

const classifyFeedback = `Your reply could not be used: %s
Reply with JSON only, in the form {"label": "<label>"}, where <label> is exactly one of: %s.`

// RouterTemplates declares the template of `router`: the classification
// prompt, classify.prompt.
func RouterTemplates() []nodekind.TemplateSpec {
	return nodekind.Nested("classify", []nodekind.TemplateSpec{classifySpec()})
}

func classifySpec() nodekind.TemplateSpec {
	return nodekind.TemplateSpec{
		Key: "prompt",
		Extra: []nodekind.Field{
			{Name: "Labels", Doc: "the labels to choose from (the router's routes), a list", Sample: []string{"math", "lookup", "other"}},
		},
		Required: []nodekind.Requirement{{Fields: []string{"Labels"}, Append: classifyAppend}},
	}
}

// Router is a `router` node: it returns the route of the first condition
// that holds, or the label a model call names, or its default.
type Router struct {
	id, kind string
	routes   []route
	def      string
	// classify is nil for a router by expressions.
	classify *classifier
	declared []string
}

// route is one compiled route.
type route struct {
	name string
	when *program
}

// classifier is the classification of a router by labels.
type classifier struct {
	model  llm.Model
	system string
	prompt *nodekind.Template
	labels []string
	// norm are the labels normalized (normLabel), in the same order.
	norm []string
	opts []llms.CallOption
}

// NewRouter builds a `router` node. Expressions are compiled and
// type-checked against ExprEnv here; its routes (Built.Routes) are the
// declared routes and labels and the default, so the pipeline checks that
// its edges map each one.
func NewRouter(env nodekind.Env, spec nodekind.Spec) (nodekind.Built, error) {
	var s RouterSettings
	if err := config.Decode(spec.Settings, &s); err != nil {
		return nodekind.Built{}, err
	}
	r := &Router{id: spec.ID, kind: spec.Type, def: s.Default}
	var cs ClassifySettings
	if s.Classify != nil {
		cs = *s.Classify
	}
	// The classification prompt is compiled even for a router by
	// expressions, as every kind compiles the templates it declares.
	system, tmpl, err := env.Nested("classify").Prompts(cs.PromptSources, classifySpec(), classifySystem, classifyPrompt)
	if err != nil {
		return nodekind.Built{}, config.NestSetting("classify", err)
	}
	if len(s.Routes) > 0 && len(cs.Labels) > 0 {
		return nodekind.Built{}, routeError("classify.labels", "route by expressions (routes) or by a classification (classify.labels), not both")
	}
	for i, rs := range s.Routes {
		key := fmt.Sprintf("routes[%d]", i)
		if err := checkRouteName(key+".route", rs.Route); err != nil {
			return nodekind.Built{}, err
		}
		when, err := compileExpr(key+".when", rs.When, true)
		if err != nil {
			return nodekind.Built{}, err
		}
		r.routes = append(r.routes, route{name: rs.Route, when: when})
		r.declared = append(r.declared, rs.Route)
	}
	if len(cs.Labels) > 0 {
		c, err := newClassifier(env.Model, system, tmpl, cs)
		if err != nil {
			return nodekind.Built{}, err
		}
		r.classify = c
		r.declared = append(r.declared, c.labels...)
	}
	if r.def != "" {
		if err := checkRouteName("default", r.def); err != nil {
			return nodekind.Built{}, err
		}
		r.declared = append(r.declared, r.def)
	} else if len(r.declared) > 0 {
		return nodekind.Built{}, routeError("default", "name the route to follow when no condition holds (or no label is given)")
	}
	r.declared = uniq(r.declared)
	return nodekind.Built{Node: r, Routes: slices.Clone(r.declared)}, nil
}

func newClassifier(model llm.Model, system string, tmpl *nodekind.Template, cs ClassifySettings) (*classifier, error) {
	c := &classifier{model: model, system: system, prompt: tmpl}
	for i, l := range cs.Labels {
		key := fmt.Sprintf("classify.labels[%d]", i)
		if err := checkRouteName(key, l); err != nil {
			return nil, err
		}
		n := normLabel(l)
		if n == "" {
			return nil, routeError(key, fmt.Sprintf("label %q: a label needs a letter or a digit", l))
		}
		if j := slices.Index(c.norm, n); j >= 0 {
			return nil, routeError(key, fmt.Sprintf("label %q is the same as label %q once case and punctuation are set aside", l, c.labels[j]))
		}
		c.labels = append(c.labels, l)
		c.norm = append(c.norm, n)
	}
	if cs.MaxTokens < 0 {
		return nil, config.SettingErrorf("classify.max_tokens", "max_tokens must not be negative (0 is the model's default), got %d", cs.MaxTokens)
	}
	if cs.MaxTokens > 0 {
		c.opts = append(c.opts, llms.WithMaxTokens(cs.MaxTokens))
	}
	if cs.JSONMode {
		c.opts = append(c.opts, llms.WithJSONMode())
	}
	return c, nil
}

// checkRouteName rejects a route name the edges cannot map: empty, with
// white space, or with capitals (the loader reads the edges' route keys
// lower-cased).
func checkRouteName(key, name string) error {
	switch {
	case name == "":
		return routeError(key, "a route needs a name")
	case strings.IndexFunc(name, unicode.IsSpace) >= 0:
		return routeError(key, fmt.Sprintf("route %q: a route name has no spaces", name))
	case strings.ToLower(name) != name:
		return routeError(key, fmt.Sprintf("route %q: route names are lower case, as the edges' route keys are read (write %q)", name, strings.ToLower(name)))
	}
	return nil
}

func routeError(key, msg string) error {
	return &config.SettingError{Key: key, Err: fmt.Errorf("%w: %w: %s", config.ErrSettings, ErrRoute, msg)}
}

func uniq(names []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// Routes returns the routes the router may return, in declaration order,
// the default last unless declared before.
func (r *Router) Routes() []string { return slices.Clone(r.declared) }

// ReadsVars returns the var names the router's conditions read (vars.NAME),
// sorted, each once; a classification prompt's are its template's (see
// nodekind.Template.Vars).
func (r *Router) ReadsVars() []string {
	var out []string
	for _, rt := range r.routes {
		out = append(out, rt.when.vars...)
	}
	if r.classify != nil {
		out = append(out, r.classify.prompt.Vars()...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Run picks the route. A condition that fails to evaluate (an int() of a
// var that holds no number) is an error naming the node, the setting and
// the expression; a classification's model call that fails is returned
// as it is.
func (r *Router) Run(ctx context.Context, st *state.State) (string, error) {
	if r.classify != nil {
		return r.runClassify(ctx, st)
	}
	tr := trace.From(ctx)
	if len(r.routes) > 0 {
		env := NewExprEnv(st)
		for i, rt := range r.routes {
			v, err := rt.when.run(env)
			if err != nil {
				return "", fmt.Errorf("%s %s: %s: %w", r.kind, r.id, rt.when.setting, err)
			}
			if b, _ := v.(bool); b {
				tr.Emit(trace.Event{Node: r.id, Kind: trace.KindDecision, Text: "route " + rt.name + ": " + rt.when.src,
					Data: map[string]any{"route": rt.name, "by": "expression", "index": i, "when": rt.when.src}})
				return rt.name, nil
			}
		}
	}
	name := r.def
	if name == "" {
		name = "(the plain edge)"
	}
	text := "route " + name + ": no condition holds"
	if len(r.routes) == 0 {
		text = "route " + name + ": the router declares no conditions"
	}
	tr.Emit(trace.Event{Node: r.id, Kind: trace.KindDecision, Text: text, Data: map[string]any{"route": r.def, "by": "default"}})
	return r.def, nil
}
