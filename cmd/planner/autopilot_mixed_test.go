package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mixedFixed are the fixed paradigms of the autopilot's held-out test.
var mixedFixed = []string{"direct", "cot", "cot_sc", "tot", "rewoo", "react", "plan_execute"}

// TestTheLearnedAutopilotMatchesTheBestFixedParadigmOnTheHeldOutHalf is
// the autopilot's end-to-end check on the mixed suite (SIMULATED: the sim
// model, whose capabilities follow each task's gold steps): compare the
// fixed paradigms on the odd tasks, fit a policy on them, and compare the
// fixed paradigms with the learned autopilot on the even tasks, which the
// policy never saw. The autopilot must succeed at least as often as the
// best fixed paradigm for no more tokens, or come within 2 points of it
// for at most half its tokens (the criterion); the report must
// place it on the frontier and compare it with that paradigm task by task.
func TestTheLearnedAutopilotMatchesTheBestFixedParadigmOnTheHeldOutHalf(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var fixed []string
	for _, name := range mixedFixed {
		fixed = append(fixed, "-c", configPath(name+".yaml"))
	}
	fitDir := filepath.Join(dir, "fit")
	res := cli(t, append([]string{"compare", "--suite", "mixed", "--tasks", "odd", "--llm", "sim:perfect", "--quiet", "--out", fitDir}, fixed...)...)
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	policy := filepath.Join(dir, "policy.json")
	res = cli(t, "autopilot", "fit", fitDir, "--suite", "mixed", "--tasks", "odd", "--cost-weight", "0.1", "-o", policy)
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	assert.Contains(t, res.stdout, "35 tasks, 7 candidates")

	// The shipped learned example, pointed at this policy.
	example, err := os.ReadFile(filepath.Join(repoRoot, "examples", "pipelines", "autopilot_learned.yaml"))
	require.NoError(t, err)
	yaml := strings.ReplaceAll(string(example), "${PLANNER_AUTOPILOT_POLICY:-../../out/autopilot/policy.json}", policy)
	yaml = strings.ReplaceAll(yaml, "../../configs/", filepath.Join(repoRoot, "configs")+"/")
	require.NotEqual(t, string(example), yaml, "the example names its policy file as this test expects")
	learned := filepath.Join(dir, "autopilot_learned.yaml")
	require.NoError(t, os.WriteFile(learned, []byte(yaml), 0o600))

	evalDir := filepath.Join(dir, "eval")
	res = cli(t, append(append([]string{"compare", "--suite", "mixed", "--tasks", "even", "--llm", "sim:perfect", "--quiet", "--json", "--baseline", "best", "--out", evalDir}, fixed...),
		"-c", learned)...)
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	var rep struct {
		Tasks   int `json:"tasks"`
		Configs []struct {
			Config      string  `json:"config"`
			SuccessRate float64 `json:"success_rate"`
			Runs        int     `json:"runs"`
			Prompt      int     `json:"prompt_tokens"`
			Completion  int     `json:"completion_tokens"`
			Frontier    *struct {
				Adaptive bool `json:"adaptive"`
				On       bool `json:"on"`
			} `json:"frontier"`
			VsBaseline *struct {
				Baseline string  `json:"baseline"`
				Wins     int     `json:"wins"`
				Ties     int     `json:"ties"`
				Losses   int     `json:"losses"`
				P        float64 `json:"mcnemar_p"`
			} `json:"vs_baseline"`
		} `json:"configs"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &rep), res.stdout)
	require.Equal(t, 35, rep.Tasks)
	require.Len(t, rep.Configs, len(mixedFixed)+1)
	tokens := func(i int) float64 {
		c := rep.Configs[i]
		return float64(c.Prompt+c.Completion) / float64(c.Runs)
	}
	best := 0
	for i := range mixedFixed {
		s, b := rep.Configs[i].SuccessRate, rep.Configs[best].SuccessRate
		if s > b || (s == b && tokens(i) < tokens(best)) {
			best = i
		}
	}
	ap := len(mixedFixed)
	auto := rep.Configs[ap]
	require.Equal(t, "autopilot_learned", auto.Config)
	summary := fmt.Sprintf("autopilot %.3f at %.0f tokens/task; best fixed %s %.3f at %.0f", auto.SuccessRate, tokens(ap),
		rep.Configs[best].Config, rep.Configs[best].SuccessRate, tokens(best))
	t.Log(summary)
	asGood := auto.SuccessRate >= rep.Configs[best].SuccessRate && tokens(ap) <= tokens(best)
	close := auto.SuccessRate >= rep.Configs[best].SuccessRate-0.02 && tokens(ap) <= tokens(best)/2
	assert.True(t, asGood || close, summary)
	// --baseline best: the paired test is against that paradigm.
	require.NotNil(t, auto.VsBaseline)
	assert.Equal(t, rep.Configs[best].Config, auto.VsBaseline.Baseline)
	assert.Equal(t, 35, auto.VsBaseline.Wins+auto.VsBaseline.Ties+auto.VsBaseline.Losses)
	t.Logf("against %s: %d/%d/%d, McNemar p %.3g", auto.VsBaseline.Baseline, auto.VsBaseline.Wins, auto.VsBaseline.Ties, auto.VsBaseline.Losses, auto.VsBaseline.P)
	require.NotNil(t, auto.Frontier)
	assert.True(t, auto.Frontier.Adaptive)
	assert.True(t, auto.Frontier.On, "no fixed paradigm beats it: %s", summary)

	report, err := os.ReadFile(filepath.Join(evalDir, "report.md"))
	require.NoError(t, err)
	assert.Contains(t, string(report), "Adaptive autopilot_learned: success")

	// It chose per task: its trace holds one pick per task, and the picks
	// are of several paradigms.
	traces, err := filepath.Glob(filepath.Join(evalDir, "traces", "*", "autopilot_learned.jsonl"))
	require.NoError(t, err)
	require.Len(t, traces, 1)
	data, err := os.ReadFile(traces[0])
	require.NoError(t, err)
	picks := map[string]int{}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var ev struct {
			Data map[string]any `json:"data"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &ev))
		if ev.Data["autopilot"] == "plan" {
			picks[fmt.Sprint(ev.Data["candidate"])]++
			n++
		}
	}
	assert.Equal(t, 35, n, "one pick per task")
	assert.GreaterOrEqual(t, len(picks), 3, "picks: %v", picks)
	t.Logf("picks: %v", picks)
}
