package scripted_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/memstore"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// reactScript is a strict ReAct-like script whose every reply matches
// every call of the run (the question is in each prompt), as in
// examples/scripts/react_demo.yaml: only the strict order decides which
// reply a call gets. Reply 2 serves two calls.
const reactScript = `strict: true
replies:
  - {node: react, contains: "Question:", text: "reply 1"}
  - {node: react, contains: "Question:", text: "reply 2", times: 2}
  - {node: react, contains: "Question:", text: "reply 3"}
  - {node: react, contains: "Question:", text: "reply 4"}
  - {node: react, contains: "Question:", text: "reply 5"}
`

// process is one process's session of a journaled thread: a journal
// session over store and a context that journals in it, as a pipeline
// run gives its node.
func process(t *testing.T, store journal.Store, thread string) context.Context {
	t.Helper()
	ctx := t.Context()
	if _, err := store.Thread(ctx, thread); err != nil {
		require.NoError(t, store.Create(ctx, journal.Thread{Name: thread, Pipeline: "p", Status: journal.StatusRunning}))
	}
	r, err := journal.Open(ctx, store, thread)
	require.NoError(t, err)
	ctx = tools.WithRunState(journal.WithRun(ctx, r), tools.NewRunState())
	return journal.WithScope(ctx, journal.NodeScope(1, "act"))
}

func writeScript(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "react.yaml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

func load(t *testing.T, path string) *scripted.Model {
	t.Helper()
	m, err := scripted.Load(path)
	require.NoError(t, err)
	return m
}

// reactCall makes the n-th call (1-based) of a ReAct-like loop through
// llm.Model.Call: its prompt is the question and the n-1 replies before
// it, so a replayed call asks exactly what the journaled one asked.
func reactCall(ctx context.Context, t *testing.T, m llms.Model, task string, n int) string {
	t.Helper()
	prompt := "Question: how far?\n"
	for i := 1; i < n; i++ {
		prompt += fmt.Sprintf("step %d\n", i)
	}
	st := &state.State{Task: state.Task{ID: task, Question: "how far?"}}
	st.SetHooks(pipeline.ContextHooks(st)) // the journal of ctx, as a run's hooks
	text, _, err := llm.Model{LLM: m}.Call(ctx, st, llm.CallMeta{Node: "act", Kind: "react"}, []llms.MessageContent{llm.Text(llms.ChatMessageTypeHuman, prompt)})
	require.NoError(t, err, "call %d", n)
	return text
}

func TestStrictScriptResumesInANewProcessWhereTheJournalLeftOff(t *testing.T) {
	t.Parallel()
	path := writeScript(t, reactScript)
	want := []string{"reply 1", "reply 2", "reply 2", "reply 3", "reply 4", "reply 5"}
	for k := 1; k < len(want); k++ {
		t.Run(fmt.Sprintf("stop after %d", k), func(t *testing.T) {
			t.Parallel()
			store := memstore.New()
			first := load(t, path)
			ctx := process(t, store, "th")
			for n := 1; n <= k; n++ {
				assert.Equal(t, want[n-1], reactCall(ctx, t, first, "", n))
			}

			// A new process: a fresh model from the same script, a new
			// journal session over the same store.
			again := load(t, path)
			ctx = process(t, store, "th")
			for n := 1; n <= k; n++ {
				assert.Equal(t, want[n-1], reactCall(ctx, t, again, "", n), "call %d is replayed", n)
			}
			require.Zero(t, again.Calls(), "the journal answered the first %d calls", k)
			assert.Equal(t, want[k], reactCall(ctx, t, again, "", k+1), "the first live call gets the reply after the journaled ones")
			assert.Equal(t, 1, again.Calls())
			assert.Equal(t, len(want)-k-1, again.Remaining())
			replayed, live, unused := journal.From(ctx).Stats()
			assert.Equal(t, []int{k, 1, 0}, []int{replayed, live, unused})
		})
	}
}

func TestResumingWithTheSameModelInOneProcessSkipsNothing(t *testing.T) {
	t.Parallel()
	store := memstore.New()
	m := load(t, writeScript(t, reactScript))
	ctx := process(t, store, "th")
	for n := 1; n <= 3; n++ {
		reactCall(ctx, t, m, "", n)
	}
	ctx = process(t, store, "th")
	for n := 1; n <= 3; n++ {
		reactCall(ctx, t, m, "", n)
	}
	assert.Equal(t, "reply 3", reactCall(ctx, t, m, "", 4), "the model already served the journaled calls")
	assert.Equal(t, "reply 4", reactCall(ctx, t, m, "", 5))
	assert.Equal(t, 5, m.Calls())
}

// otherModel returns a model of another provider, whose calls the
// journal holds beside the script's.
func otherModel() llms.Model {
	return llmtest.Respond(&llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "judged", GenerationInfo: map[string]any{"model": "other"}}}})
}

func TestResumeCountsOnlyTheScriptsOwnReplies(t *testing.T) {
	t.Parallel()
	path := writeScript(t, reactScript)
	judge := func(ctx context.Context) {
		_, _, err := llm.Model{LLM: otherModel()}.Call(journal.Branch(ctx, "judge"), nil, llm.CallMeta{Node: "judge"},
			[]llms.MessageContent{llm.Text(llms.ChatMessageTypeHuman, "judge it")})
		require.NoError(t, err)
	}
	store := memstore.New()
	ctx := process(t, store, "th")
	judge(ctx)
	reactCall(ctx, t, load(t, path), "", 1)

	// Another script's replies are not this script's either.
	otherPath := filepath.Join(t.TempDir(), "other.yaml")
	require.NoError(t, os.WriteFile(otherPath, []byte(reactScript), 0o644))
	other := load(t, otherPath)
	_, _, err := llm.Model{LLM: other}.Call(journal.Branch(ctx, "other"), nil, llm.CallMeta{Node: "act", Kind: "react"},
		[]llms.MessageContent{llm.Text(llms.ChatMessageTypeHuman, "Question: other")})
	require.NoError(t, err)

	again := load(t, path)
	ctx = process(t, store, "th")
	judge(ctx)
	reactCall(ctx, t, again, "", 1)
	assert.Equal(t, "reply 2", reactCall(ctx, t, again, "", 2), "one journaled call was the script's")
}

func TestNonStrictScriptResumesWithTheRepliesTheJournalDidNotUse(t *testing.T) {
	t.Parallel()
	path := writeScript(t, `strict: false
fallback: "no idea"
replies:
  - {contains: "Question:", text: "first answer"}
  - {contains: "unrelated", text: "never"}
  - {contains: "Question:", text: "second answer", times: 2}
`)
	store := memstore.New()
	ctx := process(t, store, "th")
	first := load(t, path)
	assert.Equal(t, "first answer", reactCall(ctx, t, first, "", 1))
	assert.Equal(t, "second answer", reactCall(ctx, t, first, "", 2))

	again := load(t, path)
	ctx = process(t, store, "th")
	reactCall(ctx, t, again, "", 1)
	reactCall(ctx, t, again, "", 2)
	assert.Equal(t, "second answer", reactCall(ctx, t, again, "", 3), "the first answer was used by the journaled run")
	assert.Equal(t, "no idea", reactCall(ctx, t, again, "", 4), "and so were both uses of the second")
	assert.Equal(t, 1, again.Remaining(), "only the unmatched reply is left")
}

func TestScriptedErrorReplyBeforeTheJournalsEndIsUsedUpInStrictOrder(t *testing.T) {
	t.Parallel()
	store := memstore.New()
	// The caller retries the failed call, as the retry middleware would;
	// the journal holds replies 1 and 3, not the failure.
	m, err := scripted.New(scripted.Script{Replies: []scripted.Reply{{Text: "one"}, {Error: "flaky"}, {Text: "three"}, {Text: "four"}}})
	require.NoError(t, err)
	ctx := process(t, store, "th")
	call := func(ctx context.Context, m *scripted.Model) string {
		msgs := []llms.MessageContent{llm.Text(llms.ChatMessageTypeHuman, fmt.Sprintf("call %d", m.Calls()))}
		for {
			text, _, err := llm.Model{LLM: m}.Call(ctx, journaledRun(), llm.CallMeta{Node: "act"}, msgs)
			if err == nil {
				return text
			}
			require.ErrorIs(t, err, scripted.ErrScriptedFailure)
		}
	}
	assert.Equal(t, "one", call(ctx, m))
	assert.Equal(t, "three", call(ctx, m))

	again, err := scripted.New(scripted.Script{Replies: []scripted.Reply{{Text: "one"}, {Error: "flaky"}, {Text: "three"}, {Text: "four"}}})
	require.NoError(t, err)
	ctx = process(t, store, "th")
	for _, p := range []string{"call 0", "call 1"} {
		_, _, err := llm.Model{LLM: again}.Call(ctx, journaledRun(), llm.CallMeta{Node: "act"}, []llms.MessageContent{llm.Text(llms.ChatMessageTypeHuman, p)})
		require.NoError(t, err)
	}
	text, _, err := llm.Model{LLM: again}.Call(ctx, journaledRun(), llm.CallMeta{Node: "act"}, []llms.MessageContent{llm.Text(llms.ChatMessageTypeHuman, "live")})
	require.NoError(t, err)
	assert.Equal(t, "four", text)
	assert.Zero(t, again.Remaining())
}

func TestTaskRepliesResumeInANewProcessWhereTheJournalLeftOff(t *testing.T) {
	t.Parallel()
	replies := map[string][]scripted.Reply{
		"jupiter": {{Text: "r1"}, {Text: "r2", Times: 2}, {Text: "r3"}},
		"saturn":  {{Text: "s1"}, {Text: "s2"}},
	}
	store := memstore.New()
	first := taskModel(t, replies)
	ctx := process(t, store, "jupiter-run")
	for n, want := range []string{"r1", "r2", "r2"} {
		assert.Equal(t, want, reactCall(ctx, t, first, "jupiter", n+1))
	}
	saturn := process(t, store, "saturn-run")
	assert.Equal(t, "s1", reactCall(saturn, t, first, "saturn", 1))

	// A new process: a fresh model, a new run state and journal session.
	again := taskModel(t, replies)
	ctx = process(t, store, "jupiter-run")
	for n, want := range []string{"r1", "r2", "r2"} {
		assert.Equal(t, want, reactCall(ctx, t, again, "jupiter", n+1), "replayed")
	}
	assert.Equal(t, "r3", reactCall(ctx, t, again, "jupiter", 4), "the first live call gets the reply after the journaled ones")
	_, err := again.GenerateContent(llm.WithCallMeta(ctx, llm.CallMeta{Node: "act", TaskID: "jupiter"}),
		[]llms.MessageContent{llm.Text(llms.ChatMessageTypeHuman, "more")})
	require.ErrorIs(t, err, scripted.ErrRepliesUsedUp)
	assert.Contains(t, err.Error(), "call 5 has none")

	// Another task's run, resumed, has its own position.
	saturn = process(t, store, "saturn-run")
	reactCall(saturn, t, again, "saturn", 1)
	assert.Equal(t, "s2", reactCall(saturn, t, again, "saturn", 2))
	// A fresh run of the task in this process starts at its first reply.
	assert.Equal(t, "r1", reactCall(process(t, store, "jupiter-fresh"), t, again, "jupiter", 1))
}

func TestResponsesNameTheirReply(t *testing.T) {
	t.Parallel()
	m := load(t, writeScript(t, reactScript))
	ctx := llm.WithCallMeta(t.Context(), llm.CallMeta{Node: "act", Kind: "react"})
	var got []any
	for range 3 {
		resp, err := m.GenerateContent(ctx, []llms.MessageContent{llm.Text(llms.ChatMessageTypeHuman, "Question: x")})
		require.NoError(t, err)
		info := resp.Choices[0].GenerationInfo
		assert.Equal(t, "react.yaml", info[scripted.InfoScript])
		assert.Equal(t, "scripted", info["model"])
		got = append(got, info[scripted.InfoReply])
	}
	assert.Equal(t, []any{1, 2, 2}, got)
}

// journaledRun is a run state whose calls are journaled in the journal
// session of their context, as a pipeline run's are.
func journaledRun() *state.State {
	st := state.NewState(state.Task{})
	st.SetHooks(pipeline.ContextHooks(st))
	return st
}
