package pipeline_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/graph"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outcomeYAML routes a node that fails and a node that leaves the answer
// incomplete to fallbacks; first's prompt is the test's.
const outcomeYAML = `name: outcomes
llm: {provider: fake}
nodes:
  - {id: first, type: direct, prompt: "%s"}
  - {id: rescue, type: direct, prompt: "say rescued"}
  - {id: prepare, type: set, assign: {x: '"1"'}}
  - {id: answer, type: direct, prompt: "say answered {{.Vars.x}}"}
edges:
  - {from: START, to: first}
  - {from: first, to: {"": prepare, failed: rescue}}
  - {from: rescue, to: END}
  - {from: prepare, to: {"": END, incomplete: answer}}
  - {from: answer, to: END}
`

func TestEveryNodeRoutesOnItsOutcome(t *testing.T) {
	for _, tc := range []struct {
		name, prompt, answer string
		steps                []string
		incidents            []string
	}{
		{"failed", "fail", "rescued", []string{"first", "rescue"}, []string{state.FailureProvider}},
		{"incomplete", "say ok", "answered 1", []string{"first", "prepare", "answer"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			yaml := fmtYAML(outcomeYAML, tc.prompt)
			if tc.name == "incomplete" {
				// first writes a note, not the answer: after prepare the
				// run has no answer yet.
				yaml = fmtYAML(outcomeYAML, tc.prompt+`", output: "note:first`)
			}
			rec := &trace.Recorder{}
			p, _, err := buildWith(t, yaml, &sayer{})
			require.NoError(t, err)
			res, err := p.Run(context.Background(), state.Task{Question: "q"}, trace.New("run", rec))
			require.NoError(t, err)
			assert.Equal(t, tc.answer, res.State.Answer)
			assert.Equal(t, tc.steps, res.Steps)
			assert.Equal(t, tc.incidents, res.State.Incidents)
		})
	}
}

func TestOutcomeRoutesAreOnlyForNodesThatAreNotJoins(t *testing.T) {
	yaml := `name: bad
llm: {provider: fake}
nodes:
  - {id: a, type: direct}
  - {id: b, type: direct}
  - {id: j, type: join}
  - {id: c, type: direct}
edges:
  - {from: START, to: [a, b]}
  - {from: a, to: j}
  - {from: b, to: j}
  - {from: j, to: {"": END, failed: c}}
  - {from: c, to: END}
`
	_, path, err := buildWith(t, yaml, &sayer{})
	require.ErrorIs(t, err, config.ErrInvalid)
	require.ErrorIs(t, err, graph.ErrUndeclaredRoute)
	assert.ErrorContains(t, err, path+`:12: node "j" (join) never returns route "failed"`)
}

func fmtYAML(format, prompt string) string { return fmt.Sprintf(format, prompt) }
