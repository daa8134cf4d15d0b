package server_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/full"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/server"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/builtin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// counter counts the "counted" tools built and closed: one per loaded
// pipeline that lists the tool, closed when the pipeline is.
type counter struct{ built, closed atomic.Int64 }

// live is the pipelines listing the tool that are loaded and not closed.
func (c *counter) live() int64 { return c.built.Load() - c.closed.Load() }

// countingTools builds the "counted" tool and delegates every other name
// to the built-in tools.
type countingTools struct{ c *counter }

func (f countingTools) Tools(ctx context.Context, spec config.Tool, baseDir string) ([]tools.Tool, error) {
	if spec.Name != "counted" {
		return builtin.Factory{}.Tools(ctx, spec, baseDir)
	}
	f.c.built.Add(1)
	return []tools.Tool{&countedTool{c: f.c}}, nil
}

// countedTool is a tool that counts its Close.
type countedTool struct {
	c    *counter
	once sync.Once
}

func (*countedTool) Name() string        { return "counted" }
func (*countedTool) Description() string { return "counts the pipelines that hold it" }
func (*countedTool) Call(context.Context, string) (string, error) {
	return "ok", nil
}
func (t *countedTool) Close() error {
	t.once.Do(func() { t.c.closed.Add(1) })
	return nil
}

// countingEngine is an engine whose "counted" tool counts the loaded
// pipelines, with the "gated" provider of the test envs (a model of the
// real kind, whose pipelines the server shares) and "gatedscripted", the
// same gated models registered as scripted ones (whose pipelines each run
// loads for itself).
func countingEngine(t *testing.T) (*planner.Engine, *counter) {
	t.Helper()
	c := &counter{}
	build := func(_ context.Context, cfg config.LLM, _ string) (llms.Model, error) {
		g, ok := gates.Load(cfg.Model)
		if !ok {
			return nil, fmt.Errorf("no gated model %q", cfg.Model)
		}
		return g.(llms.Model), nil
	}
	eng, err := planner.New(append(full.Options(), planner.WithTools(countingTools{c}),
		planner.WithOfflineProvider("gated", "gated: a test model", build),
		planner.WithOfflineProvider("gatedscripted", "gated, of the scripted kind", build, llm.AsKind(llm.KindScripted)),
	)...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = eng.Close() })
	return eng, c
}

const (
	countedYAML = `name: counted
description: "ReAct with a calculator and the counted tool"
tools: [calculator, counted]
limits: {max_steps: 5}
nodes:
  - {id: act, type: react, mode: text, max_iterations: 12}
edges:
  - {from: START, to: act}
  - {from: act, to: END}
`
	countedApprovalYAML = `name: counted_approval
description: "ReAct whose calculator calls need approval, with the counted tool"
tools: [{name: calculator, approve: true}, counted]
limits: {max_steps: 5}
nodes:
  - {id: act, type: react, mode: text, max_iterations: 12}
edges:
  - {from: START, to: act}
  - {from: act, to: END}
`
)

// countingEnv is a test env over countingEngine with the counted configs.
func countingEnv(t *testing.T, opts ...option) (*env, *counter) {
	t.Helper()
	eng, c := countingEngine(t)
	e := newEnv(t, append([]option{func(cfg *server.Config) { cfg.Engine = eng }}, opts...)...)
	for name, text := range map[string]string{"counted.yaml": countedYAML, "counted_approval.yaml": countedApprovalYAML} {
		require.NoError(t, os.WriteFile(filepath.Join(e.dir, "configs", name), []byte(text), 0o644))
	}
	return e, c
}

// scriptedGate is the env's gate as a model of the scripted kind.
func (e *env) scriptedGate() string { return "gatedscripted:" + strings.TrimPrefix(e.gated, "gated:") }

// startAll posts reqs at once and returns the runs accepted.
func (e *env) startAll(reqs []server.RunRequest) []server.Accepted {
	e.t.Helper()
	out := make([]server.Accepted, len(reqs))
	var wg sync.WaitGroup
	for i, req := range reqs {
		wg.Go(func() {
			r := e.do("POST", "/api/runs", req)
			if r.code == http.StatusAccepted {
				r.json(e.t, &out[i])
			}
		})
	}
	wg.Wait()
	return out
}

// Runs of the same config share one loaded pipeline: starting twenty of
// them loads it once (each start loaded it again, with its tools: a search
// index, MCP servers).
func TestRunsShareOneLoadedPipeline(t *testing.T) {
	t.Parallel()
	e, c := countingEnv(t)
	reqs := make([]server.RunRequest, 20)
	for i := range reqs {
		reqs[i] = server.RunRequest{Config: "counted", Question: "Add them, steps:2", LLM: e.gated}
	}
	for _, acc := range e.startAll(reqs) {
		require.NotEmpty(t, acc.RunID)
		v := e.wait(acc.RunID)
		assert.Equal(t, "done", v.Status, "%+v", v)
		assert.Equal(t, "2001", v.Answer)
	}
	assert.EqualValues(t, 1, c.built.Load(), "one pipeline loaded for the twenty runs")
	// A resume of the config's threads takes the same pipeline.
	r := e.do("POST", "/api/runs", server.RunRequest{Config: "counted", Question: "Add them, steps:1", LLM: e.gated, Thread: "again"})
	require.Equal(t, http.StatusAccepted, r.code, "%s", r.body)
	assert.EqualValues(t, 1, c.built.Load())
}

// A queued run holds no loaded pipeline, whether the runs share theirs or
// (a scripted model, which plays its replies in order) load their own:
// with one run at a time and nine queued, one pipeline is loaded, not ten.
func TestQueuedRunsHoldNoPipeline(t *testing.T) {
	t.Parallel()
	for _, scripted := range []bool{false, true} {
		t.Run(fmt.Sprintf("scripted=%v", scripted), func(t *testing.T) {
			t.Parallel()
			e, c := countingEnv(t, func(cfg *server.Config) { cfg.MaxRuns = 1 })
			model := e.gated
			if scripted {
				model = e.scriptedGate()
			}
			e.gate.Hold()
			var ids []string
			for range 10 {
				ids = append(ids, e.start(server.RunRequest{Config: "counted", Question: "Add them, steps:1", LLM: model}).RunID)
			}
			require.Eventually(t, func() bool { return e.gate.Waiting() == 1 }, 10*time.Second, time.Millisecond, "one run reaches the model")
			queued := 0
			for _, id := range ids {
				if e.do("GET", "/api/runs/"+id, nil).json2(t)["status"] == server.StatusQueued {
					queued++
				}
			}
			assert.Equal(t, 9, queued)
			assert.EqualValues(t, 1, c.live(), "only the running run holds a pipeline (%d loaded, %d closed)", c.built.Load(), c.closed.Load())
			e.gate.Open()
			for _, id := range ids {
				assert.Equal(t, "done", e.wait(id).Status)
			}
			if scripted {
				assert.EqualValues(t, 0, c.live(), "a private pipeline is closed when its run is done")
			}
		})
	}
}

// A thread waiting for an approval does not keep a pipeline of its own
// when its pipeline can be shared: five waiting threads hold one.
func TestWaitingThreadsShareTheirPipeline(t *testing.T) {
	t.Parallel()
	e, c := countingEnv(t)
	var accs []server.Accepted
	for i := range 5 {
		accs = append(accs, e.start(server.RunRequest{Config: "counted_approval", Question: "Add them, steps:1", LLM: e.gated, Thread: fmt.Sprintf("wait-%d", i)}))
	}
	for _, acc := range accs {
		require.Equal(t, "waiting", e.wait(acc.RunID).Status)
	}
	assert.EqualValues(t, 1, c.built.Load(), "one pipeline loaded")
	assert.LessOrEqual(t, c.live(), int64(1), "the waiting threads hold no pipeline each")
	r := e.do("POST", "/api/approvals/wait-0", map[string]any{"approve": true})
	require.Equal(t, http.StatusAccepted, r.code, "%s", r.body)
	var acc server.Accepted
	r.json(t, &acc)
	v := e.wait(acc.RunID)
	assert.Equal(t, "done", v.Status, "%+v", v)
	assert.EqualValues(t, 1, c.built.Load(), "the approved thread resumes on the cached pipeline")
}

// Pipelines no run uses are closed once idle for PipelineIdleTimeout, and
// at most MaxIdlePipelines stay loaded meanwhile.
func TestIdlePipelinesAreClosed(t *testing.T) {
	t.Parallel()
	e, c := countingEnv(t, func(cfg *server.Config) { cfg.MaxIdlePipelines, cfg.PipelineIdleTimeout = 1, time.Hour })
	for i := range 3 { // three configs: three pipelines
		name := fmt.Sprintf("counted%d", i)
		require.NoError(t, os.WriteFile(filepath.Join(e.dir, "configs", name+".yaml"), []byte(strings.Replace(countedYAML, "name: counted", "name: "+name, 1)), 0o644))
		e.wait(e.start(server.RunRequest{Config: name, Question: "Add them, steps:1", LLM: e.gated}).RunID)
	}
	assert.EqualValues(t, 3, c.built.Load())
	assert.EqualValues(t, 1, c.live(), "only MaxIdlePipelines idle pipelines stay loaded")

	// An idle timeout of a second: long enough that a loaded machine does
	// not let the pipeline go idle between a run's admission and its start
	// (a CI run with 50 ms saw it loaded twice for one run), short enough
	// to see it closed.
	e, c = countingEnv(t, func(cfg *server.Config) { cfg.PipelineIdleTimeout = time.Second })
	e.wait(e.start(server.RunRequest{Config: "counted", Question: "Add them, steps:1", LLM: e.gated}).RunID)
	assert.EqualValues(t, 1, c.built.Load())
	require.Eventually(t, func() bool { return c.live() == 0 }, 10*time.Second, 10*time.Millisecond, "the idle pipeline is closed")
	// The next run loads it again.
	e.wait(e.start(server.RunRequest{Config: "counted", Question: "Add them, steps:1", LLM: e.gated}).RunID)
	assert.EqualValues(t, 2, c.built.Load())
}

// Editing a config gives its next runs a pipeline of the new content; the
// old one is closed once idle.
func TestAnEditedConfigLoadsAgain(t *testing.T) {
	t.Parallel()
	e, c := countingEnv(t, func(cfg *server.Config) { cfg.PipelineIdleTimeout = 50 * time.Millisecond })
	e.wait(e.start(server.RunRequest{Config: "counted", Question: "Add them, steps:1", LLM: e.gated}).RunID)
	edited := strings.Replace(countedYAML, "max_iterations: 12", "max_iterations: 11", 1)
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "configs", "counted.yaml"), []byte(edited), 0o644))
	v := e.wait(e.start(server.RunRequest{Config: "counted", Question: "Add them, steps:1", LLM: e.gated}).RunID)
	assert.Equal(t, "done", v.Status)
	assert.EqualValues(t, 2, c.built.Load())
	require.Eventually(t, func() bool { return c.live() == 0 }, 5*time.Second, 10*time.Millisecond)
}

// Closing the server closes the pipelines it keeps.
func TestCloseClosesCachedPipelines(t *testing.T) {
	t.Parallel()
	e, c := countingEnv(t)
	e.wait(e.start(server.RunRequest{Config: "counted", Question: "Add them, steps:1", LLM: e.gated}).RunID)
	assert.EqualValues(t, 1, c.live())
	require.NoError(t, e.srv.Close())
	assert.EqualValues(t, 0, c.live())
}

// A run refused for the limits (429) leaves no thread behind: the run is
// admitted before its thread is created (a start that passed the check
// while the slots filled created its thread, then was refused, leaving an
// interrupted thread that a later resume would run).
func TestRefusedRunsLeaveNoThread(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *server.Config) { c.MaxRuns, c.MaxQueued = 1, 1 })
	// A config that takes a while to load (it indexes the demo corpus)
	// keeps many starts between their admission and their launch.
	search := strings.Replace(reactYAML, "tools: [calculator]", "tools: [calculator, {name: search, corpus: demo}]", 1)
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "configs", "search.yaml"), []byte(search), 0o644))
	e.gate.Hold()
	reqs := make([]server.RunRequest, 12)
	for i := range reqs {
		reqs[i] = server.RunRequest{Config: "search", Question: "Add them, steps:1", LLM: e.gated, Thread: fmt.Sprintf("t-%02d", i)}
	}
	accepted := 0
	for _, acc := range e.startAll(reqs) {
		if acc.RunID != "" {
			accepted++
		}
	}
	assert.Equal(t, 2, accepted, "one runs, one waits")
	ts, err := e.srv.Store().Threads(context.Background())
	require.NoError(t, err)
	assert.Len(t, ts, accepted, "only accepted runs have a thread")

	// A fork refused for the limits leaves no new thread either.
	r := e.do("POST", "/api/threads/"+ts[0].Name+"/fork", map[string]any{"from": 0, "as": "forked"})
	assert.Equal(t, http.StatusTooManyRequests, r.code, "%s", r.body)
	_, err = e.srv.Store().Thread(context.Background(), "forked")
	assert.Error(t, err, "the refused fork created no thread")
	e.gate.Open()
}

// A start whose pipeline does not load leaves no thread.
func TestAStartThatDoesNotLoadLeavesNoThread(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do("POST", "/api/runs", server.RunRequest{Config: "broken", Question: "q", LLM: e.gated, Thread: "never"})
	assert.Equal(t, http.StatusUnprocessableEntity, r.code, "%s", r.body)
	_, err := e.srv.Store().Thread(context.Background(), "never")
	assert.Error(t, err)
}

// A negative timeout is refused with a clear 400 (it used to mean no time
// limit at all).
func TestNegativeTimeoutIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, d := range []string{"-1s", "-5m", "0s"} {
		r := e.do("POST", "/api/runs", server.RunRequest{Config: "react", Question: spiders, LLM: "scripted:spiders.yaml", Timeout: d, Thread: "neg"})
		assert.Equal(t, http.StatusBadRequest, r.code, "%s: %s", d, r.body)
		var b server.ErrorBody
		r.json(t, &b)
		assert.Contains(t, b.Error.Message, "positive", d)
		assert.Equal(t, map[string]any{"field": "timeout"}, b.Error.Details)
	}
	_, err := e.srv.Store().Thread(context.Background(), "neg")
	assert.Error(t, err)
}

// One loaded pipeline serves many runs at once (run this with -race): the
// shipped configs, with their tools (a search index, a docstore whose
// tools keep a page open per run) and the sim, run sixteen tasks each at
// once, all on one pipeline per config, and every run ends as it does
// alone.
func TestSharedPipelinesServeConcurrentRuns(t *testing.T) {
	t.Parallel()
	tasks := benchTasks(t, 16)
	bs := newBenchServer(t, tasks)
	configs := []string{"react", "react_tools", "llmcompiler", "react_hotpotqa"}
	alone := map[string]string{} // config/task -> answer of a run alone
	for _, c := range configs {
		id := bs.post(t, server.RunRequest{Config: c, Suite: "bench", Task: tasks[0].ID})
		bs.waitIdle(t)
		alone[c] = bs.run(t, id).Answer
	}
	var ids []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, c := range configs {
		for _, task := range tasks {
			wg.Go(func() {
				id := bs.post(t, server.RunRequest{Config: c, Suite: "bench", Task: task.ID})
				mu.Lock()
				ids = append(ids, c+" "+task.ID+" "+id)
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	bs.waitIdle(t)
	for _, s := range ids {
		f := strings.Fields(s)
		v := bs.run(t, f[2])
		assert.Equal(t, "done", v.Status, "%s: %+v", s, v)
		if f[1] == tasks[0].ID {
			assert.Equal(t, alone[f[0]], v.Answer, "%s answers as it does alone", s)
		}
	}
	cached, loads := bs.srv.PipelineStats()
	assert.EqualValues(t, len(configs), loads, "one pipeline loaded per config")
	assert.Equal(t, len(configs), cached)
}
