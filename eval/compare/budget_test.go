package compare_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/verify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestACompareBudgetStopsTheSuiteMidway runs ReAct on the demo suite one
// run at a time with a budget of model calls that runs out in the third
// run: that run is cut short (its finalizer answers, failure budget), the
// rest are not started, not stored and counted as not run, and running the
// comparison again without the budget runs exactly those.
func TestACompareBudgetStopsTheSuiteMidway(t *testing.T) {
	t.Parallel()
	tasks := demoTasks(t)[:8]
	opts := func(dir string) compare.Options {
		return compare.Options{Configs: configPaths("react"), LLM: config.LLM{Provider: "sim"}, OutDir: dir,
			Scorer: verify.ExactMatch{}, Concurrency: 1, NoTraces: true}
	}
	// What each run costs without a budget.
	base := t.TempDir()
	_, err := compare.Run(context.Background(), newLoader(sim.Profile{Name: "perfect"}), tasks, opts(base))
	require.NoError(t, err)
	calls := map[string]int{}
	for _, r := range storedRecords(t, base, 1) {
		calls[r.TaskID] = r.ModelCalls
	}
	require.GreaterOrEqual(t, calls[tasks[2].ID], 2, "the third run makes more than one call, so the budget can cut it")

	// The budget allows the first two runs and the third run's first call.
	limit := calls[tasks[0].ID] + calls[tasks[1].ID] + 1
	dir := t.TempDir()
	o := opts(dir)
	o.MaxModelCalls = limit
	rep, err := compare.Run(context.Background(), newLoader(sim.Profile{Name: "perfect"}), tasks, o)
	require.NoError(t, err)

	require.NotNil(t, rep.Budget)
	b := *rep.Budget
	assert.True(t, b.Spent)
	assert.Equal(t, limit, b.MaxModelCalls)
	assert.Equal(t, 1, b.CutShort, "the third run was refused its second call")
	assert.Equal(t, len(tasks)-3, b.NotRun)
	assert.Equal(t, limit+1, b.ModelCalls, "the budget's calls and the cut run's finalizer")
	assert.Equal(t, "the compare budget is spent: "+itoa(limit+1)+" model calls made, its limit is "+itoa(limit)+" (max model calls)", b.Reason,
		"the tally at the end, with the finalizer's call")
	assert.Equal(t, 3, rep.Ran)
	require.Len(t, rep.Configs, 1)
	s := rep.Configs[0]
	assert.Equal(t, 3, s.Runs, "runs not started count in no rate")
	assert.Equal(t, len(tasks)-3, s.NotRun)
	assert.Equal(t, 1, s.Failures[state.FailureBudget]+s.Recovered[state.FailureBudget],
		"the cut run is a budget failure, or recovered when its finalizer still answered correctly")

	records := storedRecords(t, dir, 1)
	require.Len(t, records, 3, "runs not started are not stored")
	byID := map[string]compare.Record{}
	for _, r := range records {
		byID[r.TaskID] = r
	}
	for _, id := range []string{tasks[0].ID, tasks[1].ID} {
		assert.Empty(t, byID[id].Failure, id)
		assert.True(t, byID[id].Complete, id)
	}
	cut := byID[tasks[2].ID]
	assert.Equal(t, state.FailureBudget, cut.Failure)
	assert.False(t, cut.Complete, "the finalizer's answer is marked incomplete")
	assert.Equal(t, 2, cut.ModelCalls, "one step and the finalizer")

	// Every output says what the budget stopped.
	var table bytes.Buffer
	require.NoError(t, rep.WriteTable(&table))
	assert.Contains(t, table.String(), "Stopped by the compare budget: "+itoa(limit+1)+" model calls made, its limit is "+itoa(limit)+
		" (max model calls). 1 run cut short (failure budget, answered from the work so far), 5 not started")
	assert.Regexp(t, `(?m)^config +not run +success`, table.String())
	assert.Regexp(t, `(?m)^react +5 +`, table.String())
	var md bytes.Buffer
	require.NoError(t, rep.WriteMarkdown(&md))
	assert.Contains(t, md.String(), "5 not started")
	js, err := json.Marshal(rep)
	require.NoError(t, err)
	var parsed struct {
		Budget  compare.BudgetSummary `json:"budget"`
		Configs []map[string]any      `json:"configs"`
		Columns []compare.ColumnDoc   `json:"columns"`
	}
	require.NoError(t, json.Unmarshal(js, &parsed))
	assert.Equal(t, b, parsed.Budget)
	assert.EqualValues(t, 5, parsed.Configs[0]["not_run"])
	assert.Equal(t, "not_run", parsed.Columns[1].Field)

	// Running the comparison again (here without a budget) runs the rest
	// and reuses the three stored runs, the cut one included.
	o.MaxModelCalls = 0
	again, err := compare.Run(context.Background(), newLoader(sim.Profile{Name: "perfect"}), tasks, o)
	require.NoError(t, err)
	assert.Equal(t, len(tasks)-3, again.Ran)
	assert.Equal(t, 3, again.Reused)
	assert.Nil(t, again.Budget)
	assert.Equal(t, len(tasks), again.Configs[0].Runs)
	assert.Zero(t, again.Configs[0].NotRun)
	assert.Len(t, storedRecords(t, dir, 1), len(tasks))
}

func TestABudgetWithRoomLeftStopsNothing(t *testing.T) {
	t.Parallel()
	tasks := demoTasks(t)[:3]
	rep, err := compare.Run(context.Background(), newLoader(sim.Profile{Name: "perfect"}), tasks, compare.Options{
		Configs: configPaths("react", "cot"), LLM: config.LLM{Provider: "sim"}, OutDir: filepath.Join(t.TempDir(), "out"),
		Scorer: verify.ExactMatch{}, NoTraces: true, MaxCostUSD: 100, MaxTokens: 1 << 30,
	})
	require.NoError(t, err)
	require.NotNil(t, rep.Budget)
	assert.False(t, rep.Budget.Spent)
	assert.Zero(t, rep.Budget.NotRun)
	assert.Zero(t, rep.Budget.CutShort)
	assert.Positive(t, rep.Budget.Tokens)
	assert.Equal(t, rep.Configs[0].ModelCalls+rep.Configs[1].ModelCalls, rep.Budget.ModelCalls)
	assert.Empty(t, rep.Budget.Line())
	var table bytes.Buffer
	require.NoError(t, rep.WriteTable(&table))
	assert.NotContains(t, table.String(), "not run")
	assert.NotContains(t, table.String(), "Stopped by")
}

func TestCompareRefusesANegativeBudget(t *testing.T) {
	t.Parallel()
	_, err := compare.Run(context.Background(), newLoader(sim.Profile{Name: "perfect"}), demoTasks(t)[:1], compare.Options{
		Configs: configPaths("cot"), LLM: config.LLM{Provider: "sim"}, OutDir: t.TempDir(), MaxCostUSD: -1,
	})
	require.ErrorIs(t, err, compare.ErrOptions)
	assert.Contains(t, err.Error(), "the compare budget's limits must not be negative")
}

func itoa(n int) string { return strconv.Itoa(n) }
