package autopilot_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/planner-engine/planner/autopilot"
	"github.com/planner-engine/planner/tools/search"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// explainPick is the use docs/autopilot.md shows: load a policy, index its
// tasks, pick among some candidates and explain the pick.
func explainPick(ctx context.Context, w io.Writer, path, question string) error {
	p, err := autopilot.Load(path)
	if err != nil {
		return err
	}
	ix, err := autopilot.NewIndex(ctx, p, search.Keywords{})
	if err != nil {
		return err
	}
	defer ix.Close()
	choice, err := ix.Pick(ctx, question, autopilot.PickOptions{Available: []string{"cot", "react"}})
	if err != nil {
		return err
	}
	fmt.Fprintln(w, choice.Candidate)
	return choice.Explain(w)
}

func TestTheDocumentedUseRuns(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	require.NoError(t, explainPick(t.Context(), &b, "testdata/demo-policy.json", "Who discovered Pluto?"))
	assert.Contains(t, b.String(), "SIMULATED")
	assert.Contains(t, b.String(), "chosen: ")
	assert.NotContains(t, b.String(), "plan_execute", "only cot and react are offered")
}
