package fit_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planner-engine/planner/autopilot"
	"github.com/planner-engine/planner/autopilot/fit"
	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/eval/viewer"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/verify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// suiteTasks are the tasks the stores below ran; t4's text is only on the
// folder's tasks.html page.
var suiteTasks = []state.Task{
	{ID: "t1", Question: "In what year was Pluto discovered?", Answer: "1930"},
	{ID: "t2", Question: "Who named Pluto?", Answer: "Venetia Burney"},
	{ID: "t3", Question: "How wide is Jupiter?", Answer: "142984"},
}

// rec is a scored run of config on task.
func rec(config, task string, correct bool, prompt, completion int, usd float64) compare.Record {
	answer := "wrong"
	for _, t := range suiteTasks {
		if t.ID == task && correct {
			answer = t.Answer
		}
	}
	return compare.Record{Config: config, TaskID: task, Seed: 1, Fingerprint: "fp-" + config, Model: "sim:noisy",
		Answer: answer, Scored: true, Correct: correct, PromptTokens: prompt, CompletionTokens: completion, CostUSD: usd}
}

// writeStore writes recs to a new comparison folder, with a tasks.html
// page showing t4, and returns it.
func writeStore(t *testing.T, recs []compare.Record) string {
	t.Helper()
	dir := t.TempDir()
	st, err := compare.OpenStore(t.Context(), dir)
	require.NoError(t, err)
	defer st.Close()
	require.NoError(t, st.PutAll(t.Context(), recs))
	_, err = viewer.WriteFile(dir, viewer.Data{Tasks: []viewer.Task{
		{ID: "t1", Question: "a text that Options.Tasks overrides"},
		{ID: "t4", Question: "How many moons has Mars?"},
	}})
	require.NoError(t, err)
	return dir
}

// twoConfigs is 2 configs × 4 tasks:
//
//	       cheap (0.15 ktokens)  dear (1.5 ktokens)
//	t1     right                 right
//	t2     wrong                 right
//	t3     right                 right
//	t4     wrong                 wrong
//
// plus runs fit must not count: one unscored, one of another seed.
func twoConfigs() []compare.Record {
	recs := []compare.Record{
		rec("cheap", "t1", true, 100, 50, 0), rec("cheap", "t2", false, 100, 50, 0),
		rec("cheap", "t3", true, 100, 50, 0), rec("cheap", "t4", false, 100, 50, 0),
		rec("dear", "t1", true, 1000, 500, 0), rec("dear", "t2", true, 1000, 500, 0),
		rec("dear", "t3", true, 1000, 500, 0), rec("dear", "t4", false, 1000, 500, 0),
	}
	unscored := rec("dear", "t5", false, 10, 10, 0)
	unscored.Scored = false
	otherSeed := rec("cheap", "t1", false, 100, 50, 0)
	otherSeed.Seed = 2
	return append(recs, unscored, otherSeed)
}

func TestFitCountsEachConfigOnEachTask(t *testing.T) {
	t.Parallel()
	dir := writeStore(t, twoConfigs())
	var warnings []string
	p, err := fit.Fit(t.Context(), []string{dir}, fit.Options{Tasks: suiteTasks, CostWeight: 0.1, Neighbours: 3,
		Warn: func(m string) { warnings = append(warnings, m) }})
	require.NoError(t, err)

	assert.Equal(t, autopilot.Version, p.Version)
	assert.Equal(t, []string{dir}, p.Sources)
	assert.Equal(t, "sim:noisy", p.Model)
	assert.True(t, p.Simulated)
	assert.Equal(t, autopilot.UnitKTokens, p.CostUnit, "no run has a price")
	assert.InDelta(t, 0.1, p.CostWeight, 0)
	assert.Equal(t, 3, p.Neighbours)
	assert.InDelta(t, autopilot.DefaultPriorWeight, p.PriorWeight, 0)

	// cheap: 2 of 4 right, (100+50)/1000 = 0.15 ktokens a run; dear: 3 of 4, 1.5.
	require.Len(t, p.Candidates, 2)
	assert.Equal(t, "cheap", p.Candidates[0].Name, "cheapest first")
	assert.Equal(t, 4, p.Candidates[0].Runs)
	assert.Equal(t, 2, p.Candidates[0].Successes)
	assert.InDelta(t, 0.15, p.Candidates[0].Cost, 1e-12)
	assert.Equal(t, "dear", p.Candidates[1].Name)
	assert.Equal(t, 3, p.Candidates[1].Successes)
	assert.InDelta(t, 1.5, p.Candidates[1].Cost, 1e-12)

	require.Len(t, p.Tasks, 4, "t5 had only an unscored run")
	ids := []string{p.Tasks[0].ID, p.Tasks[1].ID, p.Tasks[2].ID, p.Tasks[3].ID}
	assert.Equal(t, []string{"t1", "t2", "t3", "t4"}, ids)
	assert.Equal(t, "In what year was Pluto discovered?", p.Tasks[0].Text, "Options.Tasks first")
	assert.Equal(t, "How many moons has Mars?", p.Tasks[3].Text, "then the folder's tasks.html")
	assert.Equal(t, autopilot.Outcome{Runs: 1, Successes: 1, Cost: 0.15}, roundCost(p.Tasks[0].Outcomes["cheap"]), "seed 2's run is not read")
	assert.Equal(t, autopilot.Outcome{Runs: 1, Successes: 0, Cost: 0.15}, roundCost(p.Tasks[1].Outcomes["cheap"]))
	assert.Equal(t, autopilot.Outcome{Runs: 1, Successes: 1, Cost: 1.5}, roundCost(p.Tasks[1].Outcomes["dear"]))
	assert.Equal(t, []string{"left out 1 runs whose answer could not be scored"}, warnings)
	require.NoError(t, p.Validate())
}

// roundCost rounds o's cost to 1e-9, so sums of thousandths compare.
func roundCost(o autopilot.Outcome) autopilot.Outcome {
	o.Cost = float64(int64(o.Cost*1e9+0.5)) / 1e9
	return o
}

func TestFitCountsDollarsWhenEveryRunHasAPrice(t *testing.T) {
	t.Parallel()
	recs := []compare.Record{
		rec("a", "t1", true, 100, 10, 0.002), rec("a", "t1", false, 100, 10, 0.004),
		rec("b", "t1", true, 100, 10, 0.001),
		rec("b", "t2", false, 0, 0, 0), // failed before any call: no tokens, no price needed
	}
	recs[1].Seed = 2
	for i := range recs {
		recs[i].Model = "openai:gpt-4o-mini"
	}
	dir := writeStore(t, recs)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "report.json"), []byte(`{"seed":1,"repeats":2}`), 0o600))
	p, err := fit.Fit(t.Context(), []string{dir}, fit.Options{Tasks: suiteTasks})
	require.NoError(t, err)
	assert.Equal(t, autopilot.UnitUSD, p.CostUnit)
	assert.False(t, p.Simulated)
	assert.Equal(t, "openai:gpt-4o-mini", p.Model)
	// b: (0.001 + 0)/2 = 0.0005 a run; a: (0.002 + 0.004)/2 = 0.003, both seeds of repeats 2.
	require.Len(t, p.Candidates, 2)
	assert.Equal(t, "b", p.Candidates[0].Name)
	assert.InDelta(t, 0.0005, p.Candidates[0].Cost, 1e-12)
	assert.Equal(t, autopilot.Outcome{Runs: 2, Successes: 1, Cost: 0.003}, roundCost(p.Candidates[1].Outcome))

	// One priced run missing: thousands of tokens.
	recs[2].CostUSD = 0
	dir = writeStore(t, recs)
	p, err = fit.Fit(t.Context(), []string{dir}, fit.Options{Tasks: suiteTasks})
	require.NoError(t, err)
	assert.Equal(t, autopilot.UnitKTokens, p.CostUnit)
	// Without report.json, seed 1 only: a's one run, 110 tokens; b's two, (110 + 0)/2 = 55 a run.
	assert.Equal(t, []string{"b", "a"}, p.CandidateNames())
	assert.InDelta(t, 0.055, p.Candidates[0].Cost, 1e-12)
	assert.Equal(t, autopilot.Outcome{Runs: 1, Successes: 1, Cost: 0.11}, roundCost(p.Candidates[1].Outcome))
}

func TestFitMergesFoldersAndRestricts(t *testing.T) {
	t.Parallel()
	a := writeStore(t, twoConfigs())
	other := []compare.Record{rec("cheap", "t1", false, 100, 50, 0), rec("tot", "t1", true, 9000, 1000, 0)}
	for i := range other {
		other[i].Model = "sim:perfect"
	}
	b := writeStore(t, other)

	p, err := fit.Fit(t.Context(), []string{a, b}, fit.Options{Tasks: suiteTasks})
	require.NoError(t, err)
	assert.Equal(t, "sim:noisy, sim:perfect", p.Model)
	assert.Equal(t, []string{"cheap", "dear", "tot"}, p.CandidateNames())
	assert.Equal(t, autopilot.Outcome{Runs: 2, Successes: 1, Cost: 0.15}, roundCost(p.Tasks[0].Outcomes["cheap"]), "t1: one run in each folder")

	p, err = fit.Fit(t.Context(), []string{a, b}, fit.Options{Tasks: suiteTasks, Configs: []string{"dear", "tot"}, Models: []string{"sim:noisy"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"dear"}, p.CandidateNames())

	// The odd half of the suite's order (t1, t2, t3, then t4 from the page): t1 and t3.
	p, err = fit.Fit(t.Context(), []string{a}, fit.Options{Tasks: suiteTasks, Select: fit.Selection{Half: fit.Odd}})
	require.NoError(t, err)
	require.Len(t, p.Tasks, 2)
	assert.Equal(t, "t1", p.Tasks[0].ID)
	assert.Equal(t, "t3", p.Tasks[1].ID)
	assert.Equal(t, 2, p.Candidates[0].Successes, "cheap was right on both")

	p, err = fit.Fit(t.Context(), []string{a}, fit.Options{Tasks: suiteTasks, Select: fit.Selection{Half: fit.Odd}.Other()})
	require.NoError(t, err)
	assert.Equal(t, []string{"t2", "t4"}, []string{p.Tasks[0].ID, p.Tasks[1].ID})
}

func TestFitJudgesAgainWithAScorer(t *testing.T) {
	t.Parallel()
	recs := twoConfigs()[:8]
	recs[1].Correct = true // stored as right; its answer "wrong" is not Venetia Burney
	dir := writeStore(t, recs)
	p, err := fit.Fit(t.Context(), []string{dir}, fit.Options{Tasks: suiteTasks})
	require.NoError(t, err)
	assert.Equal(t, 3, p.Candidates[0].Successes, "the stored verdict")

	p, err = fit.Fit(t.Context(), []string{dir}, fit.Options{Tasks: suiteTasks, Scorer: verify.ExactMatch{}})
	require.NoError(t, err)
	assert.Equal(t, 2, p.Candidates[0].Successes, "judged again: t2 is wrong (t4, not in Tasks, keeps its stored verdict)")
}

func TestFitSaysWhatIsWrong(t *testing.T) {
	t.Parallel()
	good := writeStore(t, twoConfigs())
	notAFolder := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(notAFolder, nil, 0o600))
	empty := writeStore(t, nil)
	noText := writeStore(t, []compare.Record{rec("a", "t9", true, 1, 1, 0), rec("a", "t8", true, 1, 1, 0)})
	badReport := writeStore(t, twoConfigs())
	require.NoError(t, os.WriteFile(filepath.Join(badReport, "report.json"), []byte("{"), 0o600))

	tests := []struct {
		name string
		dirs []string
		o    fit.Options
		is   error
		want string
	}{
		{"no folder", nil, fit.Options{}, fit.ErrFolder, "no folder given"},
		{"missing folder", []string{filepath.Join(good, "nope")}, fit.Options{}, fit.ErrFolder, "nope does not exist"},
		{"a file", []string{notAFolder}, fit.Options{}, fit.ErrFolder, "is a file, not a folder"},
		{"no store", []string{t.TempDir()}, fit.Options{}, fit.ErrFolder, "holds no results.db (run planner compare --out"},
		{"bad report.json", []string{badReport}, fit.Options{}, fit.ErrFolder, "report.json"},
		{"no runs", []string{empty}, fit.Options{}, autopilot.ErrNoData, "hold no runs (run planner compare with --out FOLDER first)"},
		{"no runs of these configs", []string{good}, fit.Options{Configs: []string{"lats"}}, autopilot.ErrNoData, "hold no runs of configs lats"},
		{"no runs of this seed", []string{good}, fit.Options{Seeds: []uint64{9}}, autopilot.ErrNoData, "seeds [9]"},
		{"unknown task", []string{good}, fit.Options{Select: fit.Selection{IDs: []string{"t7"}}}, fit.ErrSelection, `no task "t7"`},
		{"bad half", []string{good}, fit.Options{Select: fit.Selection{Half: "first"}}, fit.ErrSelection, `half "first"`},
		{"no text", []string{noText}, fit.Options{}, nil, "tasks t8, t9 have no text (pass the suite the comparison ran with --suite"},
		{"negative cost weight", []string{good}, fit.Options{CostWeight: -1}, nil, "cost weight -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := fit.Fit(t.Context(), tt.dirs, tt.o)
			require.Error(t, err)
			if tt.is != nil {
				require.ErrorIs(t, err, tt.is)
			}
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestFitWithOnlyUnscoredRuns(t *testing.T) {
	t.Parallel()
	r := rec("a", "t1", false, 1, 1, 0)
	r.Scored = false
	_, err := fit.Fit(context.Background(), []string{writeStore(t, []compare.Record{r})}, fit.Options{Tasks: suiteTasks})
	require.ErrorIs(t, err, autopilot.ErrNoData)
	assert.Contains(t, err.Error(), "none of the 1 runs")
}

func TestParseSelection(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]fit.Selection{
		"": {}, "all": {}, "odd": {Half: fit.Odd}, " even ": {Half: fit.Even},
		"t1, t3,": {IDs: []string{"t1", "t3"}},
	} {
		got, err := fit.ParseSelection(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	_, err := fit.ParseSelection(" , ")
	require.ErrorIs(t, err, fit.ErrSelection)
	assert.Contains(t, err.Error(), "want odd, even, all or task ids")
}

func TestSelectionFilterAndOther(t *testing.T) {
	t.Parallel()
	tasks := []state.Task{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "d"}, {ID: "e"}}
	idsOf := func(s fit.Selection) string {
		got, err := s.Filter(tasks)
		require.NoError(t, err, s.String())
		var ids []string
		for _, t := range got {
			ids = append(ids, t.ID)
		}
		return strings.Join(ids, "")
	}
	assert.Equal(t, "ace", idsOf(fit.Selection{Half: fit.Odd}))
	assert.Equal(t, "bd", idsOf(fit.Selection{Half: fit.Odd}.Other()))
	assert.Equal(t, "bd", idsOf(fit.Selection{Half: fit.Even}))
	assert.Equal(t, "bd", idsOf(fit.Selection{IDs: []string{"d", "b"}}))
	assert.Equal(t, "ace", idsOf(fit.Selection{IDs: []string{"d", "b"}}.Other()))
	assert.Equal(t, "ce", idsOf(fit.Selection{Half: fit.Odd, Exclude: []string{"a"}}))
	assert.Equal(t, "abcde", idsOf(fit.Selection{}))
	assert.Equal(t, "odd", fit.Selection{Half: fit.Odd}.String())

	_, err := fit.Selection{Exclude: []string{"a", "b", "c", "d", "e"}}.Filter(tasks)
	require.ErrorIs(t, err, fit.ErrSelection)
	assert.Contains(t, err.Error(), "selects none of the comparison's 5 tasks")
}

func TestFitWarnsOfAConfigEditedBetweenRuns(t *testing.T) {
	t.Parallel()
	edited := rec("cheap", "t1", false, 100, 50, 0)
	edited.Fingerprint = "fp-cheap-v2"
	dir := writeStore(t, append(twoConfigs()[:8], edited))
	var warnings []string
	p, err := fit.Fit(t.Context(), []string{dir}, fit.Options{Tasks: suiteTasks, Warn: func(m string) { warnings = append(warnings, m) }})
	require.NoError(t, err)
	assert.Equal(t, []string{"config cheap ran as more than one version of its file in one folder; the runs of every version count"}, warnings)
	assert.Equal(t, autopilot.Outcome{Runs: 2, Successes: 1, Cost: 0.15}, roundCost(p.Tasks[0].Outcomes["cheap"]))
}
