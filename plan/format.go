package plan

import (
	"fmt"
	"strings"
)

// Schema returns the JSON schema of a plan, as used in the prompt and
// as the parameters of the forced "plan" tool call.
func Schema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"steps": map[string]any{
				"type":        "array",
				"description": "The steps, in a valid order.",
				"items": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"id":          map[string]any{"type": "string", "description": "Unique step id, such as \"1\"."},
						"description": map[string]any{"type": "string", "description": "What the step achieves."},
						"tool":        map[string]any{"type": "string", "description": "The tool the step calls."},
						"input":       map[string]any{"type": "string", "description": "The tool input; #E<id> stands for the result of step <id>."},
						"depends_on":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "Ids of the steps whose results this step needs."},
					},
					"required": []string{"id", "description"},
				},
			},
		},
		"required": []string{"steps"},
	}
}

// Format renders steps as numbered lines with their tool, input,
// dependencies, status and result, for prompts and traces.
func Format(steps []Step, withResults bool) string {
	var b strings.Builder
	for _, s := range steps {
		fmt.Fprintf(&b, "%s. %s", s.ID, s.Description)
		if s.Tool != "" {
			fmt.Fprintf(&b, " [%s: %s]", s.Tool, s.Input)
		}
		if len(s.DependsOn) > 0 {
			fmt.Fprintf(&b, " (after %s)", strings.Join(s.DependsOn, ", "))
		}
		if withResults {
			switch s.Status {
			case StatusDone:
				fmt.Fprintf(&b, "\n   result: %s", indent(s.Result))
			case StatusFailed, StatusSkipped:
				fmt.Fprintf(&b, "\n   %s: %s", s.Status, indent(s.Error))
				if s.Result != "" {
					fmt.Fprintf(&b, "\n   partial result: %s", indent(s.Result))
				}
			default:
				b.WriteString("\n   not run yet")
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func indent(s string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n   ")
}
