package compare_test

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/verify"
	"github.com/stretchr/testify/require"
)

// heapPeak samples the live heap every interval until stopped and returns
// the largest sample in bytes.
func heapPeak(interval time.Duration) (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	done := make(chan struct{})
	var peak uint64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak
	}
}

// meter is a way of counting a run's tokens that the benchmarks compare.
type meter struct {
	name string
	opts []loaderOption
}

// warmUp runs task once with each of configs, so that what the loader
// loads on its first model call (the tokenizer) is not measured.
func warmUp(b *testing.B, loader *testLoader, task state.Task, configs ...string) {
	b.Helper()
	_, err := compare.Run(context.Background(), loader, []state.Task{task}, compare.Options{
		Configs: configs, LLM: config.LLM{Provider: "sim"}, OutDir: b.TempDir(), NoTraces: true})
	require.NoError(b, err)
}

// meters are the token meters the benchmarks compare: the tiktoken
// estimator the command line uses for the sim, which reports no usage, and
// the usage a model reports (the byte-count approximation, reported by the
// sim as a real provider reports its own), which shows the engine's own
// cost without tokenizing.
func meters() []meter {
	return []meter{
		{"meter=tiktoken", []loaderOption{withTokenizer()}},
		{"meter=reported", nil},
	}
}

// BenchmarkCompareZeroLatency runs 1,000 tasks × 6 configs against a
// zero-latency, fault-free sim with traces on, as make run does. One
// iteration is one whole comparison; run it with -benchtime=1x. It reports
// runs/s, the peak live heap (sampled every 10 ms) and allocations.
func BenchmarkCompareZeroLatency(b *testing.B) {
	played := repeatTasks(demoSuite(b), 1000)
	tasks := suite.AgentTasks(played)
	configs := configPaths("direct", "cot", "react", "plan_execute", "rewoo", "llmcompiler")
	runs := len(tasks) * len(configs)
	for _, m := range meters() {
		b.Run(m.name, func(b *testing.B) {
			loader := newLoader(sim.Profile{Name: "zero"}, append(m.opts, withTasks(played))...)
			warmUp(b, loader, tasks[0], configs...)
			b.ReportAllocs()
			var peak uint64
			var elapsed time.Duration
			for b.Loop() {
				out := b.TempDir()
				runtime.GC()
				stop := heapPeak(10 * time.Millisecond)
				began := time.Now()
				rep, err := compare.Run(context.Background(), loader, tasks, compare.Options{
					Configs: configs, LLM: config.LLM{Provider: "sim"}, Concurrency: runtime.GOMAXPROCS(0),
					OutDir: out, Scorer: verify.ExactMatch{}, Suite: "demo×25",
				})
				elapsed += time.Since(began)
				peak = max(peak, stop())
				require.NoError(b, err)
				require.Equal(b, runs, rep.Ran)
			}
			b.ReportMetric(float64(runs)*float64(b.N)/elapsed.Seconds(), "runs/s")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}

// BenchmarkCompareConcurrentLatency runs 1,000 tasks at concurrency 1,000
// against a sim answering every call after exactly 100 ms, for a one-call
// config (direct) and a multi-call one (react). The ideal wall time is the
// longest run's model calls × 100 ms; efficiency-% is the ideal over the
// wall time of the runs (first start to last result stored; pipeline
// loading, and collecting the garbage of setup and of earlier
// comparisons, excluded), i.e. achieved over ideal throughput. One
// iteration is one whole comparison; run it with -benchtime=1x.
func BenchmarkCompareConcurrentLatency(b *testing.B) {
	const latency = 100 * time.Millisecond
	played := repeatTasks(demoSuite(b), 1000)
	tasks := suite.AgentTasks(played)
	for _, m := range meters() {
		for _, name := range []string{"direct", "react"} {
			b.Run(m.name+"/"+name, func(b *testing.B) {
				loader := newLoader(sim.Profile{Name: "latency", Latency: sim.Latency{Base: latency}}, append(m.opts, withTasks(played))...)
				warmUp(b, loader, tasks[0], configPaths(name)...)
				var elapsed, ideal time.Duration
				for b.Loop() {
					out := b.TempDir()
					// Collect the setup's garbage (the tokenizer's tables,
					// the last comparison) now, not inside the timed runs.
					runtime.GC()
					rep, err := compare.Run(context.Background(), loader, tasks, compare.Options{
						Configs: configPaths(name), LLM: config.LLM{Provider: "sim"}, Concurrency: len(tasks),
						OutDir: out, Scorer: verify.ExactMatch{},
					})
					require.NoError(b, err)
					require.Equal(b, len(tasks), rep.Ran)
					elapsed += time.Duration(rep.WallSeconds * float64(time.Second))
					longest := 0
					for _, r := range storedRecords(b, out, 1) {
						longest = max(longest, r.ModelCalls)
					}
					require.Positive(b, longest)
					ideal += time.Duration(longest) * latency
				}
				b.ReportMetric(float64(len(tasks))*float64(b.N)/elapsed.Seconds(), "runs/s")
				b.ReportMetric(float64(len(tasks))*float64(b.N)/ideal.Seconds(), "ideal-runs/s")
				b.ReportMetric(100*ideal.Seconds()/elapsed.Seconds(), "efficiency-%")
			})
		}
	}
}

// BenchmarkSummarizeWithIntervals measures a report's statistics at the
// size of make run's demo comparison: 20 configs x 40 tasks x 3 repeats,
// each config with bootstrap intervals of seven means and paired
// bootstrap intervals against the baseline (2,000 resamples each).
//
//	go test ./eval/compare -run '^$' -bench SummarizeWithIntervals -benchtime 5x
func BenchmarkSummarizeWithIntervals(b *testing.B) {
	var records []compare.Record
	var rows []compare.Row
	for c := range 20 {
		name := fmt.Sprintf("c%02d", c)
		rows = append(rows, compare.Row{Config: name, Label: name})
		for t := range 40 {
			for r := range 3 {
				ok := (c*7+t*13+r*5)%11 != 0
				records = append(records, compare.Record{Config: name, TaskID: fmt.Sprintf("t%02d", t), Repeat: r, Scored: true, Correct: ok,
					EM: map[bool]float64{true: 1}[ok], ModelCalls: 3, PromptTokens: 1000 + t, CompletionTokens: 50, CostUSD: 0.001 * float64(c), LatencyMS: float64(t)})
			}
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		rep := compare.SummarizeRows(records, rows, 0)
		if rep.Configs[1].VsBaseline.SuccessDiffCI == nil {
			b.Fatal("no paired interval")
		}
	}
}
