package compare_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/llm/middleware"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/verify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// callGate counts the model calls it lets through. Once limit calls have
// been let through (limit > 0), the next call cancels the comparison, as a
// Ctrl-C would, and fails with the context's error.
type callGate struct {
	mu     sync.Mutex
	calls  int
	limit  int
	cancel context.CancelFunc
}

func (g *callGate) wrap(m llms.Model) llms.Model {
	return middleware.Wrap(m, func(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
		g.mu.Lock()
		if g.limit > 0 && g.calls >= g.limit {
			g.mu.Unlock()
			g.cancel()
			<-ctx.Done()
			return nil, ctx.Err()
		}
		g.calls++
		g.mu.Unlock()
		return m.GenerateContent(ctx, msgs, opts...)
	})
}

func (g *callGate) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.calls
}

// oneCallConfigs make exactly one model call per run with a perfect sim,
// so model calls count runs.
var oneCallConfigs = []string{"direct", "cot", "plan_solve"}

func TestKilledCompareResumesWithoutRerunningFinishedTasks(t *testing.T) {
	tests := []struct {
		name        string
		concurrency int
		limit       int
	}{
		{"sequential, killed after 50 runs", 1, 50},
		{"sequential, killed at the first run", 1, 1},
		{"concurrent, killed after about 50 runs", 8, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tasks := demoTasks(t)
			configs := configPaths(oneCallConfigs...)
			total := len(tasks) * len(configs)
			out := t.TempDir()
			opts := compare.Options{Configs: configs, LLM: config.LLM{Provider: "sim"}, Concurrency: tt.concurrency, OutDir: out, Scorer: verify.ExactMatch{}}

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			first := &callGate{limit: tt.limit, cancel: cancel}
			_, err := compare.Run(ctx, newLoader(sim.Profile{Name: "perfect"}, withOracle(), withWrapper(first.wrap)), tasks, opts)
			require.ErrorIs(t, err, context.Canceled)
			require.ErrorIs(t, err, compare.ErrInterrupted)
			assert.Contains(t, err.Error(), "rerun resumes")
			assert.Contains(t, err.Error(), "saved in "+out)

			stored := storedRecords(t, out, 1)
			require.NotEmpty(t, stored)
			assert.LessOrEqual(t, len(stored), first.count(), "only runs whose call returned are stored")
			if tt.concurrency == 1 {
				assert.Len(t, stored, tt.limit, "every run before the kill is stored")
			}
			for _, r := range stored {
				assert.True(t, r.Complete && r.Correct, "%s/%s: an interrupted run must not be stored", r.Config, r.TaskID)
			}

			second := &callGate{}
			rep, err := compare.Run(context.Background(), newLoader(sim.Profile{Name: "perfect"}, withOracle(), withWrapper(second.wrap)), tasks, opts)
			require.NoError(t, err)
			assert.Equal(t, len(stored), rep.Reused)
			assert.Equal(t, total-len(stored), rep.Ran)
			assert.Equal(t, total-len(stored), second.count(), "finished tasks are not run again")
			if tt.concurrency == 1 {
				assert.Equal(t, total, first.count()+second.count())
			}
			require.Len(t, rep.Configs, len(configs))
			for _, s := range rep.Configs {
				assert.Equal(t, len(tasks), s.Runs, s.Config)
				assert.InDelta(t, 1, s.SuccessRate, 1e-9, s.Config)
			}
			assertTracesPointAtTheirRuns(t, out, storedRecords(t, out, 1))

			third := &callGate{}
			rep, err = compare.Run(context.Background(), newLoader(sim.Profile{Name: "perfect"}, withOracle(), withWrapper(third.wrap)), tasks, opts)
			require.NoError(t, err)
			assert.Equal(t, total, rep.Reused)
			assert.Zero(t, rep.Ran)
			assert.Zero(t, third.count())
		})
	}
}

// assertTracesPointAtTheirRuns checks that each record's trace location
// names lines holding exactly that run's events, from run_start to run_end.
func assertTracesPointAtTheirRuns(t *testing.T, out string, recs []compare.Record) {
	t.Helper()
	files := map[string][]string{}
	for _, r := range recs {
		require.NotEmpty(t, r.Trace, "%s/%s has no trace", r.Config, r.TaskID)
		path, span, ok := strings.Cut(r.Trace, ":")
		require.True(t, ok, r.Trace)
		a, b, ok := strings.Cut(span, "-")
		require.True(t, ok, r.Trace)
		firstLine, err := strconv.Atoi(a)
		require.NoError(t, err)
		lastLine, err := strconv.Atoi(b)
		require.NoError(t, err)
		lines, ok := files[path]
		if !ok {
			f, err := os.Open(filepath.Join(out, filepath.FromSlash(path)))
			require.NoError(t, err)
			sc := bufio.NewScanner(f)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				lines = append(lines, sc.Text())
			}
			require.NoError(t, sc.Err())
			f.Close()
			files[path] = lines
		}
		require.LessOrEqual(t, lastLine, len(lines), r.Trace)
		require.Less(t, 0, firstLine)
		require.LessOrEqual(t, firstLine, lastLine)
		want := compare.RunID(r.Config, r.Model, r.TaskID, r.Seed, r.Fingerprint)
		for i := firstLine; i <= lastLine; i++ {
			var ev struct {
				RunID string `json:"run_id"`
				Kind  string `json:"kind"`
			}
			require.NoError(t, json.Unmarshal([]byte(lines[i-1]), &ev), "%s line %d", path, i)
			assert.Equal(t, want, ev.RunID, "%s line %d", path, i)
			switch i {
			case firstLine:
				assert.Equal(t, "run_start", ev.Kind)
			case lastLine:
				assert.Equal(t, "run_end", ev.Kind)
			}
		}
	}
}

// rejectAll judges every answer wrong.
type rejectAll struct{}

func (rejectAll) Score(string, verify.Reference) verify.Result { return verify.Result{} }

func TestStoredResultsAreReusedOnlyForTheSameRunSettings(t *testing.T) {
	tasks := demoTasks(t)[:10]
	base := compare.Options{Configs: configPaths("direct"), LLM: config.LLM{Provider: "sim"}, Scorer: verify.ExactMatch{}, NoTraces: true}
	tests := []struct {
		name    string
		change  func(t *testing.T, o *compare.Options)
		ran     int
		success float64
	}{
		{"same settings reuse everything", func(*testing.T, *compare.Options) {}, 0, 1},
		{"another seed runs again", func(_ *testing.T, o *compare.Options) { o.Seed = 2 }, 10, 1},
		{"another model runs again", func(_ *testing.T, o *compare.Options) { o.LLM.Profile = "other" }, 10, 1},
		{"an edited config runs again", func(t *testing.T, o *compare.Options) {
			b, err := os.ReadFile(o.Configs[0])
			require.NoError(t, err)
			edited := filepath.Join(t.TempDir(), "direct.yaml")
			require.NoError(t, os.WriteFile(edited, append(b, []byte("# edited\n")...), 0o644))
			o.Configs = []string{edited}
		}, 10, 1},
		{"another scorer re-scores stored answers without running", func(_ *testing.T, o *compare.Options) { o.Scorer = rejectAll{} }, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := base
			opts.OutDir = t.TempDir()
			gate := &callGate{}
			loader := newLoader(sim.Profile{Name: "perfect"}, withOracle(), withWrapper(gate.wrap))
			_, err := compare.Run(context.Background(), loader, tasks, opts)
			require.NoError(t, err)
			require.Equal(t, len(tasks), gate.count())

			tt.change(t, &opts)
			rep, err := compare.Run(context.Background(), loader, tasks, opts)
			require.NoError(t, err)
			assert.Equal(t, tt.ran, rep.Ran)
			assert.Equal(t, len(tasks)+tt.ran, gate.count())
			require.Len(t, rep.Configs, 1)
			assert.Equal(t, len(tasks), rep.Configs[0].Runs)
			assert.InDelta(t, tt.success, rep.Configs[0].SuccessRate, 1e-9)
			if tt.success == 0 {
				assert.Equal(t, map[string]int{compare.FailureWrong: len(tasks)}, rep.Configs[0].Failures)
			}
		})
	}
}

func TestRunLeavesTheCallersTasksUnchanged(t *testing.T) {
	tasks := []state.Task{demoTasks(t)[0]}
	tasks[0].ID = ""
	rep, err := compare.Run(context.Background(), newLoader(sim.Profile{Name: "perfect"}), tasks, compare.Options{
		Configs: configPaths("direct"), LLM: config.LLM{Provider: "sim"}, OutDir: t.TempDir(), NoTraces: true})
	require.NoError(t, err)
	assert.Empty(t, tasks[0].ID)
	assert.Equal(t, 1, rep.Configs[0].Runs)
}

func TestRunRejectsInvalidOptions(t *testing.T) {
	tasks := demoTasks(t)[:2]
	dup := []state.Task{tasks[0], tasks[0]}
	tests := []struct {
		name  string
		tasks []state.Task
		opts  compare.Options
	}{
		{"no configs", tasks, compare.Options{OutDir: "x"}},
		{"no output folder", tasks, compare.Options{Configs: configPaths("direct")}},
		{"no tasks", nil, compare.Options{Configs: configPaths("direct"), OutDir: "x"}},
		{"duplicate task ids", dup, compare.Options{Configs: configPaths("direct"), OutDir: "x"}},
		{"two configs with one name", tasks, compare.Options{Configs: configPaths("direct", "direct"), OutDir: "x"}},
		{"negative concurrency", tasks, compare.Options{Configs: configPaths("direct"), OutDir: "x", Concurrency: -3}},
		{"negative timeout", tasks, compare.Options{Configs: configPaths("direct"), OutDir: "x", Timeout: -time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.LLM = config.LLM{Provider: "sim"}
			_, err := compare.Run(context.Background(), newLoader(sim.Profile{Name: "perfect"}), tt.tasks, tt.opts)
			require.ErrorIs(t, err, compare.ErrOptions)
		})
	}
}

func TestTracesAppendAfterALineCutByAKill(t *testing.T) {
	out := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(out, "traces", "sim"), 0o755))
	cut := `{"run_id":"direct/sim/demo-01/1/0123abcd","kind":"run_start"}` + "\n" + `{"run_id":"direct/sim/demo-01/1/0123abcd","ki`
	require.NoError(t, os.WriteFile(filepath.Join(out, "traces", "sim", "direct.jsonl"), []byte(cut), 0o644))

	rep, err := compare.Run(context.Background(), newLoader(sim.Profile{Name: "perfect"}), demoTasks(t)[:5], compare.Options{
		Configs: configPaths("direct"), LLM: config.LLM{Provider: "sim"}, OutDir: out})
	require.NoError(t, err)
	require.Equal(t, 5, rep.Ran)
	recs := storedRecords(t, out, 1)
	require.Len(t, recs, 5)
	for _, r := range recs {
		assert.True(t, strings.HasPrefix(r.Trace, "traces/sim/direct.jsonl:"), r.Trace)
		assert.NotContains(t, r.Trace, ":1-", "the old lines are kept")
		assert.NotContains(t, r.Trace, ":2-", "the cut line is kept on a line of its own")
	}
	assertTracesPointAtTheirRuns(t, out, recs)
}

// With Threads, a comparison stopped in the middle of a multi-call run
// resumes inside it: the model calls the run had finished are replayed
// from its thread, so the two sessions together make exactly the calls of
// an uninterrupted comparison. Without threads the interrupted run starts
// over and repeats them.
func TestThreadsResumeInsideAnInterruptedRun(t *testing.T) {
	tasks := demoTasks(t)[:6]
	configs := configPaths("react", "plan_execute")
	run := func(t *testing.T, threads bool, limit int) (first, second int, rep *compare.Report) {
		out := t.TempDir()
		opts := compare.Options{Configs: configs, LLM: config.LLM{Provider: "sim"}, Concurrency: 1, OutDir: out, Scorer: verify.ExactMatch{}, Threads: threads}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		g1 := &callGate{limit: limit, cancel: cancel}
		_, err := compare.Run(ctx, newLoader(sim.Profile{Name: "perfect"}, withOracle(), withWrapper(g1.wrap)), tasks, opts)
		if limit > 0 {
			require.ErrorIs(t, err, compare.ErrInterrupted)
		} else {
			require.NoError(t, err)
		}
		g2 := &callGate{}
		rep, err = compare.Run(context.Background(), newLoader(sim.Profile{Name: "perfect"}, withOracle(), withWrapper(g2.wrap)), tasks, opts)
		require.NoError(t, err)
		return g1.count(), g2.count(), rep
	}
	whole, _, _ := run(t, false, 0)
	// 7 calls stop the comparison inside its third or fourth run (react and
	// plan-and-execute make two to four calls per demo task).
	first, second, rep := run(t, true, 7)
	assert.Equal(t, whole, first+second, "no finished call is made again")
	for _, s := range rep.Configs {
		assert.Equal(t, len(tasks), s.Runs, s.Config)
		assert.InDelta(t, 1, s.SuccessRate, 1e-9, s.Config)
	}
	first, second, _ = run(t, false, 7)
	assert.Greater(t, first+second, whole, "without threads the interrupted run starts over")
}
