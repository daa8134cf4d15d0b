package compare_test

import (
	"context"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/llm/middleware"
	"github.com/planner-engine/planner/verify"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// cpuSample is the process's CPU time (user + system, every thread, the
// garbage collector included) and its heap allocations so far.
type cpuSample struct {
	cpu    time.Duration
	allocs uint64
}

func sampleCPU(tb testing.TB) cpuSample {
	var ru syscall.Rusage
	require.NoError(tb, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms) // Mallocs counts tiny allocations too, unlike runtime/metrics
	return cpuSample{cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), allocs: ms.Mallocs}
}

// firstCall records a cpuSample at the first model call made after arm:
// the start of a comparison's runs, after its pipelines are loaded.
type firstCall struct {
	tb   testing.TB
	mu   sync.Mutex
	at   *cpuSample
	once *sync.Once
}

func (f *firstCall) arm() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.at, f.once = nil, new(sync.Once)
}

func (f *firstCall) sample() cpuSample {
	f.mu.Lock()
	defer f.mu.Unlock()
	require.NotNil(f.tb, f.at, "no model call since arm")
	return *f.at
}

func (f *firstCall) wrap(m llms.Model) llms.Model {
	return middleware.Wrap(m, func(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
		f.mu.Lock()
		once := f.once
		f.mu.Unlock()
		once.Do(func() {
			s := sampleCPU(f.tb)
			f.mu.Lock()
			f.at = &s
			f.mu.Unlock()
		})
		return m.GenerateContent(ctx, msgs, opts...)
	})
}

// BenchmarkCPUPerRun runs the demo suite, repeated to 200 tasks, with one
// config on a zero-latency, fault-free sim, traces on and GOMAXPROCS runs
// at once, as make run does, and reports the process's CPU time (user +
// system, garbage collection included) and heap allocations per run, from
// the comparison's first model call to its return: pipeline loading (the
// search index) is left out; storing the records, the traces and reading
// them back for the report are in. One iteration is one comparison.
func BenchmarkCPUPerRun(b *testing.B) {
	played := repeatTasks(demoSuite(b), 200)
	tasks := suite.AgentTasks(played)
	for _, name := range []string{"react", "plan_execute"} {
		for _, m := range meters() {
			b.Run("config="+name+"/"+m.name, func(b *testing.B) {
				first := &firstCall{tb: b}
				loader := newLoader(sim.Profile{Name: "zero"}, append(m.opts, withTasks(played), withWrapper(first.wrap))...)
				first.arm()
				warmUp(b, loader, tasks[0], configPaths(name)...)
				var cpu time.Duration
				var allocs uint64
				runs := 0
				for b.Loop() {
					out := b.TempDir()
					runtime.GC()
					first.arm()
					rep, err := compare.Run(context.Background(), loader, tasks, compare.Options{
						Configs: configPaths(name), LLM: config.LLM{Provider: "sim"}, Concurrency: runtime.GOMAXPROCS(0),
						OutDir: out, Scorer: verify.ExactMatch{},
					})
					end := sampleCPU(b)
					require.NoError(b, err)
					require.Equal(b, len(tasks), rep.Ran)
					start := first.sample()
					cpu += end.cpu - start.cpu
					allocs += end.allocs - start.allocs
					runs += rep.Ran
				}
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(runs), "cpu-ms/run")
				b.ReportMetric(float64(allocs)/float64(runs), "allocs/run")
			})
		}
	}
}
