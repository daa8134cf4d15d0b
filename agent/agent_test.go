package agent_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/planner-engine/planner/agent"
	"github.com/planner-engine/planner/llm/middleware"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

type settings struct {
	MaxIterations int      `mapstructure:"max_iterations"`
	Temperature   *float64 `mapstructure:"temperature"`
	Tools         []string `mapstructure:"tools"`
}

func TestDecodeRejectsUnknownKeysNamingThem(t *testing.T) {
	var s settings
	err := agent.Decode(map[string]any{"max_iterations": 3, "temprature": 0.2}, &s)
	require.ErrorIs(t, err, agent.ErrSettings)
	var se *agent.SettingError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "temprature", se.Key)
	assert.Contains(t, err.Error(), "known: max_iterations, temperature, tools")
}

func TestDecodeAcceptsWeakTypesAndLists(t *testing.T) {
	var s settings
	require.NoError(t, agent.Decode(map[string]any{"max_iterations": "5", "temperature": 0.5, "tools": "search,calculator"}, &s))
	assert.Equal(t, 5, s.MaxIterations)
	assert.Equal(t, 0.5, *s.Temperature)
	assert.Equal(t, []string{"search", "calculator"}, s.Tools)

	err := agent.Decode(map[string]any{"max_iterations": "many"}, &s)
	var se *agent.SettingError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "max_iterations", se.Key)
}

func TestPromptsResolveInlineFileAndDefaults(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p.tmpl"), []byte("Q: {{.Question}}"), 0o644))
	env := agent.Env{BaseDir: dir}

	sys, tmpl, err := env.Prompts(agent.PromptSources{PromptFile: "p.tmpl"}, "default system", "default {{.Question}}")
	require.NoError(t, err)
	assert.Equal(t, "default system", sys)
	out, err := tmpl.Render(agent.NewState(agent.Task{Question: "why?"}), nil)
	require.NoError(t, err)
	assert.Equal(t, "Q: why?", out)

	_, _, err = env.Prompts(agent.PromptSources{Prompt: "x", PromptFile: "p.tmpl"}, "", "")
	var se *agent.SettingError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "prompt", se.Key)

	_, _, err = env.Prompts(agent.PromptSources{PromptFile: "missing.tmpl"}, "", "")
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "prompt_file", se.Key)

	_, _, err = env.Prompts(agent.PromptSources{Prompt: "{{.Question"}, "", "")
	require.ErrorIs(t, err, agent.ErrSettings)
}

func TestEnvTemplateResolvesInlineFileOrDefaultAndNamesItsKey(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "j.tmpl"), []byte("file {{.Question}}"), 0o644))
	env := agent.Env{BaseDir: dir}
	cases := []struct {
		name, inline, file string
		want               string
		errKey             string
	}{
		{name: "inline", inline: "inline {{.Question}}", want: "inline q"},
		{name: "file", file: "j.tmpl", want: "file q"},
		{name: "blank falls back to the default", inline: "  \n", want: "default q"},
		{name: "both set", inline: "x", file: "j.tmpl", errKey: "judge_prompt"},
		{name: "missing file", file: "nope.tmpl", errKey: "judge_prompt_file"},
		{name: "broken template", inline: "{{.Question", errKey: "judge_prompt"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := env.Template("judge_prompt", tc.inline, tc.file, "default {{.Question}}")
			if tc.errKey != "" {
				require.ErrorIs(t, err, agent.ErrSettings)
				var se *agent.SettingError
				require.ErrorAs(t, err, &se)
				assert.Equal(t, tc.errKey, se.Key)
				return
			}
			require.NoError(t, err)
			out, err := tmpl.Render(agent.NewState(agent.Task{Question: "q"}), nil)
			require.NoError(t, err)
			assert.Equal(t, tc.want, out)
		})
	}
}

func TestTemplateTyposFailAtRenderWithTheKey(t *testing.T) {
	tmpl, err := agent.ParseTemplate("prompt", "{{.Extra.Missing}}")
	require.NoError(t, err)
	_, err = tmpl.Render(agent.NewState(agent.Task{}), map[string]any{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Missing")
}

func TestUsageIsSafeForConcurrentUpdates(t *testing.T) {
	st := agent.NewState(agent.Task{})
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st.Usage.AddModelCall("a", 10, 2, false, 0.5)
			st.Usage.AddToolCall("b")
		}()
	}
	wg.Wait()
	u := st.Usage.Snapshot()
	assert.Equal(t, 50, u.ModelCalls)
	assert.Equal(t, 500, u.PromptTokens)
	assert.Equal(t, 100, u.CompletionTokens)
	assert.Equal(t, 50, u.ToolCalls)
	assert.InDelta(t, 25.0, u.CostUSD, 1e-9)
	assert.Equal(t, []string{"a", "b"}, u.Nodes())
	assert.Equal(t, 50, u.PerNode["b"].ToolCalls)
}

type echoModel struct {
	seen agent.Caller
	task *agent.Task
	err  error
}

func (m *echoModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	m.seen, m.task = agent.CallerFrom(ctx), agent.TaskFrom(ctx)
	if m.err != nil {
		return nil, m.err
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "hello world"}}}, nil
}

func (m *echoModel) Call(ctx context.Context, p string, o ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, p, o...)
}

type fixedMeter struct{}

func (fixedMeter) Measure([]llms.MessageContent, *llms.ContentResponse) (int, int, bool) {
	return 100, 7, false
}

type perToken struct{}

func (perToken) Cost(p, c int) (float64, bool) { return float64(p+c) / 1e6, true }

func TestModelCallMetersPricesTracesAndIdentifiesTheCaller(t *testing.T) {
	llm := &echoModel{}
	m := agent.Model{LLM: llm, Meter: fixedMeter{}, Pricer: perToken{}}
	st := agent.NewState(agent.Task{ID: "t1", Question: "q"})
	rec := &trace.Recorder{}
	ctx := trace.WithTracer(context.Background(), trace.New("run", rec))
	text, resp, err := m.Call(ctx, st, agent.Caller{Node: "n", Kind: "cot", Role: "finalize"}, agent.Prompt("sys", "hi"))
	require.NoError(t, err)
	assert.Equal(t, "hello world", text)
	require.Len(t, resp.Choices, 1)
	assert.Equal(t, agent.Caller{Node: "n", Kind: "cot", Role: "finalize"}, llm.seen)
	assert.Equal(t, "t1", llm.task.ID)
	u := st.Usage.Snapshot()
	assert.Equal(t, 1, u.ModelCalls)
	assert.Equal(t, 100, u.PromptTokens)
	assert.InDelta(t, 107e-6, u.CostUSD, 1e-12)
	calls := rec.OfKind(trace.KindLLMCall)
	require.Len(t, calls, 1)
	assert.Equal(t, 7, calls[0].Usage.CompletionTokens)
	assert.Equal(t, "finalize", calls[0].Data["role"])
}

func TestModelCallWrapsProviderErrorsButNotCancellation(t *testing.T) {
	boom := errors.New("HTTP 500")
	_, _, err := agent.Model{LLM: &echoModel{err: boom}}.Call(context.Background(), nil, agent.Caller{Node: "n"}, agent.Prompt("", "x"))
	require.ErrorIs(t, err, agent.ErrModel)
	require.ErrorIs(t, err, boom)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err = agent.Model{LLM: &echoModel{err: context.Canceled}}.Call(ctx, nil, agent.Caller{}, agent.Prompt("", "x"))
	require.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, agent.ErrModel)

	_, _, err = agent.Model{}.Call(context.Background(), nil, agent.Caller{}, nil)
	require.ErrorIs(t, err, agent.ErrModel)
	assert.Contains(t, err.Error(), "--llm")
}

func TestSetPartialKeepsTheFirstFailureKind(t *testing.T) {
	st := agent.NewState(agent.Task{})
	st.Failure = agent.FailureParse
	st.SetPartial("maybe", "budget ran out", agent.FailureBudget)
	assert.True(t, st.Done)
	assert.False(t, st.Complete)
	assert.Equal(t, agent.FailureParse, st.Failure)
	st.SetAnswer("yes")
	assert.True(t, st.Complete)
	assert.Empty(t, st.Reason)
}

// flakyModel fails its first failures calls with a retryable error.
type flakyModel struct {
	mu       sync.Mutex
	failures int
	calls    int
}

func (m *flakyModel) GenerateContent(_ context.Context, _ []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	if m.calls <= m.failures {
		return nil, errors.New("API returned unexpected status code: 503: overloaded")
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "ok"}}}, nil
}

func (m *flakyModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

func TestModelCallCountsEveryAttemptIncludingFailedOnes(t *testing.T) {
	noSleep := middleware.WithSleep(func(context.Context, time.Duration) error { return nil })
	tests := []struct {
		name                    string
		failures                int
		wantCalls, wantAttempts int
		wantFailed              int
	}{
		{name: "first try", failures: 0, wantCalls: 1, wantAttempts: 1},
		{name: "fails once then succeeds", failures: 1, wantCalls: 1, wantAttempts: 2},
		{name: "every attempt fails", failures: 3, wantCalls: 0, wantAttempts: 3, wantFailed: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := middleware.NewRetry(middleware.RetryConfig{MaxAttempts: 3}, noSleep)(&flakyModel{failures: tt.failures})
			st := agent.NewState(agent.Task{Question: "q"})
			_, _, err := agent.Model{LLM: m}.Call(context.Background(), st, agent.Caller{Node: "n"}, agent.Prompt("", "x"))
			if tt.wantFailed > 0 {
				require.ErrorIs(t, err, agent.ErrModel)
			} else {
				require.NoError(t, err)
			}
			u := st.Usage.Snapshot()
			assert.Equal(t, tt.wantCalls, u.ModelCalls)
			assert.Equal(t, tt.wantAttempts, u.ModelAttempts)
			assert.Equal(t, tt.wantFailed, u.FailedCalls)
			assert.Equal(t, tt.wantAttempts, u.PerNode["n"].ModelAttempts)
		})
	}
}
