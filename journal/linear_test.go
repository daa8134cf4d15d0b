package journal_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"

	"github.com/planner-engine/planner/hooks"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/memstore"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/cassette"
	"github.com/planner-engine/planner/llm/llmtest"
)

// conversation is a ReAct-like conversation of n turns after a system
// prompt and a question.
func conversation(n int) []llms.MessageContent {
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, "You are a ReAct agent. "+strings.Repeat("Use the tools. ", 40)),
		llms.TextParts(llms.ChatMessageTypeHuman, "What is the population of Paris?"),
	}
	for i := range n {
		msgs = append(msgs,
			llms.TextParts(llms.ChatMessageTypeAI, fmt.Sprintf("Thought: step %d. Action: search[paris %d]", i, i)),
			llms.TextParts(llms.ChatMessageTypeHuman, fmt.Sprintf("Observation: result %d %s", i, strings.Repeat("lorem ", 20))))
	}
	return msgs
}

// askMsgs makes one model call of msgs (temperature t) in ctx's session.
func askMsgs(ctx context.Context, r *journal.Run, m *echoModel, role string, msgs []llms.MessageContent, temp float64) (string, error) {
	resp, err := r.Model(ctx, "act", role, msgs, []llms.CallOption{llms.WithTemperature(temp)}, m.call(fmt.Sprint(len(msgs))))
	if err != nil {
		return "", err
	}
	return resp.Choices[0].Content, nil
}

// A model entry keeps its request as digests, not the prompt, so a
// thread's journal grows with its calls and not with its prompts; it
// replays as before.
func TestModelRequestsAreJournaledAsDigests(t *testing.T) {
	s := newStore(t)
	m := &echoModel{}
	ctx, r := session(t, s, "t")
	var answers []string
	for i := range 20 {
		a, err := askMsgs(journal.Branch(ctx, fmt.Sprint(i)), r, m, "plan", conversation(i*5), 0.5)
		require.NoError(t, err)
		answers = append(answers, a)
	}
	es, err := s.Entries(context.Background(), "t")
	require.NoError(t, err)
	require.Len(t, es, 20)
	for _, e := range es {
		assert.NotContains(t, string(e.Request), "ReAct agent", "the prompt is not journaled")
		assert.NotContains(t, string(e.Request), "Observation")
		assert.Less(t, len(e.Request), 800, "a request's record does not grow with its prompt")
		var rec struct {
			Role      string `json:"role"`
			Compacted bool   `json:"compacted"`
		}
		require.NoError(t, json.Unmarshal(e.Request, &rec))
		assert.Equal(t, "plan", rec.Role)
		assert.True(t, rec.Compacted, "an older reader replays it as a compacted entry")
	}

	ctx, r = session(t, s, "t")
	for i := range 20 {
		a, err := askMsgs(journal.Branch(ctx, fmt.Sprint(i)), r, m, "plan", conversation(i*5), 0.5)
		require.NoError(t, err)
		assert.Equal(t, answers[i], a)
	}
	assert.Equal(t, int64(20), m.calls.Load(), "every call replayed")
}

// KeepRequests journals the whole request, for debugging.
func TestKeepRequestsJournalsTheWholeRequest(t *testing.T) {
	s := newStore(t)
	m := &echoModel{}
	ctx, r := session(t, s, "t", journal.KeepRequests())
	_, err := askMsgs(ctx, r, m, "", conversation(3), 0.5)
	require.NoError(t, err)
	es, err := s.Entries(context.Background(), "t")
	require.NoError(t, err)
	require.Len(t, es, 1)
	var rec struct {
		Request cassette.Request `json:"request"`
	}
	require.NoError(t, json.Unmarshal(es[0].Request, &rec))
	require.Len(t, rec.Request.Messages, 8)
	assert.Contains(t, rec.Request.Messages[0].Parts[0].Text, "ReAct agent")
	assert.InDelta(t, 0.5, rec.Request.Options.Temperature, 1e-9)
}

// A call that differs from a journaled one kept as digests is reported
// by what differs: the options, the role, the number of messages and the
// first message that differs, with its text.
func TestDivergenceFromDigestsSaysWhatDiffers(t *testing.T) {
	base := conversation(2) // 6 messages: all digested
	long := conversation(20)
	changed := func(msgs []llms.MessageContent, i int, text string) []llms.MessageContent {
		out := append([]llms.MessageContent(nil), msgs...)
		out[i] = llms.TextParts(out[i].Role, text)
		return out
	}
	for _, tc := range []struct {
		name       string
		journaled  []llms.MessageContent
		actual     []llms.MessageContent
		role, temp string
		want       []string
	}{
		{name: "system prompt", journaled: base, actual: changed(base, 0, "You are a careful agent."),
			want: []string{"options: as journaled", "message 1 (system) differs", "actual message 1: You are a careful agent."}},
		{name: "observation", journaled: base, actual: changed(base, 5, "Observation: cut"),
			want: []string{"message 6 (human) differs", "actual message 6: Observation: cut"}},
		{name: "options", journaled: base, actual: base, temp: "0.9",
			want: []string{"options (model, tools, temperature, stop words...): differ", "messages: as journaled", `actual options: {"temperature":0.9}`}},
		{name: "role", journaled: base, actual: base, role: "finalize",
			want: []string{`role: "finalize", journaled ""`}},
		{name: "a message fewer", journaled: base, actual: conversation(2)[:5],
			want: []string{"messages: 5, journaled 6", "message 6 (human) and after are missing"}},
		{name: "a new message", journaled: base[:5], actual: base,
			want: []string{"messages: 6, journaled 5", "message 6 (human) is new"}},
		{name: "long, at its end", journaled: long, actual: changed(long, len(long)-1, "Observation: other"),
			want: []string{"message 42 (human) differs; messages 7 to 41 were journaled by count only and may differ too"}},
		{name: "long, in its middle", journaled: long, actual: changed(long, 20, "Thought: other"),
			want: []string{"messages 1 to 6 and 37 to 42 are as journaled; one of messages 7 to 36 (journaled by count only) differs"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			m := &echoModel{}
			ctx, r := session(t, s, "t")
			_, err := askMsgs(ctx, r, m, "", tc.journaled, 0.5)
			require.NoError(t, err)
			ctx, r = session(t, s, "t")
			temp := 0.5
			if tc.temp != "" {
				temp = 0.9
			}
			_, err = askMsgs(ctx, r, m, tc.role, tc.actual, temp)
			var de *journal.DivergedError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, int64(1), de.Seq)
			assert.Contains(t, de.Diff, "journal.KeepRequests", "says how to get a diff")
			for _, w := range tc.want {
				assert.Contains(t, de.Diff, w)
			}
			assert.Contains(t, err.Error(), "resume --from N --as NEW")
			assert.Equal(t, int64(1), m.calls.Load(), "a diverged call is not made")
			t.Log(de.Diff)
		})
	}
}

// oldDigest is how journals have always digested a request: the SHA-256
// of each part preceded by its length (8 bytes, little-endian).
func oldDigest(parts ...[]byte) string {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		binary.LittleEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// oldModelRequest is a model entry's Request as journals wrote it before
// requests were kept as digests: whole, or compacted (Compact) to its role.
type oldModelRequest struct {
	Role      string           `json:"role,omitempty"`
	Request   cassette.Request `json:"request"`
	Compacted bool             `json:"compacted,omitempty"`
}

// oldEntry is a model entry as journals wrote it before requests were
// kept as digests and usage was journaled.
func oldEntry(t *testing.T, role string, msgs []llms.MessageContent, opts []llms.CallOption, reply string, compacted bool) journal.Entry {
	t.Helper()
	body, err := json.Marshal(oldModelRequest{Role: role, Request: cassette.NewRequest(msgs, opts)})
	require.NoError(t, err)
	sum := oldDigest([]byte(journal.KindModel), body)
	if compacted {
		body, err = json.Marshal(oldModelRequest{Role: role, Compacted: true})
		require.NoError(t, err)
	}
	resp, err := json.Marshal(cassette.NewResponse(llmtest.TextResponse(reply)))
	require.NoError(t, err)
	return journal.Entry{Kind: journal.KindModel, Scope: journal.NodeScope(1, "act"), Node: "act", Digest: sum, Request: body, Response: resp}
}

// Journals written before requests were kept as digests — whole
// requests, or compacted ones — still replay, and a diverged call of a
// whole one is still shown as a diff.
func TestJournalsOfWholeRequestsStillReplay(t *testing.T) {
	opts := []llms.CallOption{llms.WithTemperature(0.5)}
	for _, compacted := range []bool{false, true} {
		t.Run(fmt.Sprint("compacted=", compacted), func(t *testing.T) {
			entries := []journal.Entry{
				oldEntry(t, "", conversation(1), opts, "first", compacted),
				oldEntry(t, "plan", conversation(2), opts, "second", compacted),
			}
			store, err := memstore.Load(context.Background(), journal.Thread{Name: "old", Pipeline: "p"}, entries)
			require.NoError(t, err)
			m := &echoModel{}
			ctx, r := session(t, store, "old")
			got, err := r.Model(ctx, "act", "", conversation(1), opts, m.call("x"))
			require.NoError(t, err)
			assert.Equal(t, "first", got.Choices[0].Content)
			_, err = r.Model(ctx, "act", "plan", conversation(3), opts, m.call("x"))
			require.ErrorIs(t, err, journal.ErrDiverged)
			if compacted {
				assert.Contains(t, err.Error(), "compacted to its digest")
			} else {
				assert.Contains(t, err.Error(), "+++ actual call")
				assert.Contains(t, err.Error(), "Observation: result 2")
			}
			got, err = r.Model(ctx, "act", "plan", conversation(2), opts, m.call("x"))
			require.NoError(t, err)
			assert.Equal(t, "second", got.Choices[0].Content)
			assert.Zero(t, m.calls.Load())
		})
	}
}

// countMeter measures a call as one token per message and per reply
// choice, counting how often it measured.
type countMeter struct {
	mu sync.Mutex
	n  int
}

func (c *countMeter) Measure(msgs []llms.MessageContent, resp *llms.ContentResponse) (int, int, bool) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return len(msgs), len(resp.Choices), true
}

func (c *countMeter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// flatPricer prices a token at a cent.
type flatPricer struct{}

func (flatPricer) Cost(p, c int) (float64, bool) { return float64(p+c) / 100, true }

// hookRun is an llm.Run whose hooks are a session's.
type hookRun struct{ set *hooks.Set }

func (hookRun) TaskID() string      { return "t" }
func (h hookRun) Hooks() *hooks.Set { return h.set }

// runOf is a run whose hooks are usageSpy and r.
func runOf(r *journal.Run) hookRun { return hookRun{set: hooks.NewSet(usageSpy{}, r)} }

// usagesOf returns the list usageSpy appends to in ctx.
func usagesOf(ctx context.Context) *[]hooks.Usage {
	u, _ := ctx.Value(usageKey{}).(*[]hooks.Usage)
	return u
}

type usageKey struct{}

// usageSpy is a ModelHook that keeps each call's usage in its context's
// list.
type usageSpy struct{}

func (usageSpy) WrapModel(next hooks.ModelFunc) hooks.ModelFunc {
	return func(ctx context.Context, call *hooks.ModelCall) (*hooks.ModelResult, error) {
		res, err := next(ctx, call)
		if u := usagesOf(ctx); u != nil && err == nil {
			*u = append(*u, res.Usage)
		}
		return res, err
	}
}

// A journaled call keeps the usage the metering measured, and a resumed
// run answers the replayed call with it: the tokenizer is not run again,
// and the run's usage is the live run's.
func TestReplayedCallsAnswerWithTheirJournaledUsage(t *testing.T) {
	s := newStore(t)
	meter := &countMeter{}
	model := llm.Model{LLM: llmtest.Echo{Prefix: "re: "}, Meter: meter, Pricer: flatPricer{}}
	runCalls := func(r *journal.Run) []hooks.Usage {
		var usages []hooks.Usage
		ctx := context.WithValue(journal.WithScope(journal.WithRun(context.Background(), r), journal.NodeScope(1, "act")), usageKey{}, &usages)
		for i := range 5 {
			_, _, err := model.Call(ctx, runOf(r), llm.CallMeta{Node: "act"}, conversation(i))
			require.NoError(t, err)
		}
		return usages
	}
	_, r := session(t, s, "t")
	live := runCalls(r)
	assert.Equal(t, 5, meter.count(), "each live call is measured once")
	require.Len(t, live, 5)
	assert.Equal(t, hooks.Usage{PromptTokens: 2 + 2*4, CompletionTokens: 1, Estimated: true, CostUSD: 0.11}, live[4])

	es, err := s.Entries(context.Background(), "t")
	require.NoError(t, err)
	u, ok := es[4].Usage()
	require.True(t, ok, "the entry keeps its usage")
	assert.Equal(t, live[4], u)

	_, r = session(t, s, "t")
	replayed := runCalls(r)
	assert.Equal(t, 5, meter.count(), "no replayed call is measured")
	assert.Equal(t, live, replayed)
	got, _, _ := r.Stats()
	assert.Equal(t, 5, got)

	// A journal written before usage was journaled is measured on replay.
	entries := []journal.Entry{oldEntry(t, "", conversation(0), nil, "re: old", false)}
	old, err := memstore.Load(context.Background(), journal.Thread{Name: "old", Pipeline: "p"}, entries)
	require.NoError(t, err)
	_, r = session(t, old, "old")
	var usages []hooks.Usage
	ctx := context.WithValue(journal.WithScope(journal.WithRun(context.Background(), r), journal.NodeScope(1, "act")), usageKey{}, &usages)
	text, _, err := model.Call(ctx, runOf(r), llm.CallMeta{Node: "act"}, conversation(0))
	require.NoError(t, err)
	assert.Equal(t, "re: old", text)
	assert.Equal(t, 6, meter.count(), "measured: the journal has no usage for it")
	require.Len(t, usages, 1)
	assert.Equal(t, 2, usages[0].PromptTokens)
	_, ok = entries[0].Usage()
	assert.False(t, ok)
}

// pagerSpy is a memstore that counts the pages read from it, and fails
// the pages after failAfter (when set) with damage.
type pagerSpy struct {
	*memstore.Store
	mu        sync.Mutex
	pages     int
	entries   int
	failAfter int64
}

func (p *pagerSpy) EntryPage(ctx context.Context, name string, after int64, limit int) ([]journal.Entry, int64, error) {
	p.mu.Lock()
	p.pages++
	p.mu.Unlock()
	if p.failAfter > 0 && after >= p.failAfter {
		return nil, 0, fmt.Errorf("%w: thread %q, entry %d: checksum mismatch", journal.ErrCorrupt, name, after+1)
	}
	return p.Store.EntryPage(ctx, name, after, limit)
}

func (p *pagerSpy) Entries(ctx context.Context, name string) ([]journal.Entry, error) {
	p.mu.Lock()
	p.entries++
	p.mu.Unlock()
	return p.Store.Entries(ctx, name)
}

func (p *pagerSpy) read() (pages, entries int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pages, p.entries
}

// toolCall makes tool call i in ctx's session; ran reports whether it
// ran live.
func toolCall(ctx context.Context, r *journal.Run, i int) (ran bool, err error) {
	_, err = r.Tool(ctx, "act", "calc", fmt.Sprint(i), func(context.Context) (journal.ToolResult, error) {
		ran = true
		return journal.ToolResult{Output: fmt.Sprint("out ", i)}, nil
	})
	return ran, err
}

// pagedJournal returns a store holding thread "t" with n tool calls in
// scope 1:act.
func pagedJournal(t *testing.T, n int) *pagerSpy {
	t.Helper()
	mem := memstore.New()
	ctx, r := session(t, mem, "t")
	for i := range n {
		_, err := toolCall(ctx, r, i)
		require.NoError(t, err)
	}
	return &pagerSpy{Store: mem}
}

// A session reads its journal a page at a time as the run replays it,
// never all at once, and reads it to its end before the first live call.
func TestSessionReadsTheJournalAPageAtATime(t *testing.T) {
	n := 2*journal.PageSize + 10
	spy := pagedJournal(t, n)
	ctx, r := session(t, spy, "t")
	pages, _ := spy.read()
	assert.Equal(t, 1, pages, "Open reads the first page")
	for i := range journal.PageSize {
		ran, err := toolCall(ctx, r, i)
		require.NoError(t, err)
		require.False(t, ran)
	}
	pages, _ = spy.read()
	assert.Equal(t, 1, pages, "the first page answers its calls")
	_, err := toolCall(ctx, r, journal.PageSize)
	require.NoError(t, err)
	pages, _ = spy.read()
	assert.Equal(t, 2, pages, "the next call reads the next page")

	// A live call in another scope waits for the journal's end.
	_, err = r.Tool(journal.WithScope(ctx, journal.NodeScope(2, "other")), "other", "calc", "x", func(context.Context) (journal.ToolResult, error) {
		pages, _ := spy.read()
		assert.Equal(t, 3, pages, "the journal is read to its end before a live call")
		return journal.ToolResult{Output: "y"}, nil
	})
	require.NoError(t, err)
	for i := journal.PageSize + 1; i < n; i++ {
		ran, err := toolCall(ctx, r, i)
		require.NoError(t, err)
		require.False(t, ran, "call %d is replayed", i)
	}
	ran, err := toolCall(ctx, r, n)
	require.NoError(t, err)
	assert.True(t, ran, "the run goes on live after the journal")
	pages, entries := spy.read()
	assert.Equal(t, 3, pages)
	assert.Zero(t, entries, "the session never read the whole journal at once")
	replayed, live, unused := r.Stats()
	assert.Equal(t, [3]int{n, 2, 0}, [3]int{replayed, live, unused})
	assert.Len(t, r.ModelResponses(), 0)
}

// A journal damaged past its first page answers the calls before the
// damage, then fails with ErrCorrupt, and never lets the run make a call
// live.
func TestDamageBeyondTheFirstPageStopsTheRunBeforeAnyLiveCall(t *testing.T) {
	spy := pagedJournal(t, journal.PageSize+10)
	spy.failAfter = journal.PageSize
	ctx, r := session(t, spy, "t")
	ran, err := toolCall(ctx, r, 0)
	require.NoError(t, err)
	assert.False(t, ran)

	ran, err = toolCall(ctx, r, journal.PageSize+3)
	require.ErrorIs(t, err, journal.ErrCorrupt, "the damaged page")
	assert.False(t, ran)
	ran, err = toolCall(journal.WithScope(ctx, journal.NodeScope(2, "other")), r, 99999)
	require.ErrorIs(t, err, journal.ErrCorrupt, "a live call needs the whole journal")
	assert.False(t, ran, "no call is made live")
	ran, err = toolCall(ctx, r, 1)
	require.NoError(t, err, "the entries read before the damage still replay")
	assert.False(t, ran)
}

// All reads a journal as an iterator, from any store.
func TestAllIteratesAPagedJournal(t *testing.T) {
	spy := pagedJournal(t, journal.PageSize+3)
	var seqs []int64
	for e, err := range journal.All(context.Background(), spy, "t") {
		require.NoError(t, err)
		seqs = append(seqs, e.Seq)
	}
	require.Len(t, seqs, journal.PageSize+3)
	assert.Equal(t, int64(journal.PageSize+3), seqs[len(seqs)-1])
	pages, entries := spy.read()
	assert.Equal(t, 2, pages)
	assert.Zero(t, entries)

	spy.failAfter = 1
	var err error
	n := 0
	for _, e := range journal.All(context.Background(), spy, "t") {
		if e != nil {
			err = e
		} else {
			n++
		}
	}
	assert.ErrorIs(t, err, journal.ErrCorrupt)
}

// Compact drops a model entry's shape too: what a workflow carries is the
// smallest entry that replays, with its reply and usage.
func TestCompactDropsTheShape(t *testing.T) {
	s := newStore(t)
	m := &echoModel{}
	ctx, r := session(t, s, "t")
	_, err := askMsgs(ctx, r, m, "plan", conversation(4), 0.5)
	require.NoError(t, err)
	es, err := s.Entries(context.Background(), "t")
	require.NoError(t, err)
	c := journal.Compact(es[0])
	assert.JSONEq(t, `{"role":"plan","compacted":true}`, string(c.Request))
	assert.Equal(t, es[0].Response, c.Response)
	assert.Equal(t, es[0].Digest, c.Digest)
	assert.Equal(t, c, journal.Compact(c), "compacting twice changes nothing")

	ctx, r = session(t, mustLoad(t, []journal.Entry{c}), "c")
	_, err = askMsgs(ctx, r, m, "plan", conversation(4), 0.5)
	require.NoError(t, err)
	assert.Equal(t, int64(1), m.calls.Load(), "replayed by digest")
}
