package calc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/planner-engine/planner/tools"
)

// Name is the name the calculator tool is registered under.
const Name = "calculator"

// Tool is the calculator as a planner tool. It is safe for concurrent use.
type Tool struct {
	cfg config
}

// Compile-time checks that Tool implements the planner tool interfaces.
var (
	_ tools.Tool         = (*Tool)(nil)
	_ tools.Schemer      = (*Tool)(nil)
	_ tools.MetaProvider = (*Tool)(nil)
)

// New returns a calculator tool; the options apply to every call.
func New(opts ...Option) *Tool {
	return &Tool{cfg: newConfig(opts)}
}

// Name returns "calculator".
func (t *Tool) Name() string { return Name }

// Description tells the model what the calculator accepts.
func (t *Tool) Description() string {
	return "Evaluates one arithmetic expression exactly and returns its value. " +
		"Example input: (1200 - 350) * 1.08 / 3 + 2^10. " +
		"Operators: + - * / % (modulo) ^ or ** (power) ! (factorial) and parentheses; " +
		"functions: sqrt, ln, log (base 10, or log(x, base)), log2, exp, sin, cos, tan, asin, acos, atan (radians), " +
		"abs, round(x) or round(x, digits), floor, ceil, min, max, pow(x, y), factorial(n); constants: pi, e. " +
		"Write plain numbers without units or currency; 1,234 and 1234 are the same outside function arguments. " +
		"Integers and decimals are exact (0.1+0.2 = 0.3); non-terminating results are rounded to " +
		fmt.Sprint(t.cfg.precision) + " decimal places."
}

// Schema declares a single required string argument "expression".
func (t *Tool) Schema() map[string]any {
	return tools.StringSchema("expression", "The arithmetic expression to evaluate, e.g. (3 + 4) * 2^10 / 7 or sqrt(2) * max(3, 4.5).")
}

// Meta reports that the calculator is read-only and needs no network.
func (t *Tool) Meta() tools.Meta {
	return tools.Meta{ReadOnly: true}
}

// Call evaluates input, which is either the expression itself or a JSON
// object {"expression": "..."} (the keys "input" and "expr" are accepted
// too), and returns the rendered result. Input it cannot evaluate yields an
// error wrapping tools.ErrBadInput and the calc sentinel that explains why.
func (t *Tool) Call(ctx context.Context, input string) (string, error) {
	expr, err := expression(input)
	if err != nil {
		return "", fmt.Errorf("%w: %w", tools.ErrBadInput, err)
	}
	res, err := eval(ctx, expr, t.cfg)
	if err != nil {
		var calcErr *Error
		if errors.As(err, &calcErr) {
			return "", fmt.Errorf("%w: %w", tools.ErrBadInput, err)
		}
		return "", err
	}
	return res.String(), nil
}

// expressionKeys are the JSON argument names accepted for the expression,
// in order of preference.
var expressionKeys = []string{"expression", "input", "expr"}

// expression extracts the expression from a tool input: a JSON object from
// native tool calling, or the raw text.
func expression(input string) (string, error) {
	trimmed := strings.TrimSpace(input)
	if !strings.HasPrefix(trimmed, "{") {
		return input, nil
	}
	var args map[string]json.RawMessage
	if err := json.Unmarshal([]byte(trimmed), &args); err != nil {
		return "", newError(ErrSyntax, 0, `input starts with "{" but is not a JSON object: %v`, err)
	}
	raw, ok := json.RawMessage(nil), false
	for _, k := range expressionKeys {
		if raw, ok = args[k]; ok {
			break
		}
	}
	if !ok && len(args) == 1 {
		for _, v := range args {
			raw, ok = v, true
		}
	}
	if !ok {
		return "", newError(ErrSyntax, 0, `JSON input needs an "expression" field, e.g. {"expression": "2+2"}`)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		return n.String(), nil
	}
	return "", newError(ErrSyntax, 0, `the "expression" field must be a string`)
}
