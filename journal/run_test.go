package journal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/sqlitestore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

func newStore(t testing.TB) *sqlitestore.Store {
	t.Helper()
	s, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "threads.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func session(t testing.TB, s journal.Store, name string, opts ...journal.OpenOption) (context.Context, *journal.Run) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.Thread(ctx, name); err != nil {
		require.NoError(t, s.Create(ctx, journal.Thread{Name: name, Pipeline: "p", Status: journal.StatusRunning}))
	}
	r, err := journal.Open(ctx, s, name, opts...)
	require.NoError(t, err)
	return journal.WithScope(journal.WithRun(ctx, r), journal.NodeScope(1, "act")), r
}

// echoModel answers each prompt with "reply to <prompt> #<n>" and counts
// its calls.
type echoModel struct{ calls atomic.Int64 }

func (m *echoModel) call(prompt string) func(context.Context) (*llms.ContentResponse, error) {
	return func(context.Context) (*llms.ContentResponse, error) {
		n := m.calls.Add(1)
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: fmt.Sprintf("reply to %s #%d", prompt, n),
			GenerationInfo: map[string]any{"PromptTokens": 7}}}}, nil
	}
}

func ask(ctx context.Context, r *journal.Run, m *echoModel, role, prompt string) (string, error) {
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, prompt)}
	resp, err := r.Model(ctx, "act", role, msgs, []llms.CallOption{llms.WithTemperature(0.7)}, m.call(prompt))
	if err != nil {
		return "", err
	}
	return resp.Choices[0].Content, nil
}

func TestReplayAnswersJournaledCallsAndGoesOnLive(t *testing.T) {
	s := newStore(t)
	m := &echoModel{}
	ctx, r := session(t, s, "t")
	first, err := ask(ctx, r, m, "", "hello")
	require.NoError(t, err)
	tool, err := r.Tool(ctx, "act", "calc", "1+1", func(context.Context) (journal.ToolResult, error) {
		return journal.ToolResult{Output: "2"}, nil
	})
	require.NoError(t, err)
	require.Equal(t, "2", tool.Output)
	replayed, live, unused := r.Stats()
	assert.Equal(t, [3]int{0, 2, 0}, [3]int{replayed, live, unused})

	// A new session replays both calls without making them, then goes on.
	ctx, r = session(t, s, "t")
	again, err := ask(ctx, r, m, "", "hello")
	require.NoError(t, err)
	assert.Equal(t, first, again)
	tool, err = r.Tool(ctx, "act", "calc", "1+1", func(context.Context) (journal.ToolResult, error) {
		t.Fatal("a journaled tool call ran again")
		return journal.ToolResult{}, nil
	})
	require.NoError(t, err)
	assert.Equal(t, "2", tool.Output)
	next, err := ask(ctx, r, m, "", "next")
	require.NoError(t, err)
	assert.Equal(t, "reply to next #2", next)
	assert.Equal(t, int64(2), m.calls.Load(), "only the new call reached the model")
	replayed, live, unused = r.Stats()
	assert.Equal(t, [3]int{2, 1, 0}, [3]int{replayed, live, unused})

	th, err := s.Thread(context.Background(), "t")
	require.NoError(t, err)
	assert.Equal(t, int64(2), th.ModelCalls)
	assert.Equal(t, int64(1), th.ToolCalls)
}

func TestReplayedResponseKeepsTokenCountsAsInts(t *testing.T) {
	s := newStore(t)
	m := &echoModel{}
	ctx, r := session(t, s, "t")
	_, err := ask(ctx, r, m, "", "hello")
	require.NoError(t, err)
	ctx, r = session(t, s, "t")
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hello")}
	resp, err := r.Model(ctx, "act", "", msgs, []llms.CallOption{llms.WithTemperature(0.7)}, m.call("hello"))
	require.NoError(t, err)
	assert.Equal(t, 7, resp.Choices[0].GenerationInfo["PromptTokens"])
}

// A journal that keeps requests whole (KeepRequests) shows a diff of a
// diverged call, whether the resumed session keeps them or not.
func TestDivergedRequestIsReportedWithADiff(t *testing.T) {
	s := newStore(t)
	m := &echoModel{}
	ctx, r := session(t, s, "t", journal.KeepRequests())
	_, err := ask(ctx, r, m, "", "line one\nthe question is A\nline three")
	require.NoError(t, err)

	ctx, r = session(t, s, "t")
	_, err = ask(ctx, r, m, "", "line one\nthe question is B\nline three")
	var de *journal.DivergedError
	require.ErrorAs(t, err, &de)
	require.ErrorIs(t, err, journal.ErrDiverged)
	assert.Equal(t, int64(1), de.Seq)
	assert.Equal(t, "1:act", de.Scope)
	assert.Contains(t, de.Diff, "-          the question is A")
	assert.Contains(t, de.Diff, "+          the question is B")
	assert.Contains(t, err.Error(), "resume --from N --as NEW")
	assert.Equal(t, int64(1), m.calls.Load(), "a diverged call is not made")

	// Another tool input than the journal's is a divergence too.
	ctx, r = session(t, s, "u")
	_, err = r.Tool(ctx, "act", "calc", "1+1", func(context.Context) (journal.ToolResult, error) { return journal.ToolResult{Output: "2"}, nil })
	require.NoError(t, err)
	ctx, r = session(t, s, "u")
	_, err = r.Tool(ctx, "act", "calc", "1+2", func(context.Context) (journal.ToolResult, error) { return journal.ToolResult{Output: "3"}, nil })
	require.ErrorIs(t, err, journal.ErrDiverged)
	assert.Contains(t, err.Error(), `"input":"1+1"`)
	assert.Contains(t, err.Error(), `"input":"1+2"`)
}

func TestNodeTransitionMustTakeTheJournaledRoute(t *testing.T) {
	s := newStore(t)
	ctx, r := session(t, s, "t")
	require.NoError(t, r.Node(ctx, 1, "plan", "execute"))
	ctx, r = session(t, s, "t")
	err := r.Node(ctx, 1, "plan", "finish")
	require.ErrorIs(t, err, journal.ErrDiverged)
	assert.Contains(t, err.Error(), `node "plan" (step 1) took route "finish"; the journal recorded "execute"`)
}

// Branches of a fan-out that send identical requests each get their own
// answer back on replay, whatever order they run in.
func TestBranchesReplayTheirOwnAnswers(t *testing.T) {
	s := newStore(t)
	m := &echoModel{}
	run := func(ctx context.Context, r *journal.Run) []string {
		out := make([]string, 8)
		var wg sync.WaitGroup
		for i := range out {
			wg.Go(func() {
				var err error
				out[i], err = ask(journal.Branch(ctx, fmt.Sprintf("sample.%d", i)), r, m, "", "same prompt")
				assert.NoError(t, err)
			})
		}
		wg.Wait()
		return out
	}
	ctx, r := session(t, s, "t")
	first := run(ctx, r)
	for range 5 {
		ctx, r = session(t, s, "t")
		assert.Equal(t, first, run(ctx, r))
	}
	assert.Equal(t, int64(8), m.calls.Load())
	entries, err := s.Entries(context.Background(), "t")
	require.NoError(t, err)
	scopes := map[string]bool{}
	for _, e := range entries {
		scopes[e.Scope] = true
	}
	assert.Len(t, scopes, 8)
	assert.True(t, scopes["1:act/sample.3"])
}

func TestApprovalIsJournaledAndNotAskedAgain(t *testing.T) {
	s := newStore(t)
	asked := 0
	approver := journal.ApproverFunc(func(_ context.Context, a journal.Approval) (journal.Decision, error) {
		asked++
		return journal.Decision{Approved: a.Input == "ok", Reason: "only ok", By: "test"}, nil
	})
	a := journal.Approval{Node: "act", Tool: "rm", Input: "ok"}

	ctx, r := session(t, s, "t")
	_, err := r.Approve(ctx, nil, a)
	require.ErrorIs(t, err, journal.ErrNoApprover, "nobody to ask")
	d, err := r.Approve(ctx, approver, a)
	require.NoError(t, err)
	assert.True(t, d.Approved)

	ctx, r = session(t, s, "t")
	d, err = r.Approve(ctx, approver, a)
	require.NoError(t, err)
	assert.Equal(t, journal.Decision{Approved: true, Reason: "only ok", By: "test"}, d)
	assert.Equal(t, 1, asked, "the replayed decision is not asked again")

	_, err = r.Approve(ctx, journal.Defer(), journal.Approval{Tool: "rm", Input: "later"})
	var we *journal.WaitingError
	require.ErrorAs(t, err, &we)
	assert.Equal(t, "later", we.Approval.Input)
	assert.ErrorIs(t, err, journal.ErrWaiting)
}

func TestFailedModelCallIsNotJournaled(t *testing.T) {
	s := newStore(t)
	ctx, r := session(t, s, "t")
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "x")}
	_, err := r.Model(ctx, "act", "", msgs, nil, func(context.Context) (*llms.ContentResponse, error) {
		return nil, fmt.Errorf("HTTP 503")
	})
	require.Error(t, err)
	entries, err := s.Entries(context.Background(), "t")
	require.NoError(t, err)
	assert.Empty(t, entries)
}

func TestForkCopiesTheFirstCheckpoints(t *testing.T) {
	s := newStore(t)
	m := &echoModel{}
	ctx, r := session(t, s, "t")
	for i := range 4 {
		_, err := ask(ctx, r, m, "", fmt.Sprintf("q%d", i))
		require.NoError(t, err)
	}
	th, err := journal.Fork(context.Background(), s, "t", "f", 2)
	require.NoError(t, err)
	assert.Equal(t, "t", th.Parent)
	assert.Equal(t, int64(2), th.ForkedAt)
	assert.Equal(t, journal.StatusInterrupted, th.Status)
	orig, err := s.Entries(context.Background(), "t")
	require.NoError(t, err)
	forked, err := s.Entries(context.Background(), "f")
	require.NoError(t, err)
	require.Len(t, forked, 2)
	for i := range forked {
		assert.Equal(t, orig[i].Digest, forked[i].Digest)
		assert.JSONEq(t, string(orig[i].Response), string(forked[i].Response))
	}
	_, err = journal.Fork(context.Background(), s, "t", "g", 5)
	require.ErrorIs(t, err, journal.ErrNoCheckpoint)
	_, err = journal.Fork(context.Background(), s, "t", "f", 1)
	require.ErrorIs(t, err, journal.ErrExists)
}

func TestCheckName(t *testing.T) {
	require.NoError(t, journal.CheckName("run-1.a_b"))
	for _, bad := range []string{"", "-x", "a/b", "..", "a b", strings.Repeat("x", 129)} {
		assert.ErrorIs(t, journal.CheckName(bad), journal.ErrBadName, bad)
	}
}

// BenchmarkJournaledModelCall measures what the journal adds to one model
// call whose prompt is about 8 KiB: encoding and hashing the request and
// appending the entry to SQLite (live), or finding and decoding it
// (replay). BenchmarkModelCallNoJournal is the same call without one.
func BenchmarkJournaledModelCall(b *testing.B) {
	prompt := strings.Repeat("Thought: I need the population of Paris. Action: search[Paris population] ", 110)
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeSystem, "You are a ReAct agent."), llms.TextParts(llms.ChatMessageTypeHuman, prompt)}
	reply := &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: strings.Repeat("Thought: done. ", 30), GenerationInfo: map[string]any{"PromptTokens": 2000, "CompletionTokens": 90}}}}
	call := func(context.Context) (*llms.ContentResponse, error) { return reply, nil }
	opts := []llms.CallOption{llms.WithStopWords([]string{"Observation:"})}
	b.Run("live", func(b *testing.B) {
		s := newStore(b)
		ctx, r := session(b, s, "t")
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := r.Model(journal.Branch(ctx, fmt.Sprint(i)), "act", "", msgs, opts, call); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("replay", func(b *testing.B) {
		s := newStore(b)
		ctx, r := session(b, s, "t")
		const n = 500
		for i := range n {
			if _, err := r.Model(journal.Branch(ctx, fmt.Sprint(i)), "act", "", msgs, opts, call); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if i%n == 0 {
				b.StopTimer()
				ctx, r = session(b, s, "t")
				b.StartTimer()
			}
			if _, err := r.Model(journal.Branch(ctx, fmt.Sprint(i%n)), "act", "", msgs, opts, call); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The JSON encoding of a thread's task survives a store round trip (a
// Resume reads it back).
func TestThreadTaskRoundTrip(t *testing.T) {
	s := newStore(t)
	task, err := json.Marshal(map[string]string{"id": "x", "question": "q?"})
	require.NoError(t, err)
	require.NoError(t, s.Create(context.Background(), journal.Thread{Name: "t", Task: task, Status: journal.StatusRunning}))
	th, err := s.Thread(context.Background(), "t")
	require.NoError(t, err)
	assert.JSONEq(t, string(task), string(th.Task))
}

// A thread that says it is running while nobody holds its lock lost its
// process: it is interrupted. One whose lock is held is running.
func TestLiveStatusSeesADeadRun(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	require.NoError(t, s.Create(ctx, journal.Thread{Name: "t", Status: journal.StatusRunning}))
	th, err := s.Thread(ctx, "t")
	require.NoError(t, err)
	assert.Equal(t, journal.StatusInterrupted, journal.LiveStatus(ctx, s, th))
	unlock, err := s.Lock(ctx, "t")
	require.NoError(t, err)
	assert.Equal(t, journal.StatusRunning, journal.LiveStatus(ctx, s, th))
	require.NoError(t, unlock())
	th.Status = journal.StatusDone
	assert.Equal(t, journal.StatusDone, journal.LiveStatus(ctx, s, th))
}

func TestDecideAnswersThePendingCallOnce(t *testing.T) {
	asked := 0
	next := journal.ApproverFunc(func(context.Context, journal.Approval) (journal.Decision, error) {
		asked++
		return journal.Decision{Approved: false, By: "next"}, nil
	})
	pending := journal.Approval{Tool: "rm", Input: "a"}
	a := journal.Decide(pending, journal.Decision{Approved: true, By: "resume"}, next)
	ctx := context.Background()
	d, err := a.Approve(ctx, journal.Approval{Tool: "rm", Input: "b"})
	require.NoError(t, err)
	assert.Equal(t, "next", d.By, "another input is not the pending call")
	d, err = a.Approve(ctx, pending)
	require.NoError(t, err)
	assert.Equal(t, journal.Decision{Approved: true, By: "resume"}, d)
	d, err = a.Approve(ctx, pending)
	require.NoError(t, err)
	assert.Equal(t, "next", d.By, "the decision answers one call")
	assert.Equal(t, 2, asked)
}

func TestSummaryOfEachKind(t *testing.T) {
	s := newStore(t)
	m := &echoModel{}
	ctx, r := session(t, s, "t")
	_, err := ask(ctx, r, m, "", "hello")
	require.NoError(t, err)
	_, err = r.Tool(ctx, "act", "calc", "1+1", func(context.Context) (journal.ToolResult, error) {
		return journal.ToolResult{Error: "boom", Class: "panic"}, nil
	})
	require.NoError(t, err)
	_, err = r.Approve(ctx, journal.ApproverFunc(func(context.Context, journal.Approval) (journal.Decision, error) {
		return journal.Decision{Approved: false, Reason: "no", By: "ops"}, nil
	}), journal.Approval{Tool: "rm", Input: "x"})
	require.NoError(t, err)
	require.NoError(t, r.Node(ctx, 1, "act", ""))
	entries, err := s.Entries(context.Background(), "t")
	require.NoError(t, err)
	var got []string
	for _, e := range entries {
		got = append(got, e.Summary())
	}
	assert.Equal(t, []string{"reply: reply to hello #1", "calc(1+1) -> error: boom", "rm denied by ops: no", "step 1 act done, route default"}, got)
}
