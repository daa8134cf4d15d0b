package respcache

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/planner-engine/planner/hooks"
	"github.com/planner-engine/planner/llm/cassette"
	"github.com/planner-engine/planner/trace"
	"github.com/tmc/langchaingo/llms"
)

// keyFormat versions the key's encoding: a change of what is keyed
// changes it, so old entries are no longer found rather than answer
// requests they were not made for.
const keyFormat = 1

// RunOption configures the hook of one run (Cache.ForRun).
type RunOption func(*runConfig)

type runConfig struct {
	temperature *float64
	settings    []string
	caller      bool
}

// WithModelTemperature says that the run's model samples at temperature t
// when a call sets no temperature of its own (the pipeline's
// llm.temperature, or the provider adapter's documented default, which
// it sends with every call): such a call is then greedy when t is 0, and
// keyed by t. Default: unknown, and a call that sets no temperature is
// sampled.
func WithModelTemperature(t float64) RunOption {
	return func(c *runConfig) { c.temperature = &t }
}

// WithModelSettings adds settings of the run's model that change its
// replies but that its calls do not carry to every key of the run: the
// endpoint (llm.base_url), the default max tokens, the simulator's
// profile and seed. Models that differ in these then never share
// replies. They are hashed into keys, not stored; never pass a secret.
// Options accumulate. Default: none.
func WithModelSettings(settings ...string) RunOption {
	return func(c *runConfig) { c.settings = append(c.settings, settings...) }
}

// WithCaller adds the caller of each call to its key: the node's id and
// kind, the role, the task id and the plan step (hooks.ModelCall). Use it
// for offline models that answer from the caller's identity rather than
// from the request alone (the simulator, the scripted model). Default:
// off, identical requests from different callers share a reply.
func WithCaller() RunOption {
	return func(c *runConfig) { c.caller = true }
}

// Stats counts what a run's hook did.
type Stats struct {
	// Hits counts the calls answered from the cache; Misses those made
	// live (failed ones included).
	Hits, Misses int
	// SavedUSD is the cost of the hits' calls, as measured when they were
	// live, which was not paid again; SavedTokens their prompt and
	// completion tokens.
	SavedUSD    float64
	SavedTokens int
	// StoreErrors counts live replies that could not be stored (the run
	// went on with them).
	StoreErrors int
	// Skipped counts calls whose request could not be encoded into a key
	// (a NaN option, say): they were made live and not stored.
	Skipped int
}

// RunHook is the cache's hooks.ProviderHook for one run (Cache.ForRun).
// It counts its run's hits; safe for concurrent use.
type RunHook struct {
	c      *Cache
	repeat int
	sink   trace.Sink
	cfg    runConfig
	// mu guards slots and stats.
	mu sync.Mutex
	// slots holds, per request of a sampled call, the occurrences taken
	// by this run.
	slots map[[sha256.Size]byte]*occurrences
	stats Stats
}

// occurrences are the occurrence numbers of one sampled request in a run:
// next is the first never given out, free those given back by failed
// calls (ascending), which are given out first.
type occurrences struct {
	next int
	free []int
}

// ForRun returns the ProviderHook for one run: repeat is the run's repeat
// index (compare --repeats, from 0), which keys its sampled calls; sink,
// when non-nil, receives one trace event per hit (see the package doc).
// Pass it to the run with planner.WithRunHooks.
func (c *Cache) ForRun(repeat int, sink trace.Sink, opts ...RunOption) *RunHook {
	h := &RunHook{c: c, repeat: repeat, sink: sink, slots: map[[sha256.Size]byte]*occurrences{}}
	for _, o := range opts {
		o(&h.cfg)
	}
	return h
}

// Stats returns what the hook did so far.
func (h *RunHook) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stats
}

// WrapProvider implements hooks.ProviderHook: a call is answered from the
// cache when it holds the call's key, else made by next and stored.
func (h *RunHook) WrapProvider(next hooks.ModelFunc) hooks.ModelFunc {
	return func(ctx context.Context, call *hooks.ModelCall) (*hooks.ModelResult, error) {
		k, err := h.key(call)
		if err != nil {
			h.mu.Lock()
			h.stats.Skipped++
			h.mu.Unlock()
			return next(ctx, call)
		}
		release, err := h.c.claim(ctx, k.hex)
		if err != nil {
			h.giveBack(k)
			return nil, err
		}
		defer release()
		if e, ok := h.c.load(k.hex); ok {
			return h.hit(ctx, call, k, e)
		}
		h.mu.Lock()
		h.stats.Misses++
		h.mu.Unlock()
		res, err := next(ctx, call)
		if err != nil || res == nil || res.Response == nil || len(res.Response.Choices) == 0 {
			h.giveBack(k)
			return res, err
		}
		if !res.Measured && call.Measure != nil {
			res.Usage, res.Measured = call.Measure(res.Response), true
		}
		e := entry{Version: FormatVersion, Key: k.hex, Provider: call.Provider, Model: call.Model, Time: time.Now().UTC(),
			Sampled: k.sampled, Repeat: k.repeat, Occurrence: k.occurrence,
			Usage: fromHooks(res.Usage), Response: *cassette.NewResponse(res.Response)}
		if err := h.c.store(e); err != nil {
			h.mu.Lock()
			h.stats.StoreErrors++
			h.mu.Unlock()
		}
		return res, nil
	}
}

// hit answers call with e.
func (h *RunHook) hit(ctx context.Context, call *hooks.ModelCall, k key, e entry) (*hooks.ModelResult, error) {
	resp := e.Response.LLM()
	if err := feed(ctx, call.Options, resp); err != nil {
		h.giveBack(k)
		return nil, fmt.Errorf("respcache: streaming the cached reply: %w", err)
	}
	u := e.Usage.hooks()
	saved := u.PromptTokens + u.CompletionTokens
	h.mu.Lock()
	h.stats.Hits++
	h.stats.SavedUSD += u.CostUSD
	h.stats.SavedTokens += saved
	h.mu.Unlock()
	if h.sink != nil {
		data := map[string]any{"cache": "hit", "key": k.hex[:12], "saved_usd": u.CostUSD, "saved_tokens": saved, "node": call.Node}
		if call.Role != "" {
			data["role"] = call.Role
		}
		h.sink.Emit(trace.Event{Node: call.Node, Kind: trace.KindInfo, Text: "reply from the response cache", Data: data})
	}
	return &hooks.ModelResult{Response: resp, Usage: u, Measured: true}, nil
}

// feed gives the call's streaming functions the cached reply's first
// choice as one chunk, as a provider streams a reply.
func feed(ctx context.Context, opts []llms.CallOption, resp *llms.ContentResponse) error {
	var co llms.CallOptions
	for _, o := range opts {
		o(&co)
	}
	if co.StreamingFunc == nil && co.StreamingReasoningFunc == nil {
		return nil
	}
	ch := resp.Choices[0]
	if fn := co.StreamingFunc; fn != nil && ch.Content != "" {
		if err := fn(ctx, []byte(ch.Content)); err != nil {
			return err
		}
	}
	if fn := co.StreamingReasoningFunc; fn != nil && (ch.ReasoningContent != "" || ch.Content != "") {
		if err := fn(ctx, []byte(ch.ReasoningContent), []byte(ch.Content)); err != nil {
			return err
		}
	}
	return nil
}

// key is a call's key.
type key struct {
	hex string
	// base is the digest of the request alone; for a sampled call,
	// repeat and occurrence complete the key.
	base               [sha256.Size]byte
	sampled            bool
	repeat, occurrence int
}

// keyDoc is what a key is the digest of (with the repeat and occurrence
// of a sampled call).
type keyDoc struct {
	Format   int              `json:"format"`
	Provider string           `json:"provider"`
	Model    string           `json:"model"`
	Request  cassette.Request `json:"request"`
	// Temperature is the temperature the call samples at: its own, else
	// the model's (WithModelTemperature); nil when unknown.
	Temperature *float64   `json:"temperature"`
	Settings    []string   `json:"settings,omitempty"`
	Caller      *callerDoc `json:"caller,omitempty"`
}

type callerDoc struct {
	Node, Kind, Role, TaskID, StepID string
}

// key returns call's key; for a sampled call it takes the call's
// occurrence in the run.
func (h *RunHook) key(call *hooks.ModelCall) (key, error) {
	co := llms.CallOptions{Temperature: math.NaN()}
	for _, o := range call.Options {
		o(&co)
	}
	doc := keyDoc{Format: keyFormat, Provider: call.Provider, Model: call.Model,
		Request: cassette.NewRequest(call.Messages, call.Options), Settings: h.cfg.settings}
	switch {
	case !math.IsNaN(co.Temperature):
		t := co.Temperature
		doc.Temperature = &t
	case h.cfg.temperature != nil:
		doc.Temperature = h.cfg.temperature
	}
	if h.cfg.caller {
		doc.Caller = &callerDoc{Node: call.Node, Kind: call.Kind, Role: call.Role, TaskID: call.TaskID, StepID: call.StepID}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return key{}, fmt.Errorf("respcache: encoding the request: %w", err)
	}
	k := key{base: sha256.Sum256(b), sampled: doc.Temperature == nil || *doc.Temperature != 0}
	if !k.sampled {
		k.hex = hex.EncodeToString(k.base[:])
		return k, nil
	}
	k.repeat, k.occurrence = h.repeat, h.takeOccurrence(k.base)
	var buf [sha256.Size + 1 + 16]byte
	copy(buf[:], k.base[:])
	buf[sha256.Size] = 's'
	binary.BigEndian.PutUint64(buf[sha256.Size+1:], uint64(int64(k.repeat)))
	binary.BigEndian.PutUint64(buf[sha256.Size+9:], uint64(int64(k.occurrence)))
	sum := sha256.Sum256(buf[:])
	k.hex = hex.EncodeToString(sum[:])
	return k, nil
}

// takeOccurrence returns the next occurrence of the sampled request base
// in the run: the smallest given back, else a new one.
func (h *RunHook) takeOccurrence(base [sha256.Size]byte) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	o := h.slots[base]
	if o == nil {
		o = &occurrences{}
		h.slots[base] = o
	}
	if len(o.free) > 0 {
		n := o.free[0]
		o.free = o.free[1:]
		return n
	}
	o.next++
	return o.next - 1
}

// giveBack returns a failed sampled call's occurrence, for the next
// identical request (a retry) to take.
func (h *RunHook) giveBack(k key) {
	if !k.sampled {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	o := h.slots[k.base]
	i, _ := slices.BinarySearch(o.free, k.occurrence)
	o.free = slices.Insert(o.free, i, k.occurrence)
}
