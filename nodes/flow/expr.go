package flow

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/state"
)

// ErrExpr means an expression of a router or set node does not compile,
// is not of the type its setting needs, reads a var no var can be named,
// or failed when it ran. It comes as an *ExprError.
var ErrExpr = errors.New("bad expression")

// ExprError is an expression that failed to compile or to run: the
// setting it is written under, its text and expr's message. It wraps
// ErrExpr and expr's own error.
type ExprError struct {
	// Setting is the expression's setting path in its node's settings,
	// such as "routes[1].when" or "assign.total".
	Setting string
	// Expr is the expression's text.
	Expr string
	// Msg is what is wrong, on one line: expr's message with the line and
	// column it points at, when it points at one.
	Msg string
	// Err is expr's error; nil when the node found the fault itself.
	Err error
}

// Error is "expression TEXT: MESSAGE".
func (e *ExprError) Error() string {
	return fmt.Sprintf("%v %q: %s", ErrExpr, e.Expr, e.Msg)
}

// Unwrap returns ErrExpr and expr's error.
func (e *ExprError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrExpr}
	}
	return []error{ErrExpr, e.Err}
}

// ExprEnv is what the expressions of router and set nodes see: the run
// state, read when the node runs. Field names are the expr names in the
// tags, such as usage.model_calls or vars.total.
type ExprEnv struct {
	// Question is the task's text.
	Question string `expr:"question"`
	// Answer is the answer so far ("" before a node set one).
	Answer string `expr:"answer"`
	// Complete is true once the answer is complete (state.State.Complete).
	Complete bool `expr:"complete"`
	// Done is true once a node set the final answer.
	Done bool `expr:"done"`
	// Failure is the failure kind of a run that did not complete normally
	// ("budget", "parse", ...; see the state.Failure constants), else "".
	Failure string `expr:"failure"`
	// Reason explains an incomplete answer.
	Reason string `expr:"reason"`
	// Steps is the number of steps of the current plan.
	Steps int `expr:"steps"`
	// Replans counts the re-planning rounds.
	Replans int `expr:"replans"`
	// Trials counts the finished trials of a retrying paradigm.
	Trials int `expr:"trials"`
	// Candidates counts the sampled answers or thoughts.
	Candidates int `expr:"candidates"`
	// Agreement is the share of the self-consistency samples that gave
	// the most frequent answer, from 0 to 1 (0 before any vote), so a
	// router can escalate on a weak majority: agreement < 0.6.
	Agreement float64 `expr:"agreement"`
	// Usage is the run's usage so far.
	Usage ExprUsage `expr:"usage"`
	// Vars are the run's vars; a var not set reads as "".
	Vars map[string]string `expr:"vars"`
}

// ExprUsage is the run's usage as expressions see it (usage.NAME).
type ExprUsage struct {
	// ModelCalls counts the model calls that returned a reply.
	ModelCalls int `expr:"model_calls"`
	// Tokens counts prompt and completion tokens together.
	Tokens int `expr:"tokens"`
	// Cost is the cost in US dollars, where the model is priced.
	Cost float64 `expr:"cost"`
}

// NewExprEnv reads the run state st into the environment expressions see.
// A nil st gives the zero environment (with no vars).
func NewExprEnv(st *state.State) ExprEnv {
	if st == nil {
		return ExprEnv{Vars: map[string]string{}}
	}
	u := st.Usage.Totals()
	return ExprEnv{
		Question:   st.Task.Question,
		Answer:     st.Answer,
		Complete:   st.Complete,
		Done:       st.Done,
		Failure:    st.Failure,
		Reason:     st.Reason,
		Steps:      len(st.Plan),
		Replans:    st.Replans,
		Trials:     len(st.Trials),
		Candidates: len(st.Candidates),
		Agreement:  agreement(st.SelfConsistency),
		Usage:      ExprUsage{ModelCalls: u.ModelCalls, Tokens: u.PromptTokens + u.CompletionTokens, Cost: u.CostUSD},
		Vars:       st.Vars.All(),
	}
}

// agreement is the top answer's share of t's samples; 0 without samples.
func agreement(t *state.Tally) float64 {
	if t == nil || t.Samples == 0 {
		return 0
	}
	top := 0
	for _, v := range t.Votes {
		top = max(top, v.Count)
	}
	return float64(top) / float64(t.Samples)
}

// program is one compiled expression.
type program struct {
	setting, src string
	prog         *vm.Program
	// vars are the var names the expression reads (vars.NAME), sorted.
	vars []string
}

// compileExpr compiles src, the expression of setting, against ExprEnv;
// asBool requires a boolean result. Errors are *config.SettingError for
// setting wrapping config.ErrSettings and an *ExprError.
func compileExpr(setting, src string, asBool bool) (*program, error) {
	fail := func(e *ExprError) error {
		return &config.SettingError{Key: setting, Err: fmt.Errorf("%w: %w", config.ErrSettings, e)}
	}
	if strings.TrimSpace(src) == "" {
		return nil, fail(&ExprError{Setting: setting, Expr: src, Msg: "the expression is empty"})
	}
	opts := []expr.Option{
		expr.Env(ExprEnv{}),
		// now() would make a resumed run decide differently from the run
		// it resumes.
		expr.DisableBuiltin("now"),
	}
	if asBool {
		opts = append(opts, expr.AsBool())
	}
	p, err := expr.Compile(src, opts...)
	if err != nil {
		return nil, fail(&ExprError{Setting: setting, Expr: src, Msg: exprMessage(err), Err: err})
	}
	out := &program{setting: setting, src: src, prog: p, vars: varRefs(p.Node())}
	for _, name := range out.vars {
		if err := state.CheckVarName(name); err != nil {
			return nil, fail(&ExprError{Setting: setting, Expr: src, Msg: fmt.Sprintf("vars.%s: no var can have this name: %v", name, err), Err: err})
		}
	}
	return out, nil
}

// run evaluates the expression on env. Its error is an *ExprError.
func (p *program) run(env ExprEnv) (any, error) {
	v, err := expr.Run(p.prog, env)
	if err != nil {
		return nil, &ExprError{Setting: p.setting, Expr: p.src, Msg: exprMessage(err), Err: err}
	}
	return v, nil
}

// exprMessage is expr's message on one line, with the line and column it
// points at (its snippet, which spans lines, left out).
func exprMessage(err error) string {
	var fe *file.Error
	if errors.As(err, &fe) {
		if fe.Line > 0 {
			return fmt.Sprintf("%s (line %d, column %d)", fe.Message, fe.Line, fe.Column+1)
		}
		return fe.Message
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}

// varRefs returns the var names an expression reads with a constant name
// (vars.NAME, vars["NAME"]), sorted, each once.
func varRefs(root ast.Node) []string {
	v := &varVisitor{}
	ast.Walk(&root, v)
	slices.Sort(v.names)
	return slices.Compact(v.names)
}

type varVisitor struct{ names []string }

// Visit records member accesses of the vars map with a constant key.
func (v *varVisitor) Visit(n *ast.Node) {
	m, ok := (*n).(*ast.MemberNode)
	if !ok {
		return
	}
	id, ok := m.Node.(*ast.IdentifierNode)
	if !ok || id.Value != "vars" {
		return
	}
	if s, ok := m.Property.(*ast.StringNode); ok {
		v.names = append(v.names, s.Value)
	}
}

// exprString converts the value of an expression to the string a var
// holds: text as it is, booleans and numbers as Go writes them (floats
// without an exponent below 1e21, whole floats without a fraction), nil
// as "", times in RFC 3339, anything else (lists, maps) as JSON.
func exprString(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case float64:
		return formatFloat(x), nil
	case float32:
		return formatFloat(float64(x)), nil
	case time.Time:
		return x.Format(time.RFC3339Nano), nil
	case time.Duration:
		return x.String(), nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(rv.Uint(), 10), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("a value of type %T cannot be stored in a var: %w", v, err)
	}
	return string(b), nil
}

func formatFloat(f float64) string {
	if math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
