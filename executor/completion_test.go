package executor_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// paperCfg is a completion-style loop set as the paper-faithful configs
// set it, with a one-line instruction and inline examples.
func paperCfg() executor.ReActConfig {
	cfg := executor.ReActConfig{Style: executor.StyleCompletion, MaxIterations: 5, ObservationLimit: executor.Unlimited,
		KeepSteps: intp(0), Finalize: boolp(false), Examples: "\nEXAMPLES\n"}
	cfg.System = "INSTRUCTION\n{{.Extra.Examples}}"
	cfg.Prompt = "Question: {{.Extra.Task}}"
	return cfg
}

// paperHeader is what paperCfg's prompt starts with for the task "q".
const paperHeader = "INSTRUCTION\n\nEXAMPLES\nQuestion: q\n"

// completionPrompt returns the one user message of a completion-style
// request.
func completionPrompt(t *testing.T, r request) string {
	t.Helper()
	require.Len(t, r.msgs, 1)
	require.Equal(t, llms.ChatMessageTypeHuman, r.msgs[0].Role)
	require.Len(t, r.msgs[0].Parts, 1)
	return r.msgs[0].Parts[0].(llms.TextContent).Text
}

func newLoop(t *testing.T, m *llmtest.Recorder, cfg executor.ReActConfig, ts ...tools.Tool) *executor.Loop {
	t.Helper()
	l, err := executor.NewLoop(nodekind.Env{Model: llm.Model{LLM: m}, Tools: registry(t, ts...)}, cfg)
	require.NoError(t, err)
	return l
}

// pagingTool answers each input with its next page of results and
// records the inputs it got.
type pagingTool struct {
	name  string
	pages map[string][]string
	mu    sync.Mutex
	seen  []string
}

func (p *pagingTool) Name() string        { return p.name }
func (p *pagingTool) Description() string { return "test tool " + p.name }
func (p *pagingTool) Call(_ context.Context, in string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = append(p.seen, in)
	pages := p.pages[in]
	if len(pages) == 0 {
		return "No more results.\n", nil
	}
	p.pages[in] = pages[1:]
	return pages[0], nil
}

func (p *pagingTool) inputs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

func TestCompletionStyleRendersTheStepsAsThePapersHarness(t *testing.T) {
	search := &pagingTool{name: "Search", pages: map[string][]string{
		`"Love the Way You Lie"`: {`"Love the Way You Lie" is a song by Eminem featuring Rihanna.\n It was released in 2010.`},
	}}
	lookup := &pagingTool{name: "lookup", pages: map[string][]string{
		"Rihanna": {"(Result 1 / 2) Rihanna sings the chorus.", "(Result 2 / 2) Rihanna recorded a sequel.\nIt came out later."},
	}}
	s := text(
		// The continuation of "Thought 1:", without the label.
		` I need to search "Love the Way You Lie".`+"\nAction 1: "+`Search["Love the Way You Lie"]`,
		// With the label, as chat models repeat it.
		"Thought 2: It is by Eminem. I need to look up Rihanna.\nAction 2: Lookup[Rihanna]",
		// No "\nAction 3: ": the action-only call follows.
		" I should page on.\nThe lookup has more results.",
		" Lookup[Rihanna]",
		" It is by Eminem featuring Rihanna.\nAction 4: Finish[Eminem featuring Rihanna]\nObservation 4: Episode finished, reward = 1",
	)
	h := runScript(t, paperCfg(), s, "q", search, lookup)
	require.NoError(t, h.err)

	step1 := "Thought 1: I need to search \"Love the Way You Lie\".\nAction 1: Search[\"Love the Way You Lie\"]\n" +
		"Observation 1: \"Love the Way You Lie\" is a song by Eminem featuring Rihanna. It was released in 2010.\n"
	step2 := "Thought 2: It is by Eminem. I need to look up Rihanna.\nAction 2: Lookup[Rihanna]\nObservation 2: (Result 1 / 2) Rihanna sings the chorus.\n"
	step3 := "Thought 3: I should page on.\nAction 3: Lookup[Rihanna]\nObservation 3: (Result 2 / 2) Rihanna recorded a sequel.\nIt came out later.\n"
	reqs := requests(h.model)
	require.Len(t, reqs, 5)
	want := []struct {
		prompt string
		stops  []string
	}{
		{paperHeader + "Thought 1:", []string{"\nObservation 1:"}},
		{paperHeader + step1 + "Thought 2:", []string{"\nObservation 2:"}},
		{paperHeader + step1 + step2 + "Thought 3:", []string{"\nObservation 3:"}},
		{paperHeader + step1 + step2 + "Thought 3: I should page on.\nAction 3:", []string{"\n"}},
		{paperHeader + step1 + step2 + step3 + "Thought 4:", []string{"\nObservation 4:"}},
	}
	for i, w := range want {
		assert.Equal(t, w.prompt, completionPrompt(t, reqs[i]), "request %d", i)
		assert.Equal(t, w.stops, reqs[i].opts.StopWords, "request %d", i)
		assert.Empty(t, reqs[i].opts.Tools)
	}

	assert.Equal(t, []string{`"Love the Way You Lie"`}, search.inputs(), "the text in Search[...] reaches the tool verbatim, quotes and all")
	assert.Equal(t, []string{"Rihanna", "Rihanna"}, lookup.inputs(), "Lookup resolves to the tool named lookup; repeating it pages")
	assert.True(t, h.out.Complete)
	assert.Equal(t, "Eminem featuring Rihanna", h.out.Answer)
	assert.Equal(t, 4, h.out.Iterations, "the action-only call is part of step 3")
	require.Len(t, h.out.Entries, 4)
	assert.Equal(t, state.Entry{Thought: "I need to search \"Love the Way You Lie\".", Tool: "Search", Input: `"Love the Way You Lie"`,
		Observation: "\"Love the Way You Lie\" is a song by Eminem featuring Rihanna. It was released in 2010.", Raw: s.Replies[0].Text}, h.out.Entries[0])
	assert.Equal(t, "Eminem featuring Rihanna", h.out.Entries[3].Final)
	assert.Equal(t, []string{executor.GuardActionOnly}, h.guards())
	obs := h.ofKind(trace.KindObservation)
	require.Len(t, obs, 3)
	assert.Equal(t, "\"Love the Way You Lie\" is a song by Eminem featuring Rihanna. It was released in 2010.", obs[0].Text,
		"the observation event holds what the model was shown")
	actions := h.ofKind(trace.KindAction)
	require.Len(t, actions, 3)
	assert.Equal(t, `"Love the Way You Lie"`, actions[0].Data["input"])
}

func TestCompletionStyleBudgetEndsWithAnEmptyOrFinalizedAnswer(t *testing.T) {
	reply := " I need to search Pluto.\nAction %d: Search[Pluto]"
	steps := func(n int) scripted.Script {
		s := scripted.Script{}
		for i := 1; i <= n; i++ {
			s.Replies = append(s.Replies, scripted.Reply{Text: fmt.Sprintf(reply, i)})
		}
		return s
	}
	search := func() tools.Tool { return &pagingTool{name: "Search", pages: map[string][]string{}} }

	t.Run("finalize off: an empty answer, as the harness's finish[]", func(t *testing.T) {
		cfg := paperCfg()
		cfg.MaxIterations = 2
		h := runScript(t, cfg, steps(2), "q", search())
		require.NoError(t, h.err)
		assert.False(t, h.out.Complete)
		assert.Equal(t, state.FailureBudget, h.out.Failure)
		assert.Empty(t, h.out.Answer)
		assert.Equal(t, 2, h.out.Iterations)
		assert.Len(t, requests(h.model), 2, "no finalizer call")
		assert.ErrorIs(t, h.out.Err(), executor.ErrBudget)
	})
	t.Run("finalize on: the finalizer sees the numbered steps", func(t *testing.T) {
		cfg := paperCfg()
		cfg.MaxIterations = 2
		cfg.Finalize = boolp(true)
		cfg.FinalizePrompt = "STEPS:\n{{.Extra.Scratchpad}}"
		s := steps(2)
		s.Replies = append(s.Replies, scripted.Reply{Role: "finalize", Text: "Final Answer: Pluto"})
		h := runScript(t, cfg, s, "q", search())
		require.NoError(t, h.err)
		assert.False(t, h.out.Complete)
		assert.Equal(t, "Pluto", h.out.Answer)
		reqs := requests(h.model)
		require.Len(t, reqs, 3)
		assert.Equal(t, "STEPS:\nThought 1: I need to search Pluto.\nAction 1: Search[Pluto]\nObservation 1: No more results.\n\n"+
			"Thought 2: I need to search Pluto.\nAction 2: Search[Pluto]\nObservation 2: No more results.", completionPrompt(t, reqs[2]))
	})
}

func TestCompletionStyleAnswersUnusableActionsAsWikiEnv(t *testing.T) {
	h := runScript(t, paperCfg(), text(
		" I will search.\nAction 1: Search Pluto",
		" I will think.\nAction 2: Think[about Pluto]",
		" Done.\nAction 3: finish[]",
	), "q", &pagingTool{name: "Search"})
	require.NoError(t, h.err)
	reqs := requests(h.model)
	require.Len(t, reqs, 3)
	assert.Equal(t, paperHeader+"Thought 1: I will search.\nAction 1: Search Pluto\nObservation 1: Invalid action: search Pluto\n"+
		"Thought 2: I will think.\nAction 2: Think[about Pluto]\nObservation 2: Invalid action: think[about Pluto]\nThought 3:", completionPrompt(t, reqs[2]))
	assert.True(t, h.out.Complete, "finish[] ends the run, with an empty answer")
	assert.Empty(t, h.out.Answer)
	assert.Equal(t, []string{executor.GuardInvalidAction, executor.GuardInvalidAction}, h.guards())
	assert.Equal(t, "Invalid action: search Pluto", h.out.Entries[0].Error)
	assert.Zero(t, h.state.Usage.Snapshot().ToolCalls)
}

func TestCompletionStyleHasNoRepeatGuard(t *testing.T) {
	s := scripted.Script{Replies: []scripted.Reply{{Text: " Again.\nAction 1: Search[x]"}, {Text: " Again.\nAction 2: Search[x]"},
		{Text: " Again.\nAction 3: Search[x]"}, {Text: " Again.\nAction 4: Search[x]"}, {Text: " Enough.\nAction 5: Finish[x]"}}}
	h := runScript(t, paperCfg(), s, "q", echoTool(), &fakeTool{name: "Search", fn: func(context.Context, string) (string, error) { return "same page", nil }})
	require.NoError(t, h.err)
	assert.True(t, h.out.Complete)
	assert.Empty(t, h.guards())
	assert.Equal(t, "same page", h.out.Entries[3].Observation)
}

func TestCompletionStyleCutsWhatAProviderWroteBeyondTheStop(t *testing.T) {
	s := text(" I need Pluto.\nAction 1: Search[Pluto]\nObservation 1: Pluto is a planet.\nThought 2: Done.\nAction 2: Finish[planet]",
		" It is a dwarf planet.\nAction 2: Finish[dwarf planet]")
	s.IgnoreStop = true
	h := runScript(t, paperCfg(), s, "q", &pagingTool{name: "Search", pages: map[string][]string{"Pluto": {"Pluto is a dwarf planet."}}})
	require.NoError(t, h.err)
	assert.Equal(t, "dwarf planet", h.out.Answer)
	assert.Equal(t, paperHeader+"Thought 1: I need Pluto.\nAction 1: Search[Pluto]\nObservation 1: Pluto is a dwarf planet.\nThought 2:",
		completionPrompt(t, requests(h.model)[1]))
	assert.Equal(t, []string{"invented_observation"}, h.guards())
}

func TestCompletionStyleDefaultPromptListsTheTools(t *testing.T) {
	cfg := executor.ReActConfig{Style: executor.StyleCompletion}
	h := runScript(t, cfg, text(" Easy.\nAction 1: Finish[4]"), "What is 2+2?", echoTool())
	require.NoError(t, h.err)
	p := completionPrompt(t, requests(h.model)[0])
	assert.Contains(t, p, "(1) echo[input]: test tool echo\n(2) Finish[answer]: gives the answer and ends the task.\nHere are some examples.\n\nQuestion: ")
	qa, ok := executor.FallbackExamples(executor.ExamplesDemoQA)
	require.True(t, ok)
	assert.True(t, strings.HasSuffix(p, qa+"Question: What is 2+2?\nThought 1:"), p)
	assert.Equal(t, "4", h.out.Answer)
}

func TestCompletionStyleBranchesTakeNumberedTurns(t *testing.T) {
	sm, err := scripted.New(text(" Look.\nAction 1: Search[a]", " Done.\nAction 2: Finish[b]"))
	require.NoError(t, err)
	m := newRecModel(sm)
	l := newLoop(t, m, paperCfg(), &pagingTool{name: "Search", pages: map[string][]string{"a": {"page a"}}})
	b, err := l.Begin(hookedState(state.Task{}), executor.Input{Task: "q"})
	require.NoError(t, err)
	b1, turn, err := b.Next(t.Context(), executor.TurnOptions{})
	require.NoError(t, err)
	assert.False(t, turn.Ended())
	b2, turn, err := b1.Next(t.Context(), executor.TurnOptions{})
	require.NoError(t, err)
	assert.True(t, turn.Final)
	assert.Equal(t, "b", turn.Answer)
	assert.Equal(t, "Thought 1: Look.\nAction 1: Search[a]\nObservation 1: page a\nThought 2: Done.\nAction 2: Finish[b]", b2.Transcript())
}

func TestChatStyleSettingsForThePaper(t *testing.T) {
	t.Run("react-paper passes the bracket text verbatim", func(t *testing.T) {
		h := runScript(t, executor.ReActConfig{Format: executor.FormatPaper}, text(`Thought: t`+"\n"+`Action: echo["hi there"]`, "Thought: t\nAction: Finish[x]"), "q", echoTool())
		require.NoError(t, h.err)
		assert.Equal(t, `echo: "hi there"`, h.out.Entries[0].Observation)
	})
	t.Run("format react still unwraps quotes", func(t *testing.T) {
		h := runScript(t, executor.ReActConfig{}, text("Thought: t\nAction: echo\nAction Input: \"hi\"", "Thought: t\nFinal Answer: x"), "q", echoTool())
		require.NoError(t, h.err)
		assert.Equal(t, "echo: hi", h.out.Entries[0].Observation)
	})
	t.Run("observation_limit -1 keeps long observations whole", func(t *testing.T) {
		h := runScript(t, executor.ReActConfig{ObservationLimit: executor.Unlimited}, text("Thought: t\nAction: big\nAction Input: a", "Thought: t\nFinal Answer: x"), "q", bigTool(5000))
		require.NoError(t, h.err)
		assert.Len(t, h.out.Entries[0].Observation, 5000)
	})
}
