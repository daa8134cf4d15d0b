package planner_test

import (
	"context"
	"testing"

	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCustomPlannerPromptGetsTheToolsAndTheSchemaAppended(t *testing.T) {
	cases := []struct {
		name      string
		settings  map[string]any
		want, not []string
	}{
		{"json output: tools and schema", map[string]any{"prompt": "Plan: {{.Question}}"},
			[]string{"Plan: q?\n\n" + nodekind.CompletionMarker + " the custom prompt does not use .Extra.Tools ---\nTools:\n- calculator:", "matching this schema:\n{"}, nil},
		{"tool output: the tool call carries the schema", map[string]any{"prompt": "Plan: {{.Question}}", "output": "tool"},
			[]string{"Tools:\n- calculator:"}, []string{"matching this schema"}},
		{"a prompt that uses both is left alone", map[string]any{"prompt": "Plan: {{.Question}}\n{{.Extra.Tools}}\n{{.Extra.Schema}}"},
			nil, []string{nodekind.CompletionMarker}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n, rec, _ := newPlanner(t, tc.settings, scripted.Reply{Node: "planner", Text: goodPlan})
			_, err := n.Run(context.Background(), hookedState(state.Task{Question: "q?"}))
			require.NoError(t, err)
			require.Len(t, rec.Requests(), 1)
			for _, s := range tc.want {
				assert.Contains(t, rec.Requests()[0].Text(), s)
			}
			for _, s := range tc.not {
				assert.NotContains(t, rec.Requests()[0].Text(), s)
			}
		})
	}
}
