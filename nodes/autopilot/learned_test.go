package autopilot_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/planner-engine/planner/autopilot"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/memstore"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// policyJSON is a hand-made policy over cheap (cost 1) and strong (cost
// 5): on capital questions strong succeeds and cheap fails, on
// multiplications cheap always succeeds and strong half the time. swap
// exchanges the two candidates' outcomes on every task.
func policyJSON(t *testing.T, swap bool) string {
	t.Helper()
	win, lose := autopilot.Outcome{Runs: 1, Successes: 1}, autopilot.Outcome{Runs: 1}
	cheapCapital, strongCapital := lose, win
	if swap {
		cheapCapital, strongCapital = win, lose
	}
	outcomes := func(cheap, strong autopilot.Outcome) map[string]autopilot.Outcome {
		cheap.Cost, strong.Cost = 1, 5
		return map[string]autopilot.Outcome{"cheap": cheap, "strong": strong}
	}
	p := &autopilot.Policy{
		Version: autopilot.Version, CostUnit: "ktokens", Neighbours: 2, PriorWeight: 0,
		Candidates: []autopilot.Candidate{
			{Name: "cheap", Outcome: autopilot.Outcome{Runs: 4, Successes: 2, Cost: 1}},
			{Name: "strong", Outcome: autopilot.Outcome{Runs: 4, Successes: 3, Cost: 5}},
		},
		Tasks: []autopilot.Task{
			{ID: "p1", Text: "What is the capital of France?", Outcomes: outcomes(cheapCapital, strongCapital)},
			{ID: "p2", Text: "Which city is the capital of Italy?", Outcomes: outcomes(cheapCapital, strongCapital)},
			{ID: "p3", Text: "Multiply 6 times 7", Outcomes: outcomes(win, win)},
			{ID: "p4", Text: "Multiply 12 times 12", Outcomes: outcomes(win, lose)},
		},
	}
	var b bytes.Buffer
	require.NoError(t, p.Write(&b))
	return b.String()
}

// A learned policy runs its pick first, then cascades over the others in
// cost order; the plan event shows the pick's estimates and neighbours.
func TestLearnedPolicyPicksFirstThenCascades(t *testing.T) {
	files := map[string]string{"policy.json": policyJSON(t, false)}
	cases := []struct {
		name, settings, question string
		strong                   string // strong's answer
		wantOrder, wantPath      []string
		wantAnswer               string
	}{
		{"capital picks strong", "", "What is the capital of Spain?", "Madrid", []string{"strong", "cheap"}, []string{"strong"}, "Madrid"},
		{"multiplication picks cheap", "", "Multiply 7 times 8", "56", []string{"cheap", "strong"}, []string{"cheap"}, "cheap answer"},
		{"cost weight favours cheap", "cost_weight: 1", "What is the capital of Spain?", "Madrid", []string{"cheap", "strong"}, []string{"cheap"}, "cheap answer"},
		{"failed pick cascades", "check: {verifier: {tool: checker}}", "What is the capital of Spain?", "bad", []string{"strong", "cheap"}, []string{"strong", "cheap"}, "cheap answer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newModel(map[string]reply{"cheap": says("cheap answer"), "strong": says(tc.strong)})
			p, err := build(t, apYAML("policy: learned\npolicy_file: policy.json\n"+tc.settings), m, buildOpts{files: files})
			require.NoError(t, err)
			rec := &trace.Recorder{}
			res, err := p.Run(context.Background(), state.Task{ID: "t", Question: tc.question}, trace.New("r", rec))
			require.NoError(t, err)
			assert.Equal(t, tc.wantAnswer, res.State.Answer)
			plans := decisions(rec, "plan")
			require.Len(t, plans, 1)
			d := plans[0].Data
			assert.Equal(t, "learned", d["policy"])
			assert.Equal(t, tc.wantOrder, d["order"])
			assert.Equal(t, tc.wantOrder[0], d["candidate"])
			assert.Contains(t, plans[0].Text, "learned pick: "+tc.wantOrder[0])
			ests, ok := d["estimates"].([]autopilot.Estimate)
			require.True(t, ok, "%T", d["estimates"])
			require.Len(t, ests, 2)
			assert.Equal(t, tc.wantOrder[0], ests[0].Name, "best first")
			ns, ok := d["neighbours"].([]autopilot.Neighbour)
			require.True(t, ok)
			assert.Len(t, ns, 2)
			path, _ := res.State.Vars.Get("autopilot.path")
			want := `["` + tc.wantPath[0] + `"`
			for _, p := range tc.wantPath[1:] {
				want += `,"` + p + `"`
			}
			assert.JSONEq(t, want+"]", path)

			// Closing the pipeline closes the policy's index: a pick
			// then fails and the run cascades in cost order.
			require.NoError(t, p.Close())
			rec = &trace.Recorder{}
			_, err = p.Run(context.Background(), state.Task{ID: "t", Question: tc.question}, trace.New("r", rec))
			require.NoError(t, err)
			plans = decisions(rec, "plan")
			require.Len(t, plans, 1)
			assert.Contains(t, plans[0].Data["note"], "the pick failed")
		})
	}
}

// With policy cascade, a policy file orders the candidates by its cost,
// whatever their declared order.
func TestCascadeFollowsThePolicysCostOrder(t *testing.T) {
	m := newModel(map[string]reply{"cheap": says("c"), "strong": says("s")})
	settings := "policy_file: policy.json\ncandidates:\n  - " + inline("strong") + "\n  - " + inline("cheap")
	p, err := build(t, apYAML(settings), m, buildOpts{files: map[string]string{"policy.json": policyJSON(t, false)}, noKeywords: true})
	require.NoError(t, err)
	rec := &trace.Recorder{}
	res, err := p.Run(context.Background(), state.Task{ID: "t", Question: "q"}, trace.New("r", rec))
	require.NoError(t, err)
	assert.Equal(t, "c", res.State.Answer)
	plans := decisions(rec, "plan")
	require.Len(t, plans, 1)
	assert.Equal(t, []string{"cheap", "strong"}, plans[0].Data["order"])
	assert.Equal(t, "policy.json", plans[0].Data["policy_file"])
}

// A policy that knows none of the candidates is a setting error.
func TestPolicyKnowingNoCandidateIsAnError(t *testing.T) {
	settings := "policy_file: policy.json\ncandidates:\n  - " + inline("other")
	_, err := build(t, apYAML(settings), newModel(nil), buildOpts{files: map[string]string{"policy.json": policyJSON(t, false)}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "knows none of the candidates: it knows cheap, strong, the node has other")
}

// A run interrupted after its first candidate resumes without calling
// that candidate's model again, and follows the journaled plan even
// though the policy file now picks the other candidate first.
func TestResumeReplaysTheChoicesAndTheFirstCandidate(t *testing.T) {
	dir := t.TempDir()
	yaml := apYAML("policy: learned\npolicy_file: policy.json\ncheck: {verifier: {tool: checker}}")
	task := state.Task{ID: "t", Question: "What is the capital of Spain?"}
	store := memstore.New()

	first := newModel(map[string]reply{"strong": says("bad Madrid"), "cheap": says("Madrid")})
	p, err := build(t, yaml, first, buildOpts{dir: dir, files: map[string]string{"policy.json": policyJSON(t, false)}})
	require.NoError(t, err)
	// The plan, strong's model call, its verifier's tool call and the
	// verdict: the run stops at cheap's first model call.
	th := pipeline.Thread{Store: store, Name: "ap", LiveCalls: 4}
	_, _, err = p.RunThread(context.Background(), task, nil, th)
	require.ErrorIs(t, err, journal.ErrSuspended)
	require.Equal(t, 1, first.count("strong"))
	require.Zero(t, first.count("cheap"))

	// The policy now prefers cheap on capitals, and strong may not be
	// called again.
	resumed := newModel(map[string]reply{"cheap": says("Madrid"), "strong": func(string, llm.CallMeta, int) string {
		t.Error("strong's model call was made again")
		return "bad"
	}})
	p, err = build(t, yaml, resumed, buildOpts{dir: dir, files: map[string]string{"policy.json": policyJSON(t, true)}})
	require.NoError(t, err)
	rec := &trace.Recorder{}
	th.LiveCalls = 0
	res, tr, err := p.RunThread(context.Background(), task, trace.New("r2", rec), th)
	require.NoError(t, err)
	assert.Equal(t, "Madrid", res.State.Answer)
	assert.True(t, res.State.Complete)
	assert.Zero(t, resumed.count("strong"))
	assert.Equal(t, 1, resumed.count("cheap"))
	assert.GreaterOrEqual(t, tr.Replayed, 4, "the plan, strong's calls and the verdict are replayed")

	plans := decisions(rec, "plan")
	require.Len(t, plans, 1)
	assert.Equal(t, true, plans[0].Data["replayed"])
	assert.Equal(t, []string{"strong", "cheap"}, plans[0].Data["order"], "the journaled plan, not the new policy's")
	checks := decisions(rec, "check")
	require.Len(t, checks, 2)
	assert.Equal(t, true, checks[0].Data["replayed"])
	assert.Equal(t, false, checks[0].Data["pass"])
	assert.Equal(t, false, checks[1].Data["replayed"])

	// A fresh thread with the new policy would pick cheap first.
	fresh := newModel(map[string]reply{"cheap": says("Madrid"), "strong": says("x")})
	p, err = build(t, yaml, fresh, buildOpts{dir: dir})
	require.NoError(t, err)
	rec = &trace.Recorder{}
	_, _, err = p.RunThread(context.Background(), task, trace.New("r3", rec), pipeline.Thread{Store: store, Name: "ap2"})
	require.NoError(t, err)
	require.Len(t, decisions(rec, "plan"), 1)
	assert.Equal(t, []string{"cheap", "strong"}, decisions(rec, "plan")[0].Data["order"])
}
