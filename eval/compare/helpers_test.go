package compare_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/middleware"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools/builtin"
	"github.com/planner-engine/planner/tools/search"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// testLoader builds pipelines with a planner.Engine, as the command line
// does (node registry, built-in tools, the Engine's meter and the
// middleware of offline models), with a sim model of a profile chosen by
// the test. It implements compare.Loader.
type testLoader struct{ eng *planner.Engine }

var _ compare.Loader = (*testLoader)(nil)

func (l *testLoader) LoadWith(ctx context.Context, path string, llmCfg config.LLM, maxSteps int) (*planner.Pipeline, error) {
	return l.eng.Load(ctx, path, planner.WithLLMConfig(llmCfg), planner.WithMaxSteps(maxSteps))
}

func (l *testLoader) ModelLabel(provider string) string { return l.eng.ModelLabel(provider) }

func (l *testLoader) ModelKind(provider string) llm.Kind { return l.eng.ModelKind(provider) }

func (l *testLoader) Scrubber() trace.Scrubber { return l.eng.Scrubber() }

// engineLoader returns a loader over an Engine with the command line's
// tools (every built-in tool, the BM25 keyword index of tool retrieval
// and recall) and opts.
func engineLoader(opts ...planner.Option) *testLoader {
	eng, err := planner.New(append([]planner.Option{planner.WithTools(builtin.Factory{}), planner.WithKeywordIndex(search.Keywords{})}, opts...)...)
	if err != nil {
		panic(err) // New fails only for a WithRecording folder that is missing
	}
	return &testLoader{eng: eng}
}

type loaderSettings struct {
	wrap      func(llms.Model) llms.Model
	tasks     []suite.Task
	tokenizer bool
	simOpts   []sim.Option
}

// withTasks gives the sim the tasks to play instead of the demo suite's.
func withTasks(tasks []suite.Task) loaderOption {
	return func(s *loaderSettings) { s.tasks = tasks }
}

type loaderOption func(*loaderSettings)

// withOracle makes the sim know every fact and never slip
// (sim.OracleCapabilities), so that every config answers every task: for
// tests of the comparison's bookkeeping (resuming, repeats, caches), which
// need runs that succeed, not of what a paradigm can do. Without it the
// sim's capability profiles apply: one-reply configs (direct, cot) fail
// the demo suite's lookups.
func withOracle() loaderOption {
	return withSimOptions(sim.WithCapabilities(sim.OracleCapabilities()))
}

// withSimOptions passes further options to the sim model.
func withSimOptions(opts ...sim.Option) loaderOption {
	return func(s *loaderSettings) { s.simOpts = append(s.simOpts, opts...) }
}

// withWrapper wraps the sim model in w, inside the Engine's middleware:
// w sees each attempt of each model call a node makes (one attempt per
// call for a fault-free profile).
func withWrapper(w func(llms.Model) llms.Model) loaderOption {
	return func(s *loaderSettings) {
		if prev := s.wrap; prev != nil {
			s.wrap = func(m llms.Model) llms.Model { return w(prev(m)) }
			return
		}
		s.wrap = w
	}
}

// withTokenizer makes the sim report no usage, as the command line's sim
// does, so that the Engine's meter estimates every call's tokens with the
// tiktoken tokenizer (loaded by each loader's first call, a few hundred
// milliseconds). Without it the sim reports each call's usage, counted by
// llm.ApproxMeter, as a real provider reports its own.
func withTokenizer() loaderOption {
	return func(s *loaderSettings) { s.tokenizer = true }
}

// reportUsage makes m report each call's usage, counted by
// llm.ApproxMeter, in its choices' GenerationInfo.
func reportUsage(m llms.Model) llms.Model {
	return middleware.Wrap(m, func(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
		resp, err := m.GenerateContent(ctx, msgs, opts...)
		if err != nil || resp == nil {
			return resp, err
		}
		prompt, completion, _ := llm.ApproxMeter{}.Measure(msgs, resp)
		for _, ch := range resp.Choices {
			if ch.GenerationInfo == nil {
				ch.GenerationInfo = map[string]any{}
			}
			ch.GenerationInfo["PromptTokens"], ch.GenerationInfo["CompletionTokens"] = prompt, completion
		}
		return resp, nil
	})
}

// newLoader returns a loader whose "sim" provider, registered as an
// offline simulated model (the command line's quick retries, each retry
// traced as a trace.KindRetry event), plays prof on the demo suite's tasks
// (or withTasks'), seeded with the comparison's seed, and reports its
// usage unless withTokenizer.
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
	build := func(_ context.Context, cfg config.LLM, _ string) (llms.Model, error) {
		simOpts := append([]sim.Option{sim.WithSeed(cfg.Seed), sim.WithTasks(s.tasks)}, s.simOpts...)
		sm, err := sim.NewWithProfile(prof, simOpts...)
		if err != nil {
			return nil, err
		}
		var m llms.Model = sm
		if !s.tokenizer {
			m = reportUsage(m)
		}
		if s.wrap != nil {
			m = s.wrap(m)
		}
		return m, nil
	}
	return engineLoader(planner.WithOfflineProvider("sim", sim.Label, build, llm.AsKind(llm.KindSimulated)))
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
