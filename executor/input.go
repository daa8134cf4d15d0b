package executor

import (
	"encoding/json"
	"strings"
)

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
