package server

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/pipeline"
)

// maxChecked bounds the configs the cache remembers as loadable without
// keeping their pipeline (those whose model cannot be shared, see
// pipeCache): a few hundred bytes each.
const maxChecked = 1024

// pipeKey identifies a loaded pipeline: the config file, its content, and
// the load options of the run (which change what is built).
type pipeKey struct {
	path     string
	sum      [sha256.Size]byte
	llm      string
	maxSteps int
	timeout  time.Duration
}

// pipeEntry is one key of the cache.
type pipeEntry struct {
	key   pipeKey
	ready chan struct{} // closed once the first load ended
	err   error         // the first load's error (the entry is then dropped)
	// shared says the pipeline's models can serve several runs at once;
	// p is then the pipeline they share. An entry that is not shared
	// holds no pipeline: it remembers that the config loads.
	shared bool
	p      *planner.Pipeline
	refs   int           // leases out, and requests waiting for the load
	since  time.Time     // when refs last dropped to 0
	elem   *list.Element // in idle or checked while refs is 0
}

// pipeCache keeps the pipelines the server's runs use, per config file
// and content (a SHA-256 of the file) and load options, so that runs of
// the same config share one loaded pipeline (its models, its tools: search
// indexes, MCP sessions, connection pools) instead of loading their own.
// A pipeline is safe for concurrent runs; loads of the same key while one
// is in flight wait for it. A pipeline no lease holds is idle: it stays
// for the next run until it has been idle for ttl or more than maxIdle
// pipelines are idle (the least recently used goes first), and is then
// closed.
//
// A pipeline whose models keep state between calls (scripted or replayed
// models, which play their script or cassette in order) is not shared:
// each run loads its own, and the cache only remembers that the config
// loads, so that starting a run need not load it.
type pipeCache struct {
	engine  *planner.Engine
	ctx     context.Context // the server's: shared loads outlive the request that started them
	maxIdle int
	ttl     time.Duration

	mu      sync.Mutex
	entries map[pipeKey]*pipeEntry
	idle    *list.List // shared entries with refs 0, least recently used first
	checked *list.List // entries that are not shared, with refs 0, oldest first
	closed  bool

	loads atomic.Int64 // pipelines loaded, shared or not
	// nested knows which pipeline files each config runs (see nestedMemo).
	nested nestedMemo
}

func newPipeCache(ctx context.Context, e *planner.Engine, maxIdle int, ttl time.Duration) *pipeCache {
	c := &pipeCache{engine: e, ctx: ctx, maxIdle: maxIdle, ttl: ttl, entries: map[pipeKey]*pipeEntry{}, idle: list.New(), checked: list.New()}
	go c.janitor()
	return c
}

// lease is a pipeline a run uses. A shared one goes back to the cache with
// release; a private one (shared false) belongs to the run, which closes
// or parks it.
type lease struct {
	p       *planner.Pipeline
	shared  bool
	release func()
}

// readConfig reads a config file for the cache, as config.Load reports a
// file it cannot read.
func readConfig(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, &config.Error{File: path, Msg: err.Error(), Err: fmt.Errorf("%w: %w", config.ErrInvalid, err)}
	}
	return raw, nil
}

// loadOptions are the load options of a run's settings.
func loadOptions(m threadMeta) []planner.LoadOption {
	var opts []planner.LoadOption
	if m.LLM != "" {
		opts = append(opts, planner.WithLLM(m.LLM))
	}
	if m.MaxSteps > 0 {
		opts = append(opts, planner.WithMaxSteps(m.MaxSteps))
	}
	if m.Timeout != 0 {
		opts = append(opts, planner.WithTimeout(m.Timeout))
	}
	return opts
}

// check makes sure the pipeline of a run's settings loads, without keeping
// it for the run: the first check of a config (and content) loads it,
// later ones answer at once. A shared pipeline stays in the cache, idle,
// for the run.
func (c *pipeCache) check(ctx context.Context, m threadMeta) error {
	l, err := c.get(ctx, m, false)
	if err == nil && l.release != nil {
		l.release()
	}
	return err
}

// acquire returns the pipeline of a run's settings: the shared one, loaded
// now or earlier, or a private one loaded now.
func (c *pipeCache) acquire(ctx context.Context, m threadMeta) (lease, error) {
	return c.get(ctx, m, true)
}

func (c *pipeCache) get(ctx context.Context, m threadMeta, keep bool) (lease, error) {
	raw, err := readConfig(m.Config)
	if err != nil {
		return lease{}, err
	}
	key := pipeKey{path: m.Config, sum: c.nested.sum(m.Config, raw), llm: m.LLM, maxSteps: m.MaxSteps, timeout: m.Timeout}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return lease{}, ErrShuttingDown
	}
	e := c.entries[key]
	creator := e == nil
	if creator {
		e = &pipeEntry{key: key, ready: make(chan struct{})}
		c.entries[key] = e
	}
	c.takeLocked(e)
	c.mu.Unlock()

	var private *planner.Pipeline
	if creator {
		private = c.fill(e, raw, m, keep)
	} else {
		select {
		case <-e.ready:
		case <-ctx.Done():
			c.release(e)
			return lease{}, context.Cause(ctx)
		}
	}
	c.mu.Lock()
	err, shared, p := e.err, e.shared, e.p
	c.mu.Unlock()
	if err != nil {
		c.release(e)
		return lease{}, err
	}
	if shared {
		var once sync.Once
		return lease{p: p, shared: true, release: func() { once.Do(func() { c.release(e) }) }}, nil
	}
	c.release(e)
	if !keep || private != nil {
		return lease{p: private}, nil
	}
	p, err = c.loadPrivate(ctx, raw, m)
	return lease{p: p}, err
}

// fill loads e's pipeline the first time: it keeps it when its models can
// be shared, and otherwise returns it to the creator of e when keep is
// set (else closes it). Waiters see the outcome once e.ready is closed.
func (c *pipeCache) fill(e *pipeEntry, raw []byte, m threadMeta, keep bool) (private *planner.Pipeline) {
	shared := false
	cfg, err := config.Parse(m.Config, raw, os.LookupEnv)
	var p *planner.Pipeline
	if err == nil {
		shared = c.sharable(cfg, m)
		c.loads.Add(1)
		p, err = c.engine.LoadConfig(c.ctx, cfg, loadOptions(m)...)
	}
	var closeP *planner.Pipeline
	c.mu.Lock()
	e.err, e.shared = err, shared
	switch {
	case err != nil:
		c.dropLocked(e)
	case c.closed:
		closeP, e.err = p, ErrShuttingDown
		c.dropLocked(e)
	case shared:
		e.p = p
	case keep:
		private = p
	default:
		closeP = p
	}
	close(e.ready)
	c.mu.Unlock()
	if closeP != nil {
		_ = closeP.Close()
	}
	return private
}

// loadPrivate loads a pipeline for one run.
func (c *pipeCache) loadPrivate(ctx context.Context, raw []byte, m threadMeta) (*planner.Pipeline, error) {
	cfg, err := config.Parse(m.Config, raw, os.LookupEnv)
	if err != nil {
		return nil, err
	}
	c.loads.Add(1)
	return c.engine.LoadConfig(ctx, cfg, loadOptions(m)...)
}

// sharable reports whether the pipeline of cfg, loaded with m's model
// spec, may serve several runs at once: none of its models is of a kind
// that plays its replies in order (scripted, replayed).
func (c *pipeCache) sharable(cfg *config.Pipeline, m threadMeta) bool {
	providers := []string{cfg.LLM.Provider}
	if m.LLM != "" {
		spec, err := llm.ParseSpec(m.LLM)
		if err != nil {
			return false
		}
		providers[0] = spec.Provider
	}
	for _, n := range cfg.Nodes {
		if block, ok := n.Settings["llm"].(map[string]any); ok {
			if p, ok := block["provider"].(string); ok && p != "" {
				providers = append(providers, p)
			}
		}
	}
	for _, p := range providers {
		if k := c.engine.ModelKind(p); k == llm.KindScripted || k == llm.KindReplayed {
			return false
		}
	}
	return true
}

// takeLocked takes a reference on e, taking it off the idle lists.
func (c *pipeCache) takeLocked(e *pipeEntry) {
	e.refs++
	c.unlistLocked(e)
}

// listOf is the idle list an entry with no reference waits on: idle for
// a shared entry, checked for one that is not.
func (c *pipeCache) listOf(e *pipeEntry) *list.List {
	if e.shared {
		return c.idle
	}
	return c.checked
}

// unlistLocked takes e off its idle list, if it is on one.
func (c *pipeCache) unlistLocked(e *pipeEntry) {
	if e.elem != nil {
		c.listOf(e).Remove(e.elem)
		e.elem = nil
	}
}

// release drops a reference on e; a shared entry left without any becomes
// idle, and the idle entries past maxIdle are closed.
func (c *pipeCache) release(e *pipeEntry) {
	var evicted []*planner.Pipeline
	c.mu.Lock()
	e.refs--
	ready := false
	select {
	case <-e.ready:
		ready = true
	default:
	}
	if e.refs == 0 && ready && c.entries[e.key] == e && e.err == nil {
		e.since = time.Now()
		e.elem = c.listOf(e).PushBack(e)
	}
	for c.idle.Len() > c.maxIdle {
		evicted = append(evicted, c.evictLocked(c.idle.Front().Value.(*pipeEntry)))
	}
	for c.checked.Len() > maxChecked {
		c.evictLocked(c.checked.Front().Value.(*pipeEntry))
	}
	c.mu.Unlock()
	closeAll(evicted)
}

// evictLocked drops an idle entry and returns its pipeline, to close
// outside the lock.
func (c *pipeCache) evictLocked(e *pipeEntry) *planner.Pipeline {
	c.unlistLocked(e)
	c.dropLocked(e)
	p := e.p
	e.p = nil
	return p
}

// dropLocked forgets e; leases already handed out keep working.
func (c *pipeCache) dropLocked(e *pipeEntry) {
	if c.entries[e.key] == e {
		delete(c.entries, e.key)
	}
}

// closeAll closes pipelines; nil ones are skipped.
func closeAll(ps []*planner.Pipeline) {
	for _, p := range ps {
		if p != nil {
			_ = p.Close()
		}
	}
}

// janitor closes the pipelines idle for ttl, until the server stops.
func (c *pipeCache) janitor() {
	t := time.NewTicker(max(c.ttl/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
			c.expire(time.Now().Add(-c.ttl))
		}
	}
}

// expire closes the entries idle since before cutoff.
func (c *pipeCache) expire(cutoff time.Time) {
	var evicted []*planner.Pipeline
	c.mu.Lock()
	for _, l := range []*list.List{c.idle, c.checked} {
		for l.Len() > 0 {
			e := l.Front().Value.(*pipeEntry)
			if !e.since.Before(cutoff) {
				break
			}
			evicted = append(evicted, c.evictLocked(e))
		}
	}
	c.mu.Unlock()
	closeAll(evicted)
}

// close closes every cached pipeline and refuses new loads; a load in
// flight closes its pipeline when it ends. Runs must have ended.
func (c *pipeCache) close() {
	var ps []*planner.Pipeline
	c.mu.Lock()
	c.closed = true
	for _, e := range c.entries {
		c.unlistLocked(e)
		ps = append(ps, e.p)
		e.p = nil
	}
	c.entries = map[pipeKey]*pipeEntry{}
	c.mu.Unlock()
	closeAll(ps)
}

// stats says how many pipelines are cached (in use or idle) and how many
// were loaded in all.
func (c *pipeCache) stats() (cached int, loads int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if e.p != nil {
			cached++
		}
	}
	return cached, c.loads.Load()
}

// maxNestedMemo bounds nestedMemo's entries; past it the memo starts over.
const maxNestedMemo = 1024

// nestedMemo remembers the nested pipeline files of each config content
// (by its path and content), so that a run's start parses a config's YAML
// for them once per content, not once per run.
type nestedMemo struct {
	mu    sync.Mutex
	files map[[sha256.Size]byte][]string
}

// of returns the nested pipeline files of the config at path holding raw,
// resolved against its folder.
func (m *nestedMemo) of(path string, raw []byte) []string {
	if !bytes.Contains(raw, []byte("pipeline")) {
		return nil
	}
	key := sha256.Sum256(append([]byte(path+"\x00"), raw...))
	m.mu.Lock()
	files, ok := m.files[key]
	m.mu.Unlock()
	if ok {
		return files
	}
	if cfg, err := config.Parse(path, raw, os.LookupEnv); err == nil { // else the load reports it
		for _, n := range cfg.Nodes {
			for _, f := range nestedFiles(n.Settings) {
				if !filepath.IsAbs(f) {
					f = filepath.Join(cfg.Dir(), f)
				}
				files = append(files, f)
			}
		}
	}
	m.mu.Lock()
	if m.files == nil || len(m.files) >= maxNestedMemo {
		m.files = map[[sha256.Size]byte][]string{}
	}
	m.files[key] = files
	m.mu.Unlock()
	return files
}

// sum is the SHA-256 of a config file's content raw and, when it runs
// pipeline files as subgraphs or maps, of theirs (recursively, to the
// nesting limit): editing a nested file changes the key, so a cached
// pipeline is never served with a stale nested pipeline. The nested files
// are read on every call; which they are is parsed once per content.
func (m *nestedMemo) sum(path string, raw []byte) [sha256.Size]byte {
	if !bytes.Contains(raw, []byte("pipeline")) {
		return sha256.Sum256(raw)
	}
	h := sha256.New()
	seen := map[string]bool{}
	var add func(path string, raw []byte, depth int)
	add = func(path string, raw []byte, depth int) {
		h.Write(raw)
		if depth >= pipeline.MaxNesting {
			return
		}
		for _, f := range m.of(path, raw) {
			if seen[f] {
				continue
			}
			seen[f] = true
			fmt.Fprintf(h, "\x00%s\x00", f)
			if b, err := os.ReadFile(f); err == nil {
				add(f, b, depth+1)
			}
		}
	}
	add(path, raw, 0)
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// nestedFiles returns the values of the settings named pipeline (nested
// pipeline files) in settings, at any depth.
func nestedFiles(settings map[string]any) []string {
	var out []string
	for k, v := range settings {
		switch v := v.(type) {
		case string:
			if k == "pipeline" && strings.TrimSpace(v) != "" {
				out = append(out, strings.TrimSpace(v))
			}
		case map[string]any:
			out = append(out, nestedFiles(v)...)
		case []any:
			for _, e := range v {
				if m, ok := e.(map[string]any); ok {
					out = append(out, nestedFiles(m)...)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}
