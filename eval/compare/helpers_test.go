package compare_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/middleware"
	"github.com/planner-engine/planner/llm/usage"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/paradigms"
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools/builtin"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// testLoader builds pipelines the way the command line does (node
// registry, built-in tools, middleware-wrapped metered models), with a sim
// model of a profile chosen by the test. It implements compare.Loader.
type testLoader struct {
	models *llm.Factory
	reg    *nodekind.Registry
}

var _ compare.Loader = (*testLoader)(nil)

func (l *testLoader) LoadWith(ctx context.Context, path string, llmCfg config.LLM, maxSteps int) (*pipeline.Pipeline, error) {
	cfg, err := config.Load(path)
	if err != nil {
		return nil, err
	}
	return pipeline.Build(ctx, cfg, pipeline.Options{Registry: l.reg, Models: l.models, Tools: builtin.Factory{}, MaxSteps: maxSteps, LLM: llmCfg})
}

func (l *testLoader) ModelLabel(provider string) string { return l.models.Label(provider) }

func (l *testLoader) ModelKind(provider string) llm.Kind { return l.models.Kind(provider) }

type loaderSettings struct {
	outer func(llms.Model) llms.Model
	meter llm.Meter
	tasks []suite.Task
}

// withTasks gives the sim the tasks to play instead of the demo suite's.
func withTasks(tasks []suite.Task) loaderOption {
	return func(s *loaderSettings) { s.tasks = tasks }
}

type loaderOption func(*loaderSettings)

// withOuter wraps every model outside the retry middleware: it sees one
// call per model call a node makes.
func withOuter(w func(llms.Model) llms.Model) loaderOption {
	return func(s *loaderSettings) { s.outer = w }
}

// withTokenizer meters tokens with the tiktoken estimator, as the command
// line does, instead of the byte-count approximation.
func withTokenizer(tb testing.TB) loaderOption {
	est, err := usage.NewEstimator()
	require.NoError(tb, err)
	return func(s *loaderSettings) { s.meter = tokenMeter{est: est} }
}

type tokenMeter struct{ est *usage.Estimator }

func (m tokenMeter) Measure(msgs []llms.MessageContent, resp *llms.ContentResponse) (int, int, bool) {
	u := m.est.Resolve(msgs, resp)
	return u.PromptTokens, u.CompletionTokens, u.Estimated
}

// newLoader returns a loader whose "sim" provider, registered as a
// simulated model, plays prof on the demo suite's tasks (or withTasks'),
// seeded with the comparison's seed, behind the command line's offline
// retry settings (3 attempts, 1–10 ms backoff). Each retry is traced as a
// trace.KindRetry event, as the command line traces it.
func newLoader(prof sim.Profile, opts ...loaderOption) *testLoader {
	var s loaderSettings
	for _, o := range opts {
		o(&s)
	}
	if s.tasks == nil {
		demo, err := suite.Demo()
		if err != nil {
			panic(err) // the embedded demo suite is covered by suite's tests
		}
		s.tasks = demo
	}
	mc := middleware.DefaultConfig()
	mc.Retry.BaseDelay = time.Millisecond
	mc.Retry.MaxDelay = 10 * time.Millisecond
	fopts := []llm.FactoryOption{
		llm.WithWrapper(func(_ config.LLM, m llms.Model) llms.Model { return middleware.Apply(m, mc, traceRetries()) }),
		llm.WithProvider("sim", sim.Label, func(_ context.Context, cfg config.LLM, _ string) (llms.Model, error) {
			return sim.NewWithProfile(prof, sim.WithSeed(cfg.Seed), sim.WithTasks(s.tasks))
		}, llm.AsKind(llm.KindSimulated)),
	}
	if s.outer != nil {
		fopts = append(fopts, llm.WithWrapper(func(_ config.LLM, m llms.Model) llms.Model { return s.outer(m) }))
	}
	if s.meter != nil {
		fopts = append(fopts, llm.WithMeter(s.meter))
	}
	return &testLoader{models: llm.NewFactory(fopts...), reg: paradigms.Default()}
}

// traceRetries reports each retry wait to the tracer of the call's
// context, as the command line's middleware does.
func traceRetries() middleware.Option {
	return middleware.WithOnRetry(func(ctx context.Context, ev middleware.RetryEvent) {
		trace.From(ctx).Emit(trace.Event{Kind: trace.KindRetry, Node: llm.CallMetaFrom(ctx).Node, Text: ev.String(),
			Data: map[string]any{"attempt": ev.Attempt, "status": ev.StatusCode}})
	})
}

// configPath is the path of a shipped paradigm config.
func configPath(name string) string { return filepath.Join("..", "..", "configs", name+".yaml") }

func configPaths(names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = configPath(n)
	}
	return out
}

// demoSuite returns the demo suite's tasks with their gold solutions.
func demoSuite(tb testing.TB) []suite.Task {
	tb.Helper()
	tasks, err := suite.Demo()
	require.NoError(tb, err)
	require.NotEmpty(tb, tasks)
	return tasks
}

// demoTasks returns the demo suite's tasks as the agents see them.
func demoTasks(tb testing.TB) []state.Task {
	tb.Helper()
	return suite.AgentTasks(demoSuite(tb))
}

// repeatTasks returns n tasks cycling through base, each with a new id.
func repeatTasks(base []suite.Task, n int) []suite.Task {
	out := make([]suite.Task, n)
	for i := range out {
		t := base[i%len(base)]
		t.ID = fmt.Sprintf("%s-r%04d", t.ID, i)
		out[i] = t
	}
	return out
}

// storedRecords reads every record of seed from the store in dir.
func storedRecords(tb testing.TB, dir string, seed uint64) []compare.Record {
	tb.Helper()
	st, err := compare.OpenStore(context.Background(), dir)
	require.NoError(tb, err)
	defer st.Close()
	recs, err := st.All(context.Background(), seed)
	require.NoError(tb, err)
	return recs
}
