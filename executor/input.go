package executor

import (
	"encoding/json"
	"strings"

	"github.com/planner-engine/planner/tools"
)

// unwrapInput adapts a JSON argument object to a tool without its own
// schema: such tools are described to the model with one string argument
// "input", so {"input": "x"} becomes x. Other inputs pass unchanged.
func unwrapInput(t tools.Tool, input string) string {
	if _, ok := t.(tools.Schemer); ok {
		return input
	}
	s := strings.TrimSpace(input)
	if !strings.HasPrefix(s, "{") {
		return input
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &obj); err != nil || len(obj) != 1 {
		return input
	}
	var v string
	if err := json.Unmarshal(obj["input"], &v); err != nil {
		return input
	}
	return v
}

// normalizeInput is the form of a tool input the repeat guard compares:
// JSON re-encoded canonically (keys sorted, no spaces; a JSON string
// becomes its text), then case folded
// and runs of white space collapsed, so trivially different spellings of
// one call count as the same call.
func normalizeInput(input string) string {
	s := strings.TrimSpace(input)
	var v any
	if (strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[") || strings.HasPrefix(s, `"`)) && json.Unmarshal([]byte(s), &v) == nil {
		if str, ok := v.(string); ok {
			s = str
		} else if b, err := json.Marshal(v); err == nil {
			s = string(b)
		}
	}
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}
