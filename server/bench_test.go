package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/internal/app"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/server"
	"github.com/planner-engine/planner/verify"
	"github.com/stretchr/testify/require"
)

// The benchmarks of this file measure the server the way issue 28 did:
// in-process, over HTTP (httptest), the shipped configs/react.yaml (a
// calculator and a search tool over the demo corpus) played by the sim.
// Run them one at a time with -benchtime=1x:
//
//	go test -run '^$' -bench 'BenchmarkStartsVersusCompare' -benchtime=1x ./server/
//	go test -run '^$' -bench 'BenchmarkServe1000Runs' -benchtime=1x ./server/

// benchTasks returns n tasks of the demo suite, repeated with unique ids,
// which the sim plays.
func benchTasks(tb testing.TB, n int) []suite.Task {
	tb.Helper()
	demo, err := suite.Demo()
	require.NoError(tb, err)
	out := make([]suite.Task, n)
	for i := range out {
		t := demo[i%len(demo)]
		t.ID = fmt.Sprintf("%s-r%04d", t.ID, i)
		out[i] = t
	}
	return out
}

// reactConfig is the path of the shipped configs/react.yaml.
func reactConfig(tb testing.TB) string {
	tb.Helper()
	p, err := filepath.Abs(filepath.Join("..", "configs", "react.yaml"))
	require.NoError(tb, err)
	return p
}

// sampler samples the live heap and the resident set every interval until
// stopped, and returns their peaks in bytes.
func sampler(interval time.Duration) (stop func() (heap, rss uint64)) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	done := make(chan struct{})
	var heap, rss uint64
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			metrics.Read(sample)
			heap = max(heap, sample[0].Value.Uint64())
			rss = max(rss, residentBytes())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() (uint64, uint64) {
		close(done)
		wg.Wait()
		return heap, rss
	}
}

// residentBytes is the process's resident set (Linux /proc), or 0.
func residentBytes() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseUint(f[1], 10, 64)
	return pages * uint64(os.Getpagesize())
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchServer is a server over the shipped configs with the sim playing
// tasks, and its httptest front.
type benchServer struct {
	srv *server.Server
	ts  *httptest.Server
}

func newBenchServer(tb testing.TB, tasks []suite.Task, opts ...option) *benchServer {
	return newBenchServerOn(tb, "sim", tasks, opts...)
}

// newBenchServerOn is newBenchServer with the model spec llm.
func newBenchServerOn(tb testing.TB, llmSpec string, tasks []suite.Task, opts ...option) *benchServer {
	tb.Helper()
	a, err := app.New(app.WithTasks(tasks))
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = a.Close() })
	dir := tb.TempDir()
	cfg := server.Config{Engine: a.Engine, Dir: filepath.Dir(reactConfig(tb)), Root: dir, StorePath: filepath.Join(dir, "threads.db"), LLM: llmSpec,
		CompareDir: filepath.Join(dir, "out"),
		Tasks: func(context.Context, string) ([]suite.Task, suite.Format, error) {
			return tasks, suite.FormatJSONL, nil
		}}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := server.New(cfg)
	require.NoError(tb, err)
	ts := httptest.NewServer(srv)
	tb.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		_ = srv.Close()
	})
	return &benchServer{srv: srv, ts: ts}
}

// startAll posts one run of each task, concurrency at a time, and returns
// how long each POST took to be answered; every one must be accepted.
func (b *benchServer) startAll(tb testing.TB, tasks []suite.Task, concurrency int) []time.Duration {
	tb.Helper()
	client := b.ts.Client()
	client.Transport.(*http.Transport).MaxIdleConnsPerHost = concurrency
	lat := make([]time.Duration, len(tasks))
	errs := make(chan error, len(tasks))
	sem := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	for i, t := range tasks {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			body, _ := json.Marshal(server.RunRequest{Config: "react", Suite: "bench", Task: t.ID})
			began := time.Now()
			res, err := client.Post(b.ts.URL+"/api/runs", "application/json", bytes.NewReader(body))
			if err != nil {
				errs <- err
				return
			}
			var buf bytes.Buffer
			_, _ = buf.ReadFrom(res.Body)
			res.Body.Close()
			lat[i] = time.Since(began)
			if res.StatusCode != http.StatusAccepted {
				errs <- fmt.Errorf("POST /api/runs: %d %s", res.StatusCode, buf.String())
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(tb, err)
	}
	return lat
}

// waitIdle waits until no run is running or queued.
func (b *benchServer) waitIdle(tb testing.TB) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		res, err := b.ts.Client().Get(b.ts.URL + "/healthz")
		require.NoError(tb, err)
		var h struct {
			Active int `json:"runs_active"`
		}
		require.NoError(tb, json.NewDecoder(res.Body).Decode(&h))
		res.Body.Close()
		if h.Active == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	tb.Fatal("the runs did not finish")
}

// doneRuns counts the runs of the server that ended done.
func (b *benchServer) doneRuns(tb testing.TB) int {
	tb.Helper()
	res, err := b.ts.Client().Get(b.ts.URL + "/api/runs?status=done")
	require.NoError(tb, err)
	defer res.Body.Close()
	var out struct {
		Runs []json.RawMessage `json:"runs"`
	}
	require.NoError(tb, json.NewDecoder(res.Body).Decode(&out))
	return len(out.Runs)
}

// median returns the median of ds.
func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// measure runs f and returns its wall time, CPU time and peak heap and
// resident set.
func measure(f func()) (wall, cpu time.Duration, heap, rss uint64) {
	runtime.GC()
	stop := sampler(5 * time.Millisecond)
	c0, t0 := cpuTime(), time.Now()
	f()
	wall, cpu = time.Since(t0), cpuTime()-c0
	heap, rss = stop()
	return wall, cpu, heap, rss
}

// BenchmarkStartsVersusCompare starts 200 runs of configs/react.yaml
// against the sim at once through POST /api/runs (the server's default
// 32 running, the rest queued) and waits for them; then has compare run
// the same 200 tasks with the same config at concurrency 32, once as
// compare runs by default and once journaling each run as a thread, as
// the server does (compare.Options.Threads). It reports the wall time,
// CPU time and peak live heap of each and their ratios (server over
// compare), and the median time a start took to answer.
func BenchmarkStartsVersusCompare(b *testing.B) {
	// sim answers at once, so a run costs well under a millisecond and
	// the durable journal's SQLite commits are most of a server run;
	// sim:slow takes 100 ms and more a call, as a fast hosted model does.
	for _, spec := range []string{"sim", "sim:slow"} {
		b.Run(spec, func(b *testing.B) { startsVersusCompare(b, spec) })
	}
}

func startsVersusCompare(b *testing.B, spec string) {
	model, err := llm.ParseSpec(spec)
	require.NoError(b, err)
	const runs, concurrency = 200, server.DefaultMaxRuns
	tasks := benchTasks(b, runs)
	warm := benchTasks(b, 1)
	for b.Loop() {
		bs := newBenchServerOn(b, spec, tasks)
		bs.startAll(b, warm, 1) // the tokenizer loads once, outside the measure
		bs.waitIdle(b)
		var lat []time.Duration
		sWall, sCPU, sHeap, _ := measure(func() {
			lat = bs.startAll(b, tasks, runs)
			bs.waitIdle(b)
		})
		require.Equal(b, runs+1, bs.doneRuns(b))

		loader, err := app.New(app.WithTasks(tasks))
		require.NoError(b, err)
		_, err = compare.Run(context.Background(), loader, suite.AgentTasks(warm), compare.Options{Configs: []string{reactConfig(b)},
			LLM: model, OutDir: b.TempDir(), Scorer: verify.ExactMatch{}})
		require.NoError(b, err)
		compareRuns := func(threads bool) (wall, cpu time.Duration, heap uint64) {
			var rep *compare.Report
			wall, cpu, heap, _ = measure(func() {
				rep, err = compare.Run(context.Background(), loader, suite.AgentTasks(tasks), compare.Options{Configs: []string{reactConfig(b)},
					LLM: model, Concurrency: concurrency, OutDir: b.TempDir(), Scorer: verify.ExactMatch{}, Threads: threads})
			})
			require.NoError(b, err)
			require.Equal(b, runs, rep.Ran)
			return wall, cpu, heap
		}
		cWall, cCPU, cHeap := compareRuns(false)
		jWall, jCPU, jHeap := compareRuns(true) // journaled as threads, as the server's runs are
		_ = loader.Close()

		b.ReportMetric(sWall.Seconds(), "server-wall-s")
		b.ReportMetric(cWall.Seconds(), "compare-wall-s")
		b.ReportMetric(sWall.Seconds()/cWall.Seconds(), "wall-ratio")
		b.ReportMetric(sCPU.Seconds()/cCPU.Seconds(), "cpu-ratio")
		b.ReportMetric(float64(sHeap)/float64(cHeap), "heap-ratio")
		b.ReportMetric(sWall.Seconds()/jWall.Seconds(), "wall-ratio-journaled")
		b.ReportMetric(float64(median(lat).Microseconds())/1000, "median-start-ms")
		b.Logf("server: wall %s, cpu %s, peak heap %.0f MiB, median start %s; compare: wall %s, cpu %s, peak heap %.0f MiB; "+
			"compare journaling threads: wall %s, cpu %s, peak heap %.0f MiB",
			sWall.Round(time.Millisecond), sCPU.Round(time.Millisecond), float64(sHeap)/(1<<20), median(lat).Round(time.Microsecond),
			cWall.Round(time.Millisecond), cCPU.Round(time.Millisecond), float64(cHeap)/(1<<20),
			jWall.Round(time.Millisecond), jCPU.Round(time.Millisecond), float64(jHeap)/(1<<20))
	}
}

// BenchmarkServe1000Runs posts 1,000 runs of configs/react.yaml against
// the sim, 64 requests at a time, and waits for them, reporting the peak
// live heap and resident set of the process (server, client and test
// together) while it does.
func BenchmarkServe1000Runs(b *testing.B) {
	const runs, concurrency = 1000, 64
	tasks := benchTasks(b, runs)
	for b.Loop() {
		bs := newBenchServer(b, tasks)
		bs.startAll(b, tasks[:1], 1)
		bs.waitIdle(b)
		var lat []time.Duration
		wall, cpu, heap, rss := measure(func() {
			lat = bs.startAll(b, tasks, concurrency)
			bs.waitIdle(b)
		})
		require.Equal(b, min(runs+1, server.DefaultMaxFinishedRuns), bs.doneRuns(b))
		b.ReportMetric(float64(heap)/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(rss)/(1<<20), "peak-rss-MiB")
		b.ReportMetric(float64(median(lat).Microseconds())/1000, "median-start-ms")
		b.Logf("1000 runs at concurrency 64: wall %s, cpu %s, peak heap %.0f MiB, peak RSS %.0f MiB, median start %s",
			wall.Round(time.Millisecond), cpu.Round(time.Millisecond), float64(heap)/(1<<20), float64(rss)/(1<<20), median(lat).Round(time.Microsecond))
	}
}

// post starts a run and returns its id.
func (b *benchServer) post(tb testing.TB, req server.RunRequest) string {
	tb.Helper()
	body, _ := json.Marshal(req)
	res, err := b.ts.Client().Post(b.ts.URL+"/api/runs", "application/json", bytes.NewReader(body))
	require.NoError(tb, err)
	defer res.Body.Close()
	var acc server.Accepted
	require.NoError(tb, json.NewDecoder(res.Body).Decode(&acc))
	require.Equal(tb, http.StatusAccepted, res.StatusCode)
	return acc.RunID
}

// run returns a run's view.
func (b *benchServer) run(tb testing.TB, id string) server.RunView {
	tb.Helper()
	res, err := b.ts.Client().Get(b.ts.URL + "/api/runs/" + id)
	require.NoError(tb, err)
	defer res.Body.Close()
	var v server.RunView
	require.NoError(tb, json.NewDecoder(res.Body).Decode(&v))
	return v
}
