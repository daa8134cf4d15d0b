// Package journaltest is the conformance suite of journal.Store: Run
// checks, as subtests, everything the journal package promises of a store
// that one process can observe — thread round trips, the sentinel errors,
// sequence numbers, counts, ordering, concurrency and locks, and, for a
// store that reads journals a page at a time (journal.EntryPager), that
// its pages are the journal's. A store's own tests call Run with a
// function that opens a fresh, empty store.
package journaltest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/journal"
)

// tick is how long the suite waits between two operations whose Updated
// times it compares, so that a store with a millisecond clock passes.
const tick = 2 * time.Millisecond

// Run runs the conformance suite against the stores open returns. Each
// subtest calls open once and expects a fresh, empty store; open should
// close the store with t.Cleanup.
func Run(t *testing.T, open func(t *testing.T) journal.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s journal.Store)
	}{
		{"CreateRoundTrip", testCreateRoundTrip},
		{"CreateExists", testCreateExists},
		{"BadNames", testBadNames},
		{"NotFound", testNotFound},
		{"AppendAndEntries", testAppendAndEntries},
		{"Counts", testCounts},
		{"UpdatedAdvances", testUpdatedAdvances},
		{"SetStatus", testSetStatus},
		{"ThreadsOrder", testThreadsOrder},
		{"ConcurrentAppendOneThread", testConcurrentAppendOneThread},
		{"ConcurrentAppendThreads", testConcurrentAppendThreads},
		{"Lock", testLock},
		{"CancelledContext", testCancelledContext},
		{"EntryPages", testEntryPages},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			require.NotNil(t, s, "open returned no store")
			tc.fn(t, s)
		})
	}
}

// create makes a thread with only the required fields.
func create(t *testing.T, s journal.Store, name string) {
	t.Helper()
	require.NoError(t, s.Create(context.Background(), journal.Thread{
		Name: name, Pipeline: "p.yaml", Status: journal.StatusRunning,
	}))
}

// within asserts that got lies in [lo-slack, hi+slack].
func within(t *testing.T, got, lo, hi time.Time, what string) {
	t.Helper()
	const slack = time.Millisecond
	assert.False(t, got.Before(lo.Add(-slack)), "%s %v is before %v", what, got, lo)
	assert.False(t, got.After(hi.Add(slack)), "%s %v is after %v", what, got, hi)
}

func testCreateRoundTrip(t *testing.T, s journal.Store) {
	ctx := context.Background()
	want := journal.Thread{
		Name:     "run-1.a_b",
		Pipeline: "configs/react.yaml",
		Task:     json.RawMessage(`{"id":"t1","question":"Who wrote \"Dune\"? ü","n":[1,2.5]}`),
		Meta:     json.RawMessage(`{"flags":["--llm","sim:noisy"]}`),
		Status:   journal.StatusWaiting,
		Pending:  &journal.Approval{Node: "act", Tool: "shell", Input: "rm -rf /tmp/x"},
		Error:    "waiting for a human",
		Parent:   "run-0",
		ForkedAt: 7,
		// The store sets these; whatever the creator passes is ignored.
		Entries: 5, Steps: 4, ModelCalls: 3, ToolCalls: 2,
		Created: time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC),
		Updated: time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	before := time.Now()
	require.NoError(t, s.Create(ctx, want))
	after := time.Now()

	got, err := s.Thread(ctx, want.Name)
	require.NoError(t, err)
	assert.Equal(t, want.Name, got.Name)
	assert.Equal(t, want.Pipeline, got.Pipeline)
	assert.JSONEq(t, string(want.Task), string(got.Task))
	assert.JSONEq(t, string(want.Meta), string(got.Meta))
	assert.Equal(t, want.Status, got.Status)
	require.NotNil(t, got.Pending)
	assert.Equal(t, *want.Pending, *got.Pending)
	assert.Equal(t, want.Error, got.Error)
	assert.Equal(t, want.Parent, got.Parent)
	assert.Equal(t, want.ForkedAt, got.ForkedAt)
	assert.Zero(t, got.Entries, "Entries count")
	assert.Zero(t, got.Steps, "Steps count")
	assert.Zero(t, got.ModelCalls, "ModelCalls count")
	assert.Zero(t, got.ToolCalls, "ToolCalls count")
	require.False(t, got.Created.IsZero(), "Created")
	require.False(t, got.Updated.IsZero(), "Updated")
	within(t, got.Created, before, after, "Created")
	within(t, got.Updated, before, after, "Updated")
	assert.False(t, got.Updated.Before(got.Created), "Updated %v before Created %v", got.Updated, got.Created)

	// A minimal thread: no task, meta, pending, error or parent.
	create(t, s, "bare")
	bare, err := s.Thread(ctx, "bare")
	require.NoError(t, err)
	assert.Equal(t, "bare", bare.Name)
	assert.Equal(t, "p.yaml", bare.Pipeline)
	assert.Equal(t, journal.StatusRunning, bare.Status)
	assert.Empty(t, bare.Task)
	assert.Empty(t, bare.Meta)
	assert.Nil(t, bare.Pending)
	assert.Empty(t, bare.Error)
	assert.Empty(t, bare.Parent)
	assert.Zero(t, bare.ForkedAt)

	es, err := s.Entries(ctx, "bare")
	require.NoError(t, err, "a thread with no entries has an empty journal")
	assert.Empty(t, es)

	all, err := s.Threads(ctx)
	require.NoError(t, err)
	assert.Len(t, all, 2)
}

func testCreateExists(t *testing.T, s journal.Store) {
	ctx := context.Background()
	create(t, s, "dup")
	err := s.Create(ctx, journal.Thread{Name: "dup", Pipeline: "other.yaml", Status: journal.StatusDone})
	require.ErrorIs(t, err, journal.ErrExists)
	got, err := s.Thread(ctx, "dup")
	require.NoError(t, err)
	assert.Equal(t, "p.yaml", got.Pipeline, "a failed Create leaves the thread alone")
	assert.Equal(t, journal.StatusRunning, got.Status)
}

func testBadNames(t *testing.T, s journal.Store) {
	ctx := context.Background()
	for _, name := range []string{"", "a/b", "../x", strings.Repeat("a", 200), " x", ".hidden", "a b", "a\x00b"} {
		require.False(t, journal.ValidName(name), "the suite's bad name %q is valid", name)
		err := s.Create(ctx, journal.Thread{Name: name, Pipeline: "p.yaml", Status: journal.StatusRunning})
		assert.ErrorIs(t, err, journal.ErrBadName, "Create(%q)", name)
	}
	all, err := s.Threads(ctx)
	require.NoError(t, err)
	assert.Empty(t, all, "no bad name was stored")

	// The longest valid name is fine.
	long := strings.Repeat("b", 128)
	require.True(t, journal.ValidName(long))
	create(t, s, long)
	_, err = s.Thread(ctx, long)
	require.NoError(t, err)

	// A bad name never reaches a lock file either.
	unlock, err := s.Lock(ctx, "../x")
	if err == nil {
		_ = unlock()
	}
	assert.ErrorIs(t, err, journal.ErrBadName, "Lock(%q)", "../x")
}

func testNotFound(t *testing.T, s journal.Store) {
	ctx := context.Background()
	create(t, s, "exists")
	_, err := s.Thread(ctx, "missing")
	assert.ErrorIs(t, err, journal.ErrNotFound, "Thread")
	err = s.SetStatus(ctx, "missing", journal.Update{Status: journal.StatusDone})
	assert.ErrorIs(t, err, journal.ErrNotFound, "SetStatus")
	_, err = s.Append(ctx, "missing", journal.Entry{Kind: journal.KindNode, Request: json.RawMessage(`{}`), Response: json.RawMessage(`{}`)})
	assert.ErrorIs(t, err, journal.ErrNotFound, "Append")
	_, err = s.Entries(ctx, "missing")
	assert.ErrorIs(t, err, journal.ErrNotFound, "Entries")

	all, err := s.Threads(ctx)
	require.NoError(t, err)
	require.Len(t, all, 1, "no operation on a missing thread created one")
	assert.Equal(t, "exists", all[0].Name)
}

func testAppendAndEntries(t *testing.T, s journal.Store) {
	ctx := context.Background()
	create(t, s, "th")
	fixed := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.FixedZone("X", 3600))
	big := strings.Repeat("x", 10_000)
	want := []journal.Entry{
		{Kind: journal.KindNode, Scope: "", Node: "", Digest: "d0",
			Request: json.RawMessage(`{"step":1,"node":"start"}`), Response: json.RawMessage(`{"route":"react"}`)},
		{Kind: journal.KindModel, Scope: "1:react", Node: "react", Digest: strings.Repeat("ab", 32),
			Request:  json.RawMessage(`{"messages":[{"role":"user","content":"hi \u00e9 \"q\""}],"temperature":0}`),
			Response: json.RawMessage(`{"content":"` + big + `","usage":{"prompt":3}}`)},
		{Kind: journal.KindTool, Scope: "1:react/sample.2", Node: "react", Digest: "d2",
			Request: json.RawMessage(`{"tool":"search","input":"x"}`), Response: json.RawMessage(`{"output":"y","error":"","class":""}`),
			Time: fixed},
		{Kind: journal.KindApproval, Scope: "1:react", Node: "react", Digest: "d3",
			Request: json.RawMessage(`{"tool":"shell","input":"ls"}`), Response: json.RawMessage(`{"approved":true,"by":"terminal"}`)},
	}
	before := time.Now()
	for i, e := range want {
		seq, err := s.Append(ctx, "th", e)
		require.NoError(t, err)
		require.Equal(t, int64(i+1), seq, "Append returns the entry's seq")
	}
	after := time.Now()

	got, err := s.Entries(ctx, "th")
	require.NoError(t, err)
	require.Len(t, got, len(want))
	for i, g := range got {
		w := want[i]
		assert.Equal(t, int64(i+1), g.Seq, "entry %d seq", i)
		assert.Equal(t, w.Kind, g.Kind, "entry %d kind", i)
		assert.Equal(t, w.Scope, g.Scope, "entry %d scope", i)
		assert.Equal(t, w.Node, g.Node, "entry %d node", i)
		assert.Equal(t, w.Digest, g.Digest, "entry %d digest", i)
		assert.JSONEq(t, string(w.Request), string(g.Request), "entry %d request", i)
		assert.JSONEq(t, string(w.Response), string(g.Response), "entry %d response", i)
		if w.Time.IsZero() {
			within(t, g.Time, before, after, fmt.Sprintf("entry %d time (set by Append)", i))
		} else {
			assert.WithinDuration(t, w.Time, g.Time, time.Millisecond, "entry %d time (given)", i)
		}
	}

	// Appending after reading continues the sequence.
	seq, err := s.Append(ctx, "th", want[0])
	require.NoError(t, err)
	assert.Equal(t, int64(len(want)+1), seq)
	got, err = s.Entries(ctx, "th")
	require.NoError(t, err)
	assert.Len(t, got, len(want)+1)
}

func testCounts(t *testing.T, s journal.Store) {
	ctx := context.Background()
	create(t, s, "c")
	create(t, s, "other")
	kinds := []journal.Kind{
		journal.KindNode, journal.KindModel, journal.KindModel, journal.KindTool,
		journal.KindNode, journal.KindApproval, journal.KindTool, journal.KindModel, journal.KindNode,
	}
	for i, k := range kinds {
		_, err := s.Append(ctx, "c", journal.Entry{Kind: k, Scope: "1:n", Digest: fmt.Sprint(i),
			Request: json.RawMessage(`{}`), Response: json.RawMessage(`{}`)})
		require.NoError(t, err)
	}
	th, err := s.Thread(ctx, "c")
	require.NoError(t, err)
	assert.Equal(t, int64(9), th.Entries, "Entries")
	assert.Equal(t, int64(3), th.Steps, "Steps (node entries)")
	assert.Equal(t, int64(3), th.ModelCalls, "ModelCalls")
	assert.Equal(t, int64(2), th.ToolCalls, "ToolCalls")

	// The counts Threads reports are the same, and the other thread's stay zero.
	all, err := s.Threads(ctx)
	require.NoError(t, err)
	require.Len(t, all, 2)
	for _, a := range all {
		switch a.Name {
		case "c":
			assert.Equal(t, [4]int64{9, 3, 3, 2}, [4]int64{a.Entries, a.Steps, a.ModelCalls, a.ToolCalls})
		case "other":
			assert.Equal(t, [4]int64{}, [4]int64{a.Entries, a.Steps, a.ModelCalls, a.ToolCalls})
		default:
			t.Errorf("unexpected thread %q", a.Name)
		}
	}
}

func testUpdatedAdvances(t *testing.T, s journal.Store) {
	ctx := context.Background()
	create(t, s, "u")
	th0, err := s.Thread(ctx, "u")
	require.NoError(t, err)

	time.Sleep(tick)
	_, err = s.Append(ctx, "u", journal.Entry{Kind: journal.KindNode, Request: json.RawMessage(`{}`), Response: json.RawMessage(`{}`)})
	require.NoError(t, err)
	th1, err := s.Thread(ctx, "u")
	require.NoError(t, err)
	assert.True(t, th1.Updated.After(th0.Updated), "Append: Updated %v not after %v", th1.Updated, th0.Updated)
	assert.True(t, th1.Created.Equal(th0.Created), "Append changed Created")

	time.Sleep(tick)
	require.NoError(t, s.SetStatus(ctx, "u", journal.Update{Status: journal.StatusDone, Answer: "Paris"}))
	th2, err := s.Thread(ctx, "u")
	require.NoError(t, err)
	assert.Equal(t, "Paris", th2.Answer, "SetStatus keeps a done thread's answer")
	assert.True(t, th2.Updated.After(th1.Updated), "SetStatus: Updated %v not after %v", th2.Updated, th1.Updated)
	assert.True(t, th2.Created.Equal(th0.Created), "SetStatus changed Created")
	assert.False(t, th2.Updated.Before(th2.Created))

	// An entry stamped in the past does not move Updated back.
	_, err = s.Append(ctx, "u", journal.Entry{Kind: journal.KindNode, Time: time.Unix(1000, 0),
		Request: json.RawMessage(`{}`), Response: json.RawMessage(`{}`)})
	require.NoError(t, err)
	th3, err := s.Thread(ctx, "u")
	require.NoError(t, err)
	assert.False(t, th3.Updated.Before(th2.Updated), "Updated went back to %v from %v", th3.Updated, th2.Updated)
}

func testSetStatus(t *testing.T, s journal.Store) {
	ctx := context.Background()
	create(t, s, "s")
	ap := &journal.Approval{Node: "act", Tool: "write_file", Input: `{"path":"a.txt"}`}
	require.NoError(t, s.SetStatus(ctx, "s", journal.Update{Status: journal.StatusWaiting, Pending: ap, Error: "needs approval"}))
	th, err := s.Thread(ctx, "s")
	require.NoError(t, err)
	assert.Equal(t, journal.StatusWaiting, th.Status)
	require.NotNil(t, th.Pending)
	assert.Equal(t, *ap, *th.Pending)
	assert.Equal(t, "needs approval", th.Error)

	require.NoError(t, s.SetStatus(ctx, "s", journal.Update{Status: journal.StatusRunning}))
	th, err = s.Thread(ctx, "s")
	require.NoError(t, err)
	assert.Equal(t, journal.StatusRunning, th.Status)
	assert.Nil(t, th.Pending, "a nil Pending clears it")
	assert.Empty(t, th.Error, "an empty Error clears it")

	require.NoError(t, s.SetStatus(ctx, "s", journal.Update{Status: journal.StatusFailed, Error: "boom: tool crashed"}))
	th, err = s.Thread(ctx, "s")
	require.NoError(t, err)
	assert.Equal(t, journal.StatusFailed, th.Status)
	assert.Equal(t, "boom: tool crashed", th.Error)
	assert.Nil(t, th.Pending)
	assert.Equal(t, "p.yaml", th.Pipeline, "SetStatus leaves other fields alone")
}

func testThreadsOrder(t *testing.T, s journal.Store) {
	ctx := context.Background()
	all, err := s.Threads(ctx)
	require.NoError(t, err)
	assert.Empty(t, all, "a fresh store has no threads")

	names := func() []string {
		t.Helper()
		all, err := s.Threads(ctx)
		require.NoError(t, err)
		out := make([]string, len(all))
		for i, a := range all {
			out[i] = a.Name
		}
		return out
	}
	for _, n := range []string{"a", "b", "c"} {
		create(t, s, n)
		time.Sleep(tick)
	}
	assert.Equal(t, []string{"c", "b", "a"}, names())
	_, err = s.Append(ctx, "a", journal.Entry{Kind: journal.KindNode, Request: json.RawMessage(`{}`), Response: json.RawMessage(`{}`)})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "c", "b"}, names(), "Append makes a thread the most recent")
	time.Sleep(tick)
	require.NoError(t, s.SetStatus(ctx, "b", journal.Update{Status: journal.StatusDone}))
	assert.Equal(t, []string{"b", "a", "c"}, names(), "SetStatus makes a thread the most recent")
}

// payload is the request of an entry the concurrency tests append.
type payload struct {
	Thread string `json:"thread"`
	G      int    `json:"g"`
	I      int    `json:"i"`
}

// appendConcurrently appends n entries to thread from each of g
// goroutines and returns the seq Append returned for each payload.
func appendConcurrently(t *testing.T, s journal.Store, thread string, g, n int) map[payload]int64 {
	t.Helper()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		seqs = map[payload]int64{}
		errs []error
	)
	for gi := range g {
		wg.Go(func() {
			for i := range n {
				p := payload{Thread: thread, G: gi, I: i}
				req, _ := json.Marshal(p)
				seq, err := s.Append(context.Background(), thread, journal.Entry{
					Kind: journal.KindTool, Scope: fmt.Sprintf("1:n/b.%d", gi), Digest: fmt.Sprint(gi, ".", i),
					Request: req, Response: json.RawMessage(`{"output":"ok"}`),
				})
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					seqs[p] = seq
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Empty(t, errs, "concurrent Append failed")
	return seqs
}

// checkConcurrent checks thread's journal against the seqs Append returned.
func checkConcurrent(t *testing.T, s journal.Store, thread string, g, n int, seqs map[payload]int64) {
	t.Helper()
	total := g * n
	require.Len(t, seqs, total)
	seen := make(map[int64]bool, total)
	for p, seq := range seqs {
		require.False(t, seen[seq], "seq %d returned twice (again for %+v)", seq, p)
		require.True(t, seq >= 1 && seq <= int64(total), "seq %d out of 1..%d", seq, total)
		seen[seq] = true
	}

	es, err := s.Entries(context.Background(), thread)
	require.NoError(t, err)
	require.Len(t, es, total)
	last := make(map[int]int, g) // goroutine -> last i seen
	for gi := range g {
		last[gi] = -1
	}
	for i, e := range es {
		require.Equal(t, int64(i+1), e.Seq, "entries run 1..n without gaps")
		var p payload
		require.NoError(t, json.Unmarshal(e.Request, &p), "entry %d request", e.Seq)
		require.Equal(t, thread, p.Thread, "entry %d belongs to another thread", e.Seq)
		require.Equal(t, seqs[p], e.Seq, "Append returned %d for %+v, stored at %d", seqs[p], p, e.Seq)
		require.Equal(t, last[p.G]+1, p.I, "goroutine %d's entries out of order at seq %d", p.G, e.Seq)
		last[p.G] = p.I
	}
	th, err := s.Thread(context.Background(), thread)
	require.NoError(t, err)
	assert.Equal(t, int64(total), th.Entries)
	assert.Equal(t, int64(total), th.ToolCalls)
}

func testConcurrentAppendOneThread(t *testing.T, s journal.Store) {
	create(t, s, "busy")
	const g, n = 16, 20
	seqs := appendConcurrently(t, s, "busy", g, n)
	checkConcurrent(t, s, "busy", g, n, seqs)
}

func testConcurrentAppendThreads(t *testing.T, s journal.Store) {
	const threads, g, n = 8, 2, 10
	for i := range threads {
		create(t, s, fmt.Sprintf("t%d", i))
	}
	var wg sync.WaitGroup
	results := make([]map[payload]int64, threads)
	for i := range threads {
		wg.Go(func() { results[i] = appendConcurrently(t, s, fmt.Sprintf("t%d", i), g, n) })
	}
	wg.Wait()
	for i := range threads {
		checkConcurrent(t, s, fmt.Sprintf("t%d", i), g, n, results[i])
	}
}

func testLock(t *testing.T, s journal.Store) {
	ctx := context.Background()
	create(t, s, "alpha")
	create(t, s, "beta")

	unlockA, err := s.Lock(ctx, "alpha")
	require.NoError(t, err)
	require.NotNil(t, unlockA)

	_, err = s.Lock(ctx, "alpha")
	require.ErrorIs(t, err, journal.ErrLocked, "a second Lock while the first is held")
	assert.Contains(t, err.Error(), "alpha", "the error names the thread")

	unlockB, err := s.Lock(ctx, "beta")
	require.NoError(t, err, "locks of different threads are independent")

	// Holding a lock does not stop other operations on the thread.
	_, err = s.Append(ctx, "alpha", journal.Entry{Kind: journal.KindNode, Request: json.RawMessage(`{}`), Response: json.RawMessage(`{}`)})
	require.NoError(t, err)

	require.NoError(t, unlockA())
	unlockA2, err := s.Lock(ctx, "alpha")
	require.NoError(t, err, "the lock can be taken again after unlock")

	_, err = s.Lock(ctx, "beta")
	require.ErrorIs(t, err, journal.ErrLocked, "beta is still held")

	require.NoError(t, unlockA2())
	require.NoError(t, unlockB())
	unlockB2, err := s.Lock(ctx, "beta")
	require.NoError(t, err)
	require.NoError(t, unlockB2())
}

func testCancelledContext(t *testing.T, s journal.Store) {
	create(t, s, "x")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ok := json.RawMessage(`{}`)

	err := s.Create(ctx, journal.Thread{Name: "y", Pipeline: "p.yaml", Status: journal.StatusRunning})
	assert.Error(t, err, "Create")
	_, err = s.Thread(ctx, "x")
	assert.Error(t, err, "Thread")
	_, err = s.Threads(ctx)
	assert.Error(t, err, "Threads")
	err = s.SetStatus(ctx, "x", journal.Update{Status: journal.StatusDone})
	assert.Error(t, err, "SetStatus")
	_, err = s.Append(ctx, "x", journal.Entry{Kind: journal.KindNode, Request: ok, Response: ok})
	assert.Error(t, err, "Append")
	_, err = s.Entries(ctx, "x")
	assert.Error(t, err, "Entries")
	unlock, err := s.Lock(ctx, "x")
	if err == nil {
		_ = unlock()
	}
	assert.Error(t, err, "Lock")
}

// testEntryPages checks a journal.EntryPager's pages against Entries, and
// journal.All against both (All reads any store).
func testEntryPages(t *testing.T, s journal.Store) {
	ctx := context.Background()
	create(t, s, "th")
	const n = 23
	for i := range n {
		_, err := s.Append(ctx, "th", journal.Entry{Kind: journal.KindTool, Scope: "1:a", Node: "a", Digest: fmt.Sprint("d", i),
			Request: json.RawMessage(fmt.Sprintf(`{"tool":"t","input":"%d"}`, i)), Response: json.RawMessage(`{"output":"o"}`)})
		require.NoError(t, err)
	}
	whole, err := s.Entries(ctx, "th")
	require.NoError(t, err)
	require.Len(t, whole, n)

	var all []journal.Entry
	for e, err := range journal.All(ctx, s, "th") {
		require.NoError(t, err)
		all = append(all, e)
	}
	assert.Equal(t, whole, all, "All yields the journal")
	for _, err := range journal.All(ctx, s, "missing") {
		assert.ErrorIs(t, err, journal.ErrNotFound, "All of a missing thread")
	}

	p, ok := s.(journal.EntryPager)
	if !ok {
		t.Skip("the store is not a journal.EntryPager")
	}
	for _, limit := range []int{1, 5, n, n + 10} {
		var got []journal.Entry
		for after := int64(0); after < n; {
			page, total, err := p.EntryPage(ctx, "th", after, limit)
			require.NoError(t, err, "page after %d, limit %d", after, limit)
			assert.Equal(t, int64(n), total, "the journal's count")
			require.Equal(t, min(limit, n-int(after)), len(page), "page after %d, limit %d: a full page unless at the end", after, limit)
			got = append(got, page...)
			after += int64(len(page))
		}
		assert.Equal(t, whole, got, "pages of %d are the journal", limit)
	}
	page, total, err := p.EntryPage(ctx, "th", n, 10)
	require.NoError(t, err)
	assert.Empty(t, page, "no page past the end")
	assert.Equal(t, int64(n), total)

	create(t, s, "empty")
	page, total, err = p.EntryPage(ctx, "empty", 0, 10)
	require.NoError(t, err)
	assert.Empty(t, page)
	assert.Zero(t, total)
	_, _, err = p.EntryPage(ctx, "missing", 0, 10)
	assert.ErrorIs(t, err, journal.ErrNotFound, "EntryPage of a missing thread")

	// A page's entries are the caller's: changing them changes nothing
	// stored.
	page, _, err = p.EntryPage(ctx, "th", 0, 1)
	require.NoError(t, err)
	page[0].Request[0] = 'X'
	again, _, err := p.EntryPage(ctx, "th", 0, 1)
	require.NoError(t, err)
	assert.Equal(t, whole[0].Request, again[0].Request)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, _, err = p.EntryPage(cancelled, "th", 0, 10)
	assert.Error(t, err, "EntryPage with a cancelled context")
}
