package planner_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/full"
	"github.com/planner-engine/planner/graph"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/redact"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

const (
	cotConfig    = "configs/cot.yaml"
	directConfig = "configs/direct.yaml"
	cotScript    = "examples/scripts/cot_demo.yaml"
	cotTask      = "A farmer has 3 fields of 17 rows with 23 plants each. How many plants?"
)

func newEngine(t *testing.T, opts ...planner.Option) *planner.Engine {
	t.Helper()
	e, err := planner.New(append(full.Options(), opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, e.Close()) })
	return e
}

// shared is the Engine of the tests that need no option of their own. Each
// Engine loads its own tokenizer on first use, which takes a noticeable
// fraction of a second (seconds under the race detector).
var shared = sync.OnceValues(func() (*planner.Engine, error) { return planner.New(full.Options()...) })

func sharedEngine(t *testing.T) *planner.Engine {
	t.Helper()
	e, err := shared()
	require.NoError(t, err)
	return e
}

// writeScript writes a non-strict scripted-model script answering text.
func writeScript(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.yaml")
	require.NoError(t, os.WriteFile(path, []byte("strict: false\nreplies:\n  - text: "+text+"\n"), 0o600))
	return path
}

// withBlockingProvider registers the offline provider "block", whose
// models never answer: a gate never opened, which reports each call on
// started and holds it until its context ends.
func withBlockingProvider(started chan<- struct{}) planner.Option {
	return planner.WithOfflineProvider("block", "block: never answers", func(context.Context, config.LLM, string) (llms.Model, error) {
		return &llmtest.Gate{Started: started}, nil
	})
}

func TestLoadOfAMissingFileNamesIt(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)
	path := filepath.Join(t.TempDir(), "absent.yaml")

	_, err := e.Load(t.Context(), path, planner.WithLLM("scripted:"+cotScript))

	require.ErrorIs(t, err, planner.ErrInvalidConfig)
	require.ErrorIs(t, err, fs.ErrNotExist)
	assert.Contains(t, err.Error(), path)
	var cerr *config.Error
	require.ErrorAs(t, err, &cerr)
	assert.Equal(t, path, cerr.File)
}

func TestLoadOfAnInvalidFileNamesItsLine(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)
	path := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(path, []byte("name: bad\nnodes:\n  - id: a\n    type: no_such_type\nedges:\n  - {from: START, to: a}\n  - {from: a, to: END}\n"), 0o600))

	_, err := e.Load(t.Context(), path, planner.WithLLM("scripted:"+cotScript))

	require.ErrorIs(t, err, planner.ErrInvalidConfig)
	assert.Contains(t, err.Error(), path+":")
	assert.Contains(t, err.Error(), "no_such_type")
}

func TestLoadWithoutAModelFailsWithErrNoModel(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)

	_, err := e.Load(t.Context(), cotConfig) // configs/cot.yaml has no llm block

	require.ErrorIs(t, err, planner.ErrNoModel)
	assert.Contains(t, err.Error(), cotConfig)
	assert.Contains(t, err.Error(), "WithLLM")
}

func TestLoadRejectsABadLLM(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opt  planner.LoadOption
		want error
	}{
		{"no model", planner.WithLLM("openai"), planner.ErrBadLLMSpec},
		{"scripted without a file", planner.WithLLM("scripted"), planner.ErrBadLLMSpec},
		{"unknown provider", planner.WithLLM("nosuch:model"), planner.ErrUnknownProvider},
		{"unknown provider in a block", planner.WithLLMConfig(config.LLM{Provider: "nosuch"}), planner.ErrUnknownProvider},
		{"sim is not public", planner.WithLLM("sim"), planner.ErrUnknownProvider},
	}
	e := sharedEngine(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := e.Load(t.Context(), cotConfig, tt.opt)
			require.ErrorIs(t, err, tt.want)
		})
	}
}

func TestRunWithoutAQuestionFails(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)
	p, err := e.Load(t.Context(), cotConfig, planner.WithLLM("scripted:"+cotScript))
	require.NoError(t, err)

	res, err := p.Run(t.Context(), "  ")

	require.ErrorIs(t, err, planner.ErrEmptyQuestion)
	assert.Nil(t, res)
}

func TestRunStopsWhenTheContextIsCancelled(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 1)
	e := newEngine(t, withBlockingProvider(started))
	p, err := e.Load(t.Context(), cotConfig, planner.WithLLM("block:any"))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-started
		cancel()
	}()

	res, err := p.Run(ctx, cotTask)

	require.ErrorIs(t, err, planner.ErrRun)
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, res, "a failed run returns its result so far")
	assert.False(t, res.Complete)
	assert.NotEmpty(t, res.Failure)
	assert.Equal(t, trace.KindRunEnd, res.Trace[len(res.Trace)-1].Kind)
}

func TestWithTimeoutBoundsTheRun(t *testing.T) {
	t.Parallel()
	e := newEngine(t, withBlockingProvider(nil))
	p, err := e.Load(t.Context(), cotConfig, planner.WithLLM("block:any"), planner.WithTimeout(20*time.Millisecond))
	require.NoError(t, err)
	assert.Equal(t, 20*time.Millisecond, p.Config().Limits.Timeout)

	res, err := p.Run(t.Context(), cotTask)

	require.ErrorIs(t, err, planner.ErrRun)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, state.FailureTimeout, res.Failure)
}

func TestWithMaxStepsBoundsTheNodeRuns(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)
	p, err := e.Load(t.Context(), "configs/plan_execute.yaml",
		planner.WithLLM("scripted:examples/scripts/plan_execute_demo.yaml"), planner.WithMaxSteps(1))
	require.NoError(t, err)

	res, err := p.Run(t.Context(), "How old was Clyde Tombaugh when he discovered Pluto?")

	require.ErrorIs(t, err, graph.ErrMaxSteps)
	assert.Equal(t, state.FailureLoop, res.Failure)
	assert.Equal(t, []string{"plan"}, res.Steps)
}

func TestWithProviderAddsAModel(t *testing.T) {
	t.Parallel()
	const label = "house: a model of our own"
	e := newEngine(t, planner.WithProvider("house", label, func(_ context.Context, cfg config.LLM, _ string) (llms.Model, error) {
		return llmtest.Reply("Paris, says " + cfg.Model), nil
	}))
	assert.Contains(t, e.Providers(), "house")
	assert.Contains(t, e.Providers(), "openai", "the built-in providers stay")
	assert.Equal(t, label, e.ModelLabel("house"))
	p, err := e.Load(t.Context(), directConfig, planner.WithLLM("house:h1"))
	require.NoError(t, err)
	assert.Equal(t, label, p.Model())

	res, err := p.Run(t.Context(), "What is the capital of France?")

	require.NoError(t, err)
	assert.Equal(t, "Paris, says h1", res.Answer)
	assert.True(t, res.Complete)
	assert.Equal(t, 1, res.Usage.ModelCalls)
	assert.Positive(t, res.Usage.PromptTokens)
}

func TestRunTracesScrubbedEventsToSinksAndFile(t *testing.T) {
	t.Parallel()
	sc := redact.New(redact.WithEnviron(nil), redact.WithSecrets("1173"))
	e := newEngine(t, planner.WithScrubber(sc))
	p, err := e.Load(t.Context(), cotConfig, planner.WithLLM("scripted:"+cotScript))
	require.NoError(t, err)
	sink := &trace.Recorder{}
	path := filepath.Join(t.TempDir(), "trace.jsonl")

	res, err := p.Run(t.Context(), cotTask, planner.WithTraceSink(sink), planner.WithTraceFile(path), planner.WithRunID("run-1"))

	require.NoError(t, err)
	assert.Equal(t, "[REDACTED]", res.Answer, "the answer is scrubbed")
	assert.Equal(t, "1173", res.State.Answer, "the state is not")
	assert.Equal(t, "run-1", res.RunID)
	require.NotEmpty(t, res.Trace)
	assert.Equal(t, res.Trace, sink.Events())
	for _, ev := range res.Trace {
		assert.Equal(t, "run-1", ev.RunID)
		b, err := json.Marshal(ev)
		require.NoError(t, err)
		assert.NotContains(t, string(b), "1173")
	}
	assert.Equal(t, trace.KindRunStart, res.Trace[0].Kind)
	assert.Equal(t, trace.KindRunEnd, res.Trace[len(res.Trace)-1].Kind)

	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	lines := 0
	for sc := bufio.NewScanner(f); sc.Scan(); lines++ {
		assert.NotContains(t, sc.Text(), "1173")
	}
	assert.Equal(t, len(res.Trace), lines, "one JSON line per event")
}

func TestTheDefaultScrubberRemovesSecretsOfTheEnvironment(t *testing.T) {
	const secret = "s3cr3t-v4lue-0123"
	t.Setenv("PLANNER_EMBED_TEST_KEY", secret)
	e := newEngine(t)
	p, err := e.Load(t.Context(), directConfig, planner.WithLLM("scripted:"+writeScript(t, "the key is "+secret)))
	require.NoError(t, err)

	res, err := p.Run(t.Context(), "What is the key?")

	require.NoError(t, err)
	assert.Equal(t, "the key is [REDACTED:PLANNER_EMBED_TEST_KEY]", res.Answer)
	for _, ev := range res.Trace {
		b, err := json.Marshal(ev)
		require.NoError(t, err)
		assert.NotContains(t, string(b), secret)
	}
	off := newEngine(t, planner.WithScrubber(nil))
	p, err = off.Load(t.Context(), directConfig, planner.WithLLM("scripted:"+writeScript(t, "the key is "+secret)))
	require.NoError(t, err)
	res, err = p.Run(t.Context(), "What is the key?")
	require.NoError(t, err)
	assert.Equal(t, "the key is "+secret, res.Answer, "WithScrubber(nil) scrubs nothing")
}

func TestWithTraceFileInAMissingFolderFailsBeforeRunning(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)
	p, err := e.Load(t.Context(), cotConfig, planner.WithLLM("scripted:"+cotScript))
	require.NoError(t, err)

	res, err := p.Run(t.Context(), cotTask, planner.WithTraceFile(filepath.Join(t.TempDir(), "absent", "t.jsonl")))

	require.ErrorIs(t, err, fs.ErrNotExist)
	assert.Nil(t, res)
}

func TestWithTaskRunsTheWholeTask(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)
	p, err := e.Load(t.Context(), cotConfig, planner.WithLLM("scripted:"+cotScript))
	require.NoError(t, err)
	task := state.Task{ID: "farm-1", Question: cotTask, Answer: "1173", Tags: []string{"arithmetic"}}

	res, err := p.Run(t.Context(), "", planner.WithTask(task))

	require.NoError(t, err)
	assert.Equal(t, task, res.State.Task)
	assert.Equal(t, "farm-1", res.Trace[0].Data["task_id"])

	p, err = e.Load(t.Context(), cotConfig, planner.WithLLM("scripted:"+cotScript)) // a new script: the first is used up
	require.NoError(t, err)
	res, err = p.Run(t.Context(), cotTask+" ", planner.WithTask(state.Task{ID: "farm-2", Question: "replaced"}))
	require.NoError(t, err)
	assert.Equal(t, cotTask+" ", res.State.Task.Question, "the question argument wins")
	assert.Equal(t, "farm-2", res.State.Task.ID)
}

func TestRunsArePricedFromThePriceTable(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)
	p, err := e.Load(t.Context(), cotConfig, planner.WithLLMConfig(config.LLM{Provider: "scripted", Script: cotScript, Model: "gpt-4o-mini"}))
	require.NoError(t, err)

	res, err := p.Run(t.Context(), cotTask)

	require.NoError(t, err)
	u := res.Usage
	want := (float64(u.PromptTokens)*0.15 + float64(u.CompletionTokens)*0.60) / 1e6
	assert.InDelta(t, want, u.CostUSD, 1e-12, "gpt-4o-mini's list price")
	assert.Positive(t, u.CostUSD)
}

func TestValidateBuildsWithoutAModel(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)

	p, err := e.Validate(t.Context(), "configs/react.yaml")

	require.NoError(t, err)
	assert.Equal(t, "react", p.Name())
	assert.Empty(t, p.Model())
	assert.NotNil(t, p.Tools())
}

// Validate refuses a pipeline whose llm block names a provider the
// engine does not have, at its line, with the nearest name.
func TestValidateRefusesAnUnknownProvider(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)
	path := filepath.Join(t.TempDir(), "p.yaml")
	require.NoError(t, os.WriteFile(path, []byte("name: t\nllm: {provider: opena, model: x}\nnodes:\n  - {id: a, type: cot}\n"+
		"edges:\n  - {from: START, to: a}\n  - {from: a, to: END}\n"), 0o644))
	_, err := e.Validate(t.Context(), path)
	require.ErrorIs(t, err, config.ErrInvalid)
	assert.Contains(t, err.Error(), `p.yaml:2: llm: unknown llm provider "opena" (did you mean "openai"? available: `)
}

func TestEveryShippedConfigLoads(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)
	paths, err := filepath.Glob("configs/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, path := range paths {
		p, err := e.Load(t.Context(), path, planner.WithLLM("scripted:"+cotScript))
		require.NoError(t, err, path)
		assert.Equal(t, strings.TrimSuffix(filepath.Base(path), ".yaml"), p.Name())
	}
}
