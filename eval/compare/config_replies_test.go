package compare_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// recordedTask is one task of a suite of recorded runs of two paradigms:
// the model outputs a CoT run (configs/cot.yaml, pipeline "cot") and a
// ReAct run (configs/react.yaml, pipeline "react") got, and the final
// answer each reached.
type recordedTask struct {
	id, question, gold string
	cot, react         []string // the recorded model outputs, in order
	cotAnswer          string   // the final answer in cot's outputs
	reactAnswer        string   // the final answer in react's outputs
	// cotUnderStar files cot's outputs under "*" (every config not named)
	// instead of under "cot".
	cotUnderStar bool
}

// cotRun is a recorded CoT output reaching answer.
func cotRun(reasoning, answer string) []string {
	return []string{reasoning + "\nAnswer: " + answer}
}

// reactRun is a recorded ReAct run: a calculator call on expr, when there
// is one, then the final answer.
func reactRun(expr, answer string) []string {
	var out []string
	if expr != "" {
		out = append(out, "Thought: I should compute it.\nAction: calculator\nAction Input: "+expr)
	}
	return append(out, "Thought: I have what I need.\nFinal Answer: "+answer)
}

// twoParadigms is the suite: cot and react both right on t01-t04, react
// right and cot wrong on t05-t09, cot right and react wrong on t10, both
// wrong on t11-t12.
func twoParadigms() []recordedTask {
	task := func(id, q, gold, cotAns, reactAns, expr string) recordedTask {
		return recordedTask{id: id, question: q, gold: gold,
			cot: cotRun("Working it out step by step from "+q, cotAns), cotAnswer: cotAns,
			react: reactRun(expr, reactAns), reactAnswer: reactAns}
	}
	tasks := []recordedTask{
		task("t01", "How many legs do 3 spiders have?", "24", "24", "24", "3*8"),
		task("t02", "What is 17 times 23?", "391", "391", "391", "17*23"),
		task("t03", "What is 144 divided by 12?", "12", "12", "12", ""),
		task("t04", "How many minutes are in 5 hours?", "300", "300", "300", "5*60"),
		task("t05", "What is 1234 plus 5678?", "6912", "6812", "6912", "1234+5678"),
		task("t06", "How many seconds are in a day?", "86400", "84600", "86400", "24*60*60"),
		task("t07", "What is 99 squared?", "9801", "9701", "9801", "99*99"),
		task("t08", "What is 2 to the power 10?", "1024", "1000", "1024", "2**10"),
		task("t09", "What is 7 times 8 times 9?", "504", "494", "504", "7*8*9"),
		task("t10", "How many days are in a leap year?", "366", "366", "365", ""),
		task("t11", "What is 13 times 17?", "221", "231", "211", "13*7"),
		task("t12", "What is 1000 minus 1?", "999", "998", "1001", ""),
	}
	tasks[0].cotUnderStar = true // cot plays t01's replies for every config
	return tasks
}

// writeSuite writes tasks as a JSONL suite of per-config replies.
func writeSuite(t *testing.T, dir string, tasks []recordedTask) string {
	t.Helper()
	var b strings.Builder
	for _, rt := range tasks {
		replies := map[string][]string{"react": rt.react}
		if rt.cotUnderStar {
			replies["*"] = rt.cot
		} else {
			replies["cot"] = rt.cot
		}
		line, err := json.Marshal(map[string]any{"id": rt.id, "question": rt.question, "answer": rt.gold, "replies": replies})
		require.NoError(t, err)
		b.Write(line)
		b.WriteByte('\n')
	}
	path := filepath.Join(dir, "recorded.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	return path
}

// configReplayLoader is a loader whose "scripted" provider, without a
// script, plays each task's own replies for the config being run, as the
// command line's does.
func configReplayLoader(t *testing.T, tasks []suite.Task) *testLoader {
	t.Helper()
	replies := map[string]scripted.TaskReplies{}
	for _, task := range tasks {
		replies[task.ID] = task.TaskReplies()
	}
	m, err := scripted.NewConfigTaskModel(replies)
	require.NoError(t, err)
	build := func(context.Context, config.LLM, string) (llms.Model, error) { return m, nil }
	return engineLoader(planner.WithProvider("scripted", scripted.TaskLabel, build, llm.AsKind(llm.KindScripted)))
}

// digestsOf returns the digests of the replies each config plays for each
// task: Options.TaskDigests for the "*" replies, ConfigTaskDigests for
// each named config's.
func digestsOf(t *testing.T, tasks []suite.Task) (byTask map[string]string, byConfig map[string]map[string]string) {
	t.Helper()
	digest := func(rs []scripted.Reply) string {
		b, err := json.Marshal(rs)
		require.NoError(t, err)
		sum := sha256.Sum256(b)
		return hex.EncodeToString(sum[:8])
	}
	byTask, byConfig = map[string]string{}, map[string]map[string]string{}
	for _, task := range tasks {
		if len(task.Replies) > 0 {
			byTask[task.ID] = digest(task.Replies)
		}
		for cfg, rs := range task.ConfigReplies {
			if byConfig[cfg] == nil {
				byConfig[cfg] = map[string]string{}
			}
			byConfig[cfg][task.ID] = digest(rs)
		}
	}
	return byTask, byConfig
}

// exactMcNemar is the two-sided exact McNemar p-value of b and c
// discordant pairs, computed here without eval/stats: twice the binomial
// tail P(X <= min(b, c)) for X ~ Binomial(b+c, 1/2), capped at 1.
func exactMcNemar(b, c int) float64 {
	n := int64(b + c)
	if n == 0 {
		return 1
	}
	tail := new(big.Int)
	for k := int64(0); k <= int64(min(b, c)); k++ {
		tail.Add(tail, new(big.Int).Binomial(n, k))
	}
	p := new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(2), tail), new(big.Int).Lsh(big.NewInt(1), uint(n)))
	if p.Cmp(big.NewRat(1, 1)) > 0 {
		return 1
	}
	f, _ := p.Float64()
	return f
}

// pairedCounts counts, from the recorded answers, the tasks config x wins
// (right where the baseline y is wrong), ties and loses.
func pairedCounts(tasks []recordedTask, x, y func(recordedTask) string) (wins, ties, losses int) {
	for _, rt := range tasks {
		xr, yr := x(rt) == rt.gold, y(rt) == rt.gold
		switch {
		case xr && !yr:
			wins++
		case !xr && yr:
			losses++
		default:
			ties++
		}
	}
	return wins, ties, losses
}

func rowOf(t *testing.T, rep *compare.Report, config string) compare.ConfigSummary {
	t.Helper()
	for _, c := range rep.Configs {
		if c.Config == config {
			return c
		}
	}
	require.Failf(t, "no row", "the report has no row for %s", config)
	return compare.ConfigSummary{}
}

// TestRecordedRunsOfTwoParadigmsReplaySideBySide is the acceptance test of
// per-config recorded replies: a suite of recorded CoT and ReAct runs on
// the same 12 tasks, compared with --llm scripted. Each config reproduces
// its own recorded answers, the paired comparison with the baseline is
// the one the recorded outcomes give, and editing one config's replies
// of one task runs that config on that task again, and nothing else.
func TestRecordedRunsOfTwoParadigmsReplaySideBySide(t *testing.T) {
	t.Parallel()
	recorded := twoParadigms()
	dir := t.TempDir()
	tasks, err := suite.Load(t.Context(), writeSuite(t, dir, recorded))
	require.NoError(t, err)
	require.Len(t, tasks, 12)
	byTask, byConfig := digestsOf(t, tasks)
	out := filepath.Join(dir, "out")
	opts := compare.Options{Configs: configPaths("cot", "react"), LLM: config.LLM{Provider: "scripted"}, Concurrency: 8, OutDir: out, Seed: 1,
		TaskDigests: byTask, ConfigTaskDigests: byConfig}

	rep, err := compare.Run(t.Context(), configReplayLoader(t, tasks), suite.AgentTasks(tasks), opts)

	require.NoError(t, err)
	assert.True(t, rep.TaskReplies)
	assert.Equal(t, 24, rep.Ran)

	// (1) Each config's stored answers are its own recorded ones.
	stored := map[string]map[string]string{}
	for _, r := range storedRecords(t, out, 1) {
		if stored[r.Config] == nil {
			stored[r.Config] = map[string]string{}
		}
		stored[r.Config][r.TaskID] = r.Answer
		assert.Empty(t, r.Error, "%s on %s", r.Config, r.TaskID)
	}
	for _, rt := range recorded {
		assert.Equal(t, rt.cotAnswer, stored["cot"][rt.id], "cot's answer to %s", rt.id)
		assert.Equal(t, rt.reactAnswer, stored["react"][rt.id], "react's answer to %s", rt.id)
	}
	assert.Equal(t, 5, rowOf(t, rep, "cot").Correct, "t01-t04 and t10")
	assert.Equal(t, 9, rowOf(t, rep, "react").Correct, "t01-t09")

	// (2) react against the baseline cot, from the recorded outcomes:
	// react right and cot wrong on t05-t09 (b = 5 wins), cot right and
	// react wrong on t10 (c = 1 loss), alike on the other 6 tasks;
	// p = 2 * sum_{k<=1} C(6,k) / 2^6 = 2 * (1+6) / 64 = 14/64 = 0.21875.
	const wins, ties, losses, p = 5, 6, 1, 0.21875
	cotAns := func(rt recordedTask) string { return rt.cotAnswer }
	reactAns := func(rt recordedTask) string { return rt.reactAnswer }
	w, ti, l := pairedCounts(recorded, reactAns, cotAns)
	require.Equal(t, []int{wins, ties, losses}, []int{w, ti, l}, "the table says so")
	require.InDelta(t, p, exactMcNemar(w, l), 1e-12)

	vs := rowOf(t, rep, "react").VsBaseline
	require.NotNil(t, vs)
	assert.Equal(t, "cot", vs.Baseline)
	assert.Equal(t, 12, vs.Tasks)
	assert.Equal(t, []int{wins, ties, losses}, []int{vs.Wins, vs.Ties, vs.Losses})
	assert.InDelta(t, p, vs.McNemarP, 1e-12)

	// The same results with react as the baseline: cot wins t10, loses
	// t05-t09; the test is symmetric, p is the same. All 24 are reused.
	opts.Baseline = "react"
	rep, err = compare.Run(t.Context(), configReplayLoader(t, tasks), suite.AgentTasks(tasks), opts)
	require.NoError(t, err)
	assert.Equal(t, 0, rep.Ran, "the same replies: every result is reused")
	w, ti, l = pairedCounts(recorded, cotAns, reactAns)
	vs = rowOf(t, rep, "cot").VsBaseline
	require.NotNil(t, vs)
	assert.Equal(t, []int{1, 6, 5}, []int{w, ti, l})
	assert.Equal(t, []int{w, ti, l}, []int{vs.Wins, vs.Ties, vs.Losses})
	assert.InDelta(t, exactMcNemar(w, l), vs.McNemarP, 1e-12)

	// Editing react's recorded run of t10 (now right, as cot is) runs
	// react on t10 again, and nothing else: b = 5 (t05-t09), c = 0, 7 ties;
	// p = 2 * C(5,0) / 2^5 = 2/32 = 0.0625.
	recorded[9].react, recorded[9].reactAnswer = reactRun("366", "366"), "366"
	tasks, err = suite.Load(t.Context(), writeSuite(t, dir, recorded))
	require.NoError(t, err)
	edited, editedByConfig := digestsOf(t, tasks)
	assert.Equal(t, byConfig["cot"], editedByConfig["cot"], "cot's replies are as they were")
	opts.Baseline, opts.TaskDigests, opts.ConfigTaskDigests = "", edited, editedByConfig
	rep, err = compare.Run(t.Context(), configReplayLoader(t, tasks), suite.AgentTasks(tasks), opts)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Ran, "react on t10")
	assert.Equal(t, 23, rep.Reused)
	w, ti, l = pairedCounts(recorded, reactAns, cotAns)
	require.Equal(t, []int{5, 7, 0}, []int{w, ti, l})
	require.InDelta(t, 0.0625, exactMcNemar(w, l), 1e-12)
	vs = rowOf(t, rep, "react").VsBaseline
	require.NotNil(t, vs)
	assert.Equal(t, []int{5, 7, 0}, []int{vs.Wins, vs.Ties, vs.Losses})
	assert.InDelta(t, 0.0625, vs.McNemarP, 1e-12)
	answers := map[string][]string{}
	for _, r := range storedRecords(t, out, 1) {
		answers[r.Config+"/"+r.TaskID] = append(answers[r.Config+"/"+r.TaskID], r.Answer)
	}
	assert.ElementsMatch(t, []string{"365", "366"}, answers["react/t10"], "react's new answer is stored beside the old one's, under its digest")
	assert.Equal(t, []string{"366"}, answers["cot/t10"], "cot's is reused")
}
