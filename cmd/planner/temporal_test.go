//go:build integration

package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/planner-engine/planner/corpus"
	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/internal/app"
	"github.com/planner-engine/planner/internal/temporaltest"
	"github.com/planner-engine/planner/temporal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
)

// TestTemporal runs compare --temporal against a real Temporal dev server
// (internal/temporaltest; it fails without the Temporal CLI): the results
// equal the in-process comparison's, a worker killed mid-suite loses no
// run and repeats no finished model call, and the model queue's rate limit
// holds across workers. The subtests share one server, each on a task
// queue of its own.
func TestTemporal(t *testing.T) {
	srv := temporaltest.Start(t)
	t.Run("SameAnswersAsInProcess", func(t *testing.T) { testTemporalSameAnswers(t, srv) })
	t.Run("KilledWorkerLosesNothing", func(t *testing.T) { testTemporalKilledWorker(t, srv) })
	t.Run("ModelRateHoldsAcrossWorkers", func(t *testing.T) { testTemporalModelRate(t, srv) })
	t.Run("InterruptedCompareAttaches", func(t *testing.T) { testTemporalCompareAttaches(t, srv) })
	t.Run("WorkerStopsOnSIGTERM", func(t *testing.T) { testTemporalWorkerStops(t, srv) })
	t.Run("TaskRepliesOnWorkers", func(t *testing.T) { testTemporalTaskReplies(t, srv) })
	t.Run("ScriptOnWorkers", func(t *testing.T) { testTemporalScript(t, srv) })
	t.Run("UnpolledQueueIsReported", func(t *testing.T) { testTemporalUnpolledQueue(t, srv) })
}

// testTemporalUnpolledQueue checks compare's watch for workers against the
// real server: a queue no worker polls is reported once, with the command
// that starts a worker; a polled one is not.
func testTemporalUnpolledQueue(t *testing.T, srv *temporaltest.Server) {
	tc := srv.Dial(t)
	check := pollerCheck{queue: "planner-unpolled", hostPort: srv.HostPort, namespace: srv.Namespace}
	var w strings.Builder
	watchPollers(t.Context(), tc, check, &w)
	assert.Equal(t, fmt.Sprintf("compare: no worker polls task queue planner-unpolled on %s, so the runs wait; start one: planner worker --temporal %s --task-queue planner-unpolled\n",
		srv.HostPort, srv.HostPort), w.String())

	startWorkers(t, srv, "planner-polled", "", 1, 0)
	check.queue = "planner-polled"
	// A worker's first poll reaches the server shortly after it starts.
	require.Eventually(t, func() bool {
		resp, err := tc.DescribeTaskQueue(t.Context(), check.queue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		return err == nil && len(resp.GetPollers()) > 0
	}, 30*time.Second, 100*time.Millisecond)
	w.Reset()
	watchPollers(t.Context(), tc, check, &w)
	assert.Empty(t, w.String())
}

// startWorkers starts n in-process planner workers of queue, each with a
// client of its own, whose offline models play tasks (a suite file; ""
// for the demo suite), with the model-queue rate limit rate (0: none).
// They stop when the test ends.
func startWorkers(t *testing.T, srv *temporaltest.Server, queue, tasksFile string, n int, rate float64) {
	t.Helper()
	suiteName := app.DemoSuite
	if tasksFile != "" {
		suiteName = tasksFile
	}
	tasks, err := app.LoadSuite(context.Background(), suiteName)
	require.NoError(t, err)
	for range n {
		a, err := app.New(app.WithTasks(tasks))
		require.NoError(t, err)
		tc := srv.Dial(t)
		w, err := temporal.NewWorker(tc, queue, temporal.Options{Engine: a.Engine, ModelRate: rate})
		require.NoError(t, err)
		require.NoError(t, w.Start())
		t.Cleanup(func() {
			assert.NoError(t, w.Stop())
			assert.NoError(t, a.Close())
		})
	}
}

// storedAnswers reads a run folder's results: answer and model calls by
// config and task.
func storedAnswers(t *testing.T, dir string) map[string]compare.Record {
	t.Helper()
	st, err := compare.OpenStore(context.Background(), dir)
	require.NoError(t, err)
	defer st.Close()
	recs, err := st.All(context.Background(), 1)
	require.NoError(t, err)
	out := map[string]compare.Record{}
	for _, r := range recs {
		out[r.Config+"/"+r.TaskID] = r
	}
	return out
}

// writeRepeatedDemo writes n demo tasks (the demo suite, repeated under
// new ids) to a JSONL suite file and returns its path.
func writeRepeatedDemo(t *testing.T, n int) string {
	t.Helper()
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(corpus.DemoSuite())), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m))
		lines = append(lines, m)
	}
	var b strings.Builder
	for i := range n {
		m := lines[i%len(lines)]
		m["id"] = fmt.Sprintf("%s-r%02d", m["id"], i)
		js, err := json.Marshal(m)
		require.NoError(t, err)
		b.Write(js)
		b.WriteByte('\n')
	}
	path := filepath.Join(t.TempDir(), "tasks.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	return path
}

// testTemporalSameAnswers: a compare of 50 sim tasks across 3 workers
// stores the same per-task answers and counts as the in-process compare.
// The sim plays without faults (sim:perfect): its fault draws count the
// attempts of each identical call in the process that makes them, so a
// run whose repeated call lands on another worker draws again from the
// first attempt (a run of sim:noisy once made 5 model calls there and 4
// in-process, with the same answer).
func testTemporalSameAnswers(t *testing.T, srv *temporaltest.Server) {
	tasks := writeRepeatedDemo(t, 50)
	queue := "same-answers"
	startWorkers(t, srv, queue, tasks, 3, 0)
	args := []string{"compare", "--suite", tasks, "--llm", "sim:perfect", "--config", configPath("cot.yaml"), "--json", "-q"}
	local, remote := t.TempDir(), t.TempDir()
	began := time.Now()
	res := cli(t, append(args, "--out", local)...)
	require.Equal(t, 0, res.code, res.stderr)
	inProcess := time.Since(began)
	began = time.Now()
	res = cli(t, append(args, "--out", remote, "--temporal", srv.HostPort, "--task-queue", queue, "--concurrency", "50")...)
	require.Equal(t, 0, res.code, res.stderr)
	onTemporal := time.Since(began)
	var rep compare.Report
	res.lastJSON(t, &rep)
	require.Len(t, rep.Configs, 1)
	assert.Equal(t, 50, rep.Configs[0].Runs)

	want, got := storedAnswers(t, local), storedAnswers(t, remote)
	require.Len(t, want, 50)
	require.Len(t, got, 50)
	correct := 0
	for k, w := range want {
		g := got[k]
		assert.Equal(t, w.Answer, g.Answer, k)
		assert.Equal(t, w.Complete, g.Complete, k)
		assert.Equal(t, w.ModelCalls, g.ModelCalls, k)
		assert.Equal(t, w.ToolCalls, g.ToolCalls, k)
		assert.Equal(t, w.Failure, g.Failure, k)
		assert.NotEmpty(t, g.Trace, "%s: the run's events, queried from its workflow, are in its trace", k)
		if g.Correct {
			correct++
		}
	}
	t.Logf("50 cot runs on sim:perfect: in-process %s, on Temporal across 3 workers %s; %d correct", inProcess.Round(time.Millisecond), onTemporal.Round(time.Millisecond), correct)

	// Running the command again into the same folder reuses every result.
	res = cli(t, append(args, "--out", remote, "--temporal", srv.HostPort, "--task-queue", queue)...)
	require.Equal(t, 0, res.code, res.stderr)
	var again compare.Report
	res.lastJSON(t, &again)
	assert.Equal(t, 50, again.Reused)
}

// fakeModel is a loopback OpenAI-compatible server for the pipelines on
// Temporal: it answers a ReAct prompt with steps calculator actions, then
// a final answer, each reply after delay, and records every request:
// its digest (the same model call sends the same messages), and when it
// arrived and was answered.
type fakeModel struct {
	srv   *httptest.Server
	steps int
	delay time.Duration

	mu   sync.Mutex
	reqs []fakeRequest
}

type fakeRequest struct {
	digest          string
	arrived, served time.Time
}

func newFakeModel(t *testing.T, steps int, delay time.Duration) *fakeModel {
	t.Helper()
	f := &fakeModel{steps: steps, delay: delay}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeModel) serve(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	body, err := io.ReadAll(r.Body)
	if err != nil || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	sum := sha256.Sum256([]byte(req.text()))
	time.Sleep(f.delay)
	content := "Answer: 7"
	if strings.Contains(req.text(), "Action Input") {
		if n := strings.Count(req.text(), "Thought: step "); n < f.steps { // the steps taken so far are in the prompt
			content = fmt.Sprintf("Thought: step %d.\nAction: calculator\nAction Input: %d+%d", n+1, n, n+1)
		} else {
			content = "Thought: done.\nFinal Answer: 7"
		}
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, fakeRequest{digest: hex.EncodeToString(sum[:8]), arrived: arrived, served: time.Now()})
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "created": 1700000000, "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
	})
}

func (f *fakeModel) requests() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeRequest(nil), f.reqs...)
}

// writeFakePipeline writes a copy of the shipped config name whose llm
// block is the fake model, and returns its path.
func writeFakePipeline(t *testing.T, dir, name string, f *fakeModel) string {
	t.Helper()
	b, err := os.ReadFile(configPath(name + ".yaml"))
	require.NoError(t, err)
	yaml := fmt.Sprintf("llm:\n  provider: openai\n  model: fake\n  base_url: %s/v1\n", f.srv.URL) + string(b)
	path := filepath.Join(dir, name+".yaml")
	require.NoError(t, os.WriteFile(path, []byte(yaml), 0o600))
	return path
}

// writeNumberedTasks writes n tasks whose reference answer is 7, with
// distinct questions, to a JSONL suite file.
func writeNumberedTasks(t *testing.T, dir string, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"id": "t%02d", "question": "Task %d: what is 3 + 4?", "answer": "7"}`+"\n", i, i)
	}
	path := filepath.Join(dir, "tasks.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	return path
}

// testTemporalKilledWorker: a planner worker process killed (SIGKILL) in
// the middle of a suite loses no run, and no model call that finished
// before the kill is made again: the fake model sees each call once,
// except the calls in flight when the worker died. The calls lost with it
// are retried once their heartbeat timeout passes, although the runs'
// timeout is 10 minutes: the suite ends within 90 seconds of the kill.
func testTemporalKilledWorker(t *testing.T, srv *temporaltest.Server) {
	t.Setenv("OPENAI_API_KEY", "sk-test-temporal-0123456789")
	const tasks, steps = 12, 2 // 3 model calls and 2 tool calls per run
	fake := newFakeModel(t, steps, 40*time.Millisecond)
	dir := t.TempDir()
	cfg := writeFakePipeline(t, dir, "react", fake)
	suiteFile := writeNumberedTasks(t, dir, tasks)
	queue := "killed-worker"

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := mainCommand(ctx, t, append(isolatedEnv(), "OPENAI_API_KEY=sk-test-temporal-0123456789"),
		"worker", "--temporal", srv.HostPort, "--task-queue", queue)
	var wlog lockedBuffer
	w.Stdout, w.Stderr = &wlog, &wlog
	require.NoError(t, w.Start())
	waited := make(chan struct{})
	go func() {
		_ = w.Wait() // killed on purpose
		close(waited)
	}()
	defer func() {
		_ = w.Process.Kill() // the test failed before the kill
		<-waited
	}()

	out := filepath.Join(dir, "out")
	done := make(chan result, 1)
	go func() {
		done <- execPlanner(t, invocation{args: []string{"compare", "--suite", suiteFile, "--config", cfg, "--json", "-q", "--out", out,
			"--timeout", "10m", "--temporal", srv.HostPort, "--task-queue", queue}})
	}()
	// Kill the only worker once a third of the model calls are made.
	deadline := time.Now().Add(30 * time.Second)
	for len(fake.requests()) < tasks*(steps+1)/3 {
		require.True(t, time.Now().Before(deadline), "the worker made %d model calls in 30 s; its log:\n%s", len(fake.requests()), wlog.String())
		time.Sleep(5 * time.Millisecond)
	}
	require.NoError(t, w.Process.Signal(syscall.SIGKILL))
	killed := time.Now()
	<-waited
	before := len(fake.requests())
	startWorkers(t, srv, queue, "", 1, 0)

	var res result
	select {
	case res = <-done:
	case <-time.After(90 * time.Second):
		// The calls lost with the worker wait for their heartbeat timeout
		// (temporal.DefaultHeartbeat), not for the runs' 10 minutes.
		t.Fatalf("the suite did not end within 90 s of the kill; worker log:\n%s", wlog.String())
	}
	afterKill := time.Since(killed)
	require.Equal(t, 0, res.code, "stderr:\n%s\nworker log:\n%s", res.stderr, wlog.String())
	recs := storedAnswers(t, out)
	require.Len(t, recs, tasks, "no run is lost")
	for k, r := range recs {
		assert.Equal(t, "7", r.Answer, k)
		assert.True(t, r.Correct, k)
		assert.Equal(t, steps+1, r.ModelCalls, k)
		assert.Equal(t, steps, r.ToolCalls, k)
	}
	reqs := fake.requests()
	seen := map[string]fakeRequest{}
	repeated := 0
	for _, r := range reqs {
		first, dup := seen[r.digest]
		if !dup {
			seen[r.digest] = r
			continue
		}
		repeated++
		// A repeated call is one the killed worker had in flight: it was
		// answered at most a moment before the kill, too late for its
		// activity to complete.
		assert.False(t, first.served.Before(killed.Add(-time.Second)), "model call %s answered at %s, %s before the kill, was made again",
			r.digest, first.served.Format(time.StampMilli), killed.Sub(first.served))
	}
	assert.Len(t, seen, tasks*(steps+1), "each run's model calls, each made")
	t.Logf("killed worker: %d of %d model calls made before the SIGKILL, %d made again (in flight at the kill), %d requests in all; the suite ended %s after the kill (runs' timeout 10 min)",
		before, tasks*(steps+1), repeated, len(reqs), afterKill.Round(time.Millisecond))
}

// testTemporalModelRate: 3 workers with a model-queue limit of rate
// calls per second make the suite's model calls no faster than that, as
// measured at the fake model.
func testTemporalModelRate(t *testing.T, srv *temporaltest.Server) {
	t.Setenv("OPENAI_API_KEY", "sk-test-temporal-0123456789")
	const tasks, rate = 24, 4.0
	fake := newFakeModel(t, 0, 0)
	dir := t.TempDir()
	cfg := writeFakePipeline(t, dir, "cot", fake)
	suiteFile := writeNumberedTasks(t, dir, tasks)
	queue := "model-rate"
	startWorkers(t, srv, queue, "", 3, rate)
	res := cli(t, "compare", "--suite", suiteFile, "--config", cfg, "--json", "-q", "--out", filepath.Join(dir, "out"), "--concurrency", "24",
		"--temporal", srv.HostPort, "--task-queue", queue)
	require.Equal(t, 0, res.code, res.stderr)
	reqs := fake.requests()
	require.Len(t, reqs, tasks)
	times := make([]time.Time, len(reqs))
	for i, r := range reqs {
		times[i] = r.arrived
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	span := times[len(times)-1].Sub(times[0])
	overall := float64(len(times)-1) / span.Seconds()
	peak := 0 // most requests within any one second
	for i := range times {
		n := 0
		for j := i; j < len(times) && times[j].Sub(times[i]) < time.Second; j++ {
			n++
		}
		peak = max(peak, n)
	}
	t.Logf("model-queue limit %g/s across 3 workers: %d calls in %s, %.2f/s overall, at most %d within one second", rate, len(times), span.Round(time.Millisecond), overall, peak)
	assert.LessOrEqual(t, overall, rate*1.25, "calls per second over the suite")
	assert.LessOrEqual(t, peak, int(2*rate), "calls within any one second (the limiter's burst included)")
}

// testTemporalCompareAttaches: a compare --temporal stopped in the middle
// (Ctrl-C) leaves its runs going on the workers; running it again stores
// every run without starting any again: the fake model sees each run's
// one model call once.
func testTemporalCompareAttaches(t *testing.T, srv *temporaltest.Server) {
	t.Setenv("OPENAI_API_KEY", "sk-test-temporal-0123456789")
	const tasks = 12
	fake := newFakeModel(t, 0, 300*time.Millisecond)
	dir := t.TempDir()
	cfg := writeFakePipeline(t, dir, "cot", fake)
	suiteFile := writeNumberedTasks(t, dir, tasks)
	queue := "attaches"
	startWorkers(t, srv, queue, "", 1, 0)
	args := []string{"compare", "--suite", suiteFile, "--config", cfg, "--json", "-q", "--out", filepath.Join(dir, "out"), "--concurrency", "4",
		"--temporal", srv.HostPort, "--task-queue", queue}

	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	code := make(chan int, 1)
	var stderr lockedBuffer
	go func() {
		code <- execute(ctx, args, process{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &stderr,
			lookupEnv: func(string) (string, bool) { return "", false }})
	}()
	deadline := time.Now().Add(30 * time.Second)
	for len(fake.requests()) < 2 {
		require.True(t, time.Now().Before(deadline), "no model call in 30 s: %s", stderr.String())
		time.Sleep(5 * time.Millisecond)
	}
	cancel(&interrupted{sig: os.Interrupt})
	require.Equal(t, exitSIGINT, <-code, stderr.String())
	stopped := len(storedAnswers(t, filepath.Join(dir, "out")))

	res := cli(t, args...)
	require.Equal(t, 0, res.code, res.stderr)
	var rep compare.Report
	res.lastJSON(t, &rep)
	assert.Equal(t, tasks, rep.Configs[0].Runs)
	assert.Equal(t, tasks, rep.Configs[0].Correct)
	seen := map[string]int{}
	for _, r := range fake.requests() {
		seen[r.digest]++
	}
	assert.Len(t, seen, tasks)
	for d, n := range seen {
		assert.Equal(t, 1, n, "model call %s made %d times", d, n)
	}
	t.Logf("compare stopped with %d of %d runs stored; the rerun attached to the rest: %d model calls in all", stopped, tasks, len(fake.requests()))
}

// testTemporalWorkerStops: planner worker stops on SIGTERM, within the
// command's grace, with the shell's exit code for it.
func testTemporalWorkerStops(t *testing.T, srv *temporaltest.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w := mainCommand(ctx, t, isolatedEnv(), "worker", "--temporal", srv.HostPort, "--task-queue", "stops")
	var wlog lockedBuffer
	w.Stdout, w.Stderr = &wlog, &wlog
	require.NoError(t, w.Start())
	for !strings.Contains(wlog.String(), "polling task queue stops") {
		require.NoError(t, ctx.Err(), wlog.String())
		time.Sleep(10 * time.Millisecond)
	}
	require.NoError(t, w.Process.Signal(syscall.SIGTERM))
	began := time.Now()
	err := w.Wait()
	took := time.Since(began)
	require.Error(t, err)
	assert.Equal(t, exitSIGTERM, w.ProcessState.ExitCode(), wlog.String())
	assert.Contains(t, wlog.String(), "planner worker: stopping")
	assert.Less(t, took, stopGrace+time.Second)
	t.Logf("the worker stopped %s after SIGTERM", took.Round(time.Millisecond))
}

// reactReplies are a ReAct run's replies that answer "what is 3 + 4?":
// one calculator step, then the answer.
var reactReplies = []string{"Thought: add them.\nAction: calculator\nAction Input: 3+4", "Thought: done.\nFinal Answer: 7"}

// testTemporalTaskReplies: compare --temporal --llm scripted (each task's
// own replies) on workers started with the suite stores what the
// in-process comparison stores. (The workers refused the model spec
// "scripted" before.)
func testTemporalTaskReplies(t *testing.T, srv *temporaltest.Server) {
	const tasks = 6
	dir := t.TempDir()
	var b strings.Builder
	for i := range tasks {
		line, err := json.Marshal(map[string]any{"id": fmt.Sprintf("r%02d", i), "question": fmt.Sprintf("Task %d: what is 3 + 4?", i), "answer": "7", "replies": reactReplies})
		require.NoError(t, err)
		b.Write(line)
		b.WriteByte('\n')
	}
	suiteFile := filepath.Join(dir, "replies.jsonl")
	require.NoError(t, os.WriteFile(suiteFile, []byte(b.String()), 0o600))
	queue := "task-replies"
	startWorkers(t, srv, queue, suiteFile, 2, 0)
	args := []string{"compare", "--suite", suiteFile, "--llm", "scripted", "--config", configPath("react.yaml"), "--json", "-q"}
	local, remote := filepath.Join(dir, "local"), filepath.Join(dir, "remote")
	res := cli(t, append(args, "--out", local)...)
	require.Equal(t, 0, res.code, res.stderr)
	res = cli(t, append(args, "--out", remote, "--temporal", srv.HostPort, "--task-queue", queue)...)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stderr, "start them with --suite "+suiteFile)
	want, got := storedAnswers(t, local), storedAnswers(t, remote)
	require.Len(t, got, tasks)
	for k, w := range want {
		g := got[k]
		assert.True(t, g.Correct, k)
		assert.Equal(t, w.Answer, g.Answer, k)
		assert.Equal(t, 2, g.ModelCalls, k)
		assert.Equal(t, 1, g.ToolCalls, k)
	}
}

// testTemporalScript: compare --temporal --llm scripted:FILE runs each
// task with the whole script on one worker, whatever the runs before it
// used. (The worker's one model kept its place across runs before: the
// second run found the script used up.)
func testTemporalScript(t *testing.T, srv *temporaltest.Server) {
	const tasks = 4
	dir := t.TempDir()
	script := filepath.Join(dir, "react.yaml")
	yaml := "strict: true\nreplies:\n"
	for _, r := range reactReplies {
		js, err := json.Marshal(r)
		require.NoError(t, err)
		yaml += "  - text: " + string(js) + "\n"
	}
	require.NoError(t, os.WriteFile(script, []byte(yaml), 0o600))
	suiteFile := writeNumberedTasks(t, dir, tasks)
	queue := "script"
	startWorkers(t, srv, queue, "", 1, 0)
	res := cli(t, "compare", "--suite", suiteFile, "--llm", "scripted:"+script, "--config", configPath("react.yaml"), "--json", "-q",
		"--out", filepath.Join(dir, "out"), "--concurrency", "2", "--temporal", srv.HostPort, "--task-queue", queue)
	require.Equal(t, 0, res.code, res.stderr)
	recs := storedAnswers(t, filepath.Join(dir, "out"))
	require.Len(t, recs, tasks)
	for k, r := range recs {
		assert.True(t, r.Correct, "%s: %s", k, r.Answer)
		assert.Equal(t, 2, r.ModelCalls, k)
	}
}
