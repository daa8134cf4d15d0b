package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/planner-engine/planner/autopilot"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAutopilotFitsAComparisonAndExplainsAPick(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmp := filepath.Join(dir, "cmp")
	res := cli(t, "compare", "--suite", "demo", "--llm", "sim:perfect", "-c", configPath("cot.yaml"), "-c", configPath("react.yaml"), "--out", cmp)
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)

	// Fit on the odd half of the demo suite: demo-01, demo-03, ...
	policy := filepath.Join(dir, "policy.json")
	res = cli(t, "autopilot", "fit", cmp, "--suite", "demo", "--tasks", "odd", "-o", policy)
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	assert.Contains(t, res.stdout, "SIMULATED: fitted on runs of the offline simulator (sim:perfect)")
	assert.Contains(t, res.stdout, "policy written to "+policy+": 20 tasks, 2 candidates, model sim:perfect, cost in ktokens per run")
	p, err := autopilot.Load(policy)
	require.NoError(t, err)
	assert.True(t, p.Simulated)
	assert.Equal(t, []string{cmp}, p.Sources)
	assert.Equal(t, []string{"cot", "react"}, p.CandidateNames(), "cot is the cheaper")
	require.Len(t, p.Tasks, 20)
	assert.Equal(t, "demo-01", p.Tasks[0].ID)
	assert.Equal(t, "demo-03", p.Tasks[1].ID)
	assert.Equal(t, "In what year did Clyde Tombaugh discover Pluto?", p.Tasks[0].Text)
	for _, c := range p.Candidates {
		assert.Equal(t, 20, c.Runs, c.Name)
		assert.Positive(t, c.Cost, c.Name)
	}

	// A task of the other half. At cost weight 100 the cheaper wins
	// whatever the success rates, react's runs costing tens of times cot's.
	require.Greater(t, p.Candidates[1].Cost, 10*p.Candidates[0].Cost)
	res = cli(t, "autopilot", "explain", "--policy", policy, "--suite", "demo", "--task", "demo-08", "--cost-weight", "100")
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	assert.Contains(t, res.stdout, "task: Who suggested the name Pluto?\nSIMULATED: this policy was fitted on runs of the offline simulator (sim:perfect)")
	assert.Contains(t, res.stdout, "chosen: cot\n")
	assert.Regexp(t, `(?m)^1\s+demo-\d\d\s+\d+\.\d{3}\s+[01]/1, `, res.stdout, "the neighbours with their scores and outcomes")

	res = cli(t, "autopilot", "explain", "--policy", policy, "--candidates", "react,lats", "--json", "When was Pluto discovered?")
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	var choice autopilot.Choice
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &choice))
	assert.Equal(t, "react", choice.Candidate)
	assert.True(t, choice.Simulated)
	assert.NotEmpty(t, choice.Neighbours)
	assert.Contains(t, res.stderr, "SIMULATED")

	// Without -o the policy goes to standard output.
	res = cli(t, "autopilot", "fit", cmp, "--configs", "react")
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	var all autopilot.Policy
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &all))
	assert.Len(t, all.Tasks, 40, "the texts from the folder's tasks.html")
	assert.Equal(t, []string{"react"}, []string{all.Candidates[0].Name})
	assert.Contains(t, res.stderr, "policy: 40 tasks, 1 candidates")

	// Every task: the successes the comparison's report counts.
	res = cli(t, "autopilot", "fit", cmp)
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &all))
	b, err := os.ReadFile(filepath.Join(cmp, "report.json"))
	require.NoError(t, err)
	var report struct {
		Configs []struct {
			Config  string `json:"config"`
			Correct int    `json:"correct"`
			Scored  int    `json:"scored"`
		} `json:"configs"`
	}
	require.NoError(t, json.Unmarshal(b, &report))
	require.Len(t, report.Configs, 2)
	for _, rc := range report.Configs {
		for _, c := range all.Candidates {
			if c.Name == rc.Config {
				assert.Equal(t, rc.Correct, c.Successes, c.Name)
				assert.Equal(t, rc.Scored, c.Runs, c.Name)
			}
		}
	}
}

func TestAutopilotSaysWhatIsWrong(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	policy := filepath.Join(repoRoot, autopilotPolicy)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"fit without a folder", []string{"fit"}, exitUsage, "expected one or more comparison folders"},
		{"fit on a folder without results", []string{"fit", empty}, exitFail, "holds no results.db (run planner compare --out " + empty + " first"},
		{"fit with a bad --tasks", []string{"fit", empty, "--tasks", ","}, exitUsage, "--tasks: fit: bad task selection"},
		{"fit with a negative weight", []string{"fit", empty, "--cost-weight", "-1"}, exitUsage, "--cost-weight must be 0 or more"},
		{"fit with --scorer alone", []string{"fit", empty, "--scorer", "em"}, exitUsage, "--scorer needs --suite"},
		{"explain without --policy", []string{"explain", "a question"}, exitUsage, "--policy is required"},
		{"explain without a task", []string{"explain", "--policy", policy}, exitUsage, "give the task's text, or --suite SUITE --task ID"},
		{"explain a text and a task", []string{"explain", "--policy", policy, "--task", "demo-01", "text"}, exitUsage, "not both"},
		{"explain a missing policy", []string{"explain", "--policy", filepath.Join(empty, "p.json"), "text"}, exitFail, "p.json"},
		{"explain with unknown candidates", []string{"explain", "--policy", policy, "--candidates", "lats", "text"}, exitFail, "no candidate of the policy is available"},
		{"explain an unknown task", []string{"explain", "--policy", policy, "--task", "demo-99"}, exitFail, `no such task "demo-99"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := cli(t, append([]string{"autopilot"}, tt.args...)...)
			assert.Equal(t, tt.code, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
			assert.Contains(t, res.stderr, tt.want)
		})
	}
}

func TestTheShippedDemoPolicyLoads(t *testing.T) {
	t.Parallel()
	p, err := autopilot.Load(filepath.Join(repoRoot, autopilotPolicy))
	require.NoError(t, err, "refit it: see docs/autopilot.md")
	assert.True(t, p.Simulated)
	assert.Len(t, p.Tasks, 40)
}
