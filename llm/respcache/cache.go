package respcache

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/planner-engine/planner/hooks"
	"github.com/planner-engine/planner/llm/cassette"
	"github.com/planner-engine/planner/redact"
)

// FormatVersion is the version of the entry files this package writes. An
// entry of another version is a miss, and is overwritten.
const FormatVersion = 1

// ErrDir reports a cache directory that cannot be used: empty, not a
// directory, or not writable.
var ErrDir = errors.New("respcache: unusable cache directory")

// Cache is a directory of cached replies, shared by many runs and
// processes (see the package doc); safe for concurrent use.
type Cache struct {
	dir   string
	scrub redact.StringScrubber
	// mu guards inflight: the keys whose live call this process is making,
	// each with a channel closed when that call is done.
	mu       sync.Mutex
	inflight map[string]chan struct{}
}

// Option configures a Cache (Open).
type Option func(*Cache)

// WithScrubber scrubs every string of a reply with s before the reply is
// stored (a reply that echoes a key does not put it on disk); share the
// process's scrubber here. Default: a scrubber built by redact.New at
// Open, from the process environment.
func WithScrubber(s redact.StringScrubber) Option {
	return func(c *Cache) { c.scrub = s }
}

// Open returns the cache kept in dir, creating the directory when it does
// not exist. It fails, with an error matching ErrDir, when dir is empty,
// is not a directory or cannot be written.
func Open(dir string, opts ...Option) (*Cache, error) {
	if strings.TrimSpace(dir) == "" {
		return nil, fmt.Errorf("%w: no directory given (pass a directory, such as --cache .planner-cache)", ErrDir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrDir, dir, err)
	}
	if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("%w: %s is a file, not a directory (give a directory path)", ErrDir, abs)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("%w: creating %s: %w (give a directory you can write)", ErrDir, abs, err)
	}
	probe, err := os.CreateTemp(abs, tmpPrefix+"probe-")
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not writable: %w (give a directory you can write)", ErrDir, abs, err)
	}
	name := probe.Name()
	_ = probe.Close()
	_ = os.Remove(name)
	c := &Cache{dir: abs, inflight: map[string]chan struct{}{}}
	for _, o := range opts {
		o(c)
	}
	if c.scrub == nil {
		c.scrub = redact.New()
	}
	return c, nil
}

// Dir returns the cache's directory, as an absolute path.
func (c *Cache) Dir() string { return c.dir }

// tmpPrefix starts the names of files being written; readers never look
// at them.
const tmpPrefix = ".tmp-"

// entry is the content of one entry file.
type entry struct {
	Version  int    `json:"v"`
	Key      string `json:"key"`
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	// Time is when the reply was stored.
	Time time.Time `json:"time"`
	// Sampled is true for a sampled call, whose key holds Repeat and
	// Occurrence.
	Sampled    bool `json:"sampled,omitempty"`
	Repeat     int  `json:"repeat,omitempty"`
	Occurrence int  `json:"occurrence,omitempty"`
	// Usage is the reply's usage, measured when it was live.
	Usage usage `json:"usage"`
	// Response is the reply.
	Response cassette.Response `json:"response"`
}

// usage is the stored form of hooks.Usage.
type usage struct {
	PromptTokens       int     `json:"prompt_tokens"`
	CompletionTokens   int     `json:"completion_tokens"`
	CachedPromptTokens int     `json:"cached_prompt_tokens,omitempty"`
	Estimated          bool    `json:"estimated,omitempty"`
	CostUSD            float64 `json:"cost_usd,omitempty"`
}

func fromHooks(u hooks.Usage) usage {
	return usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, CachedPromptTokens: u.CachedPromptTokens,
		Estimated: u.Estimated, CostUSD: u.CostUSD}
}

func (u usage) hooks() hooks.Usage {
	return hooks.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, CachedPromptTokens: u.CachedPromptTokens,
		Estimated: u.Estimated, CostUSD: u.CostUSD}
}

// path is the file of key (64 hex digits).
func (c *Cache) path(key string) string {
	return filepath.Join(c.dir, key[:2], key+".json")
}

// load returns the entry of key; ok is false when there is none, or when
// the file cannot be read or is not a whole entry of this format for key
// (a miss, which the live reply overwrites).
func (c *Cache) load(key string) (e entry, ok bool) {
	b, err := os.ReadFile(c.path(key))
	if err != nil {
		return entry{}, false
	}
	if err := json.Unmarshal(b, &e); err != nil {
		return entry{}, false
	}
	if e.Version != FormatVersion || e.Key != key || len(e.Response.Choices) == 0 {
		return entry{}, false
	}
	return e, true
}

// store writes e as the entry of e.Key: to a temporary file in the
// entry's folder, renamed into place.
func (c *Cache) store(e entry) (err error) {
	e.Response = redact.Walk(e.Response, c.scrub)
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("respcache: encoding entry %s: %w", e.Key[:12], err)
	}
	path := c.path(e.Key)
	folder := filepath.Dir(path)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return fmt.Errorf("respcache: %w", err)
	}
	f, err := os.CreateTemp(folder, tmpPrefix+e.Key[:12]+"-")
	if err != nil {
		return fmt.Errorf("respcache: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(f.Name())
		}
	}()
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		return fmt.Errorf("respcache: writing entry %s: %w", e.Key[:12], err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("respcache: writing entry %s: %w", e.Key[:12], err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("respcache: %w", err)
	}
	return nil
}

// claim makes this goroutine the one that makes key's live call in this
// process: it waits while another goroutine is making it, then returns
// release, which the caller calls once the call is done and stored. It
// returns ctx's error when ctx ends while waiting.
func (c *Cache) claim(ctx context.Context, key string) (release func(), err error) {
	for {
		c.mu.Lock()
		busy, ok := c.inflight[key]
		if !ok {
			done := make(chan struct{})
			c.inflight[key] = done
			c.mu.Unlock()
			return func() {
				c.mu.Lock()
				delete(c.inflight, key)
				c.mu.Unlock()
				close(done)
			}, nil
		}
		c.mu.Unlock()
		select {
		case <-busy:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
