// Package memstore is a journal.Store held in memory: threads and journals
// live as long as the Store value. It suits a run whose journal is kept
// elsewhere — a Temporal workflow's history (package temporal) hands an
// activity the entries so far, the activity runs the thread against a
// memstore and returns what it appended — and tests. Its locks are the
// process's own; nothing survives the process.
package memstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/planner-engine/planner/journal"
)

// Store is an in-memory journal.Store. The zero value is not usable: call
// New. It is safe for concurrent use.
type Store struct {
	mu      sync.Mutex
	threads map[string]*thread
	locks   map[string]bool
}

type thread struct {
	t       journal.Thread
	entries []journal.Entry
}

var (
	_ journal.Store      = (*Store)(nil)
	_ journal.EntryPager = (*Store)(nil)
)

// New returns an empty store.
func New() *Store {
	return &Store{threads: map[string]*thread{}, locks: map[string]bool{}}
}

// now returns the time to stamp on t as Updated: never before its last one,
// and after it, so that every change advances it.
func now(prev time.Time) time.Time {
	n := time.Now()
	if !n.After(prev) {
		n = prev.Add(time.Microsecond)
	}
	return n
}

func clone(b json.RawMessage) json.RawMessage {
	if b == nil {
		return nil
	}
	return slices.Clone(b)
}

func cloneThread(t journal.Thread) journal.Thread {
	t.Task, t.Meta = clone(t.Task), clone(t.Meta)
	if t.Pending != nil {
		p := *t.Pending
		t.Pending = &p
	}
	return t
}

// Create adds a thread with no entries (journal.Store).
func (s *Store) Create(ctx context.Context, t journal.Thread) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memstore: creating thread %q: %w", t.Name, err)
	}
	if err := journal.CheckName(t.Name); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.threads[t.Name]; ok {
		return fmt.Errorf("%w: %q", journal.ErrExists, t.Name)
	}
	t = cloneThread(t)
	t.Entries, t.Steps, t.ModelCalls, t.ToolCalls = 0, 0, 0, 0
	t.Created = time.Now()
	t.Updated = t.Created
	s.threads[t.Name] = &thread{t: t}
	return nil
}

// get returns the named thread; s.mu is held.
func (s *Store) get(name string) (*thread, error) {
	th, ok := s.threads[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", journal.ErrNotFound, name)
	}
	return th, nil
}

// Thread returns the named thread (journal.Store).
func (s *Store) Thread(ctx context.Context, name string) (journal.Thread, error) {
	if err := ctx.Err(); err != nil {
		return journal.Thread{}, fmt.Errorf("memstore: reading thread %q: %w", name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	th, err := s.get(name)
	if err != nil {
		return journal.Thread{}, err
	}
	return cloneThread(th.t), nil
}

// Threads lists every thread, the most recently updated first
// (journal.Store).
func (s *Store) Threads(ctx context.Context) ([]journal.Thread, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memstore: listing threads: %w", err)
	}
	s.mu.Lock()
	out := make([]journal.Thread, 0, len(s.threads))
	for _, th := range s.threads {
		out = append(out, cloneThread(th.t))
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b journal.Thread) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return out, nil
}

// SetStatus applies u to the named thread (journal.Store).
func (s *Store) SetStatus(ctx context.Context, name string, u journal.Update) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memstore: setting the status of thread %q: %w", name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	th, err := s.get(name)
	if err != nil {
		return err
	}
	th.t.Status, th.t.Error, th.t.Pending, th.t.Answer = u.Status, u.Error, nil, u.Answer
	if u.Pending != nil {
		p := *u.Pending
		th.t.Pending = &p
	}
	th.t.Updated = now(th.t.Updated)
	return nil
}

// Append adds e at the end of the named thread's journal and returns its
// Seq (journal.Store).
func (s *Store) Append(ctx context.Context, name string, e journal.Entry) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("memstore: appending to thread %q: %w", name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	th, err := s.get(name)
	if err != nil {
		return 0, err
	}
	e.Seq = int64(len(th.entries)) + 1
	e.Request, e.Response = clone(e.Request), clone(e.Response)
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	th.entries = append(th.entries, e)
	th.t.Entries++
	switch e.Kind {
	case journal.KindNode:
		th.t.Steps++
	case journal.KindModel:
		th.t.ModelCalls++
	case journal.KindTool:
		th.t.ToolCalls++
	}
	th.t.Updated = now(th.t.Updated)
	return e.Seq, nil
}

// Entries returns the named thread's journal in Seq order (journal.Store).
func (s *Store) Entries(ctx context.Context, name string) ([]journal.Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memstore: reading the journal of thread %q: %w", name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	th, err := s.get(name)
	if err != nil {
		return nil, err
	}
	out := make([]journal.Entry, len(th.entries))
	for i, e := range th.entries {
		e.Request, e.Response = clone(e.Request), clone(e.Response)
		out[i] = e
	}
	return out, nil
}

// EntryPage returns up to limit entries of the named thread's journal
// after seq after, and how many it holds (journal.EntryPager).
func (s *Store) EntryPage(ctx context.Context, name string, after int64, limit int) ([]journal.Entry, int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, fmt.Errorf("memstore: reading the journal of thread %q: %w", name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	th, err := s.get(name)
	if err != nil {
		return nil, 0, err
	}
	total := int64(len(th.entries))
	from := min(max(after, 0), total)
	to := min(from+int64(max(limit, 1)), total)
	out := make([]journal.Entry, 0, to-from)
	for _, e := range th.entries[from:to] {
		e.Request, e.Response = clone(e.Request), clone(e.Response)
		out = append(out, e)
	}
	return out, total, nil
}

// Lock takes the named thread's lock in this store (journal.Store).
func (s *Store) Lock(ctx context.Context, name string) (func() error, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memstore: locking thread %q: %w", name, err)
	}
	if err := journal.CheckName(name); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.locks[name] {
		return nil, fmt.Errorf("%w: %q", journal.ErrLocked, name)
	}
	s.locks[name] = true
	var once sync.Once
	return func() error {
		once.Do(func() {
			s.mu.Lock()
			delete(s.locks, name)
			s.mu.Unlock()
		})
		return nil
	}, nil
}

// Load returns a store holding one thread, t, whose journal is entries (in
// order; their Seq are renumbered from 1).
func Load(ctx context.Context, t journal.Thread, entries []journal.Entry) (*Store, error) {
	s := New()
	if err := s.Create(ctx, t); err != nil {
		return nil, err
	}
	for _, e := range entries {
		if _, err := s.Append(ctx, t.Name, e); err != nil {
			return nil, err
		}
	}
	return s, nil
}
