package compare

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
)

// Fault kinds: what the engine met during a run and worked around, read
// from the run's trace events by FaultKind. A halted ReAct loop whose
// finalizer answered counts under its failure kind (state.FailureLoop,
// state.FailureBudget, state.FailureParse).
const (
	// FaultParse: a reply that could not be parsed (a ReAct step, a plan,
	// a re-plan decision) was fed back to the model with the error
	// (trace.KindParseError).
	FaultParse = state.FailureParse
	// FaultEmptyReply: an empty reply was asked for again (guard
	// "empty_reply").
	FaultEmptyReply = "empty_reply"
	// FaultInventedObservation: an observation the model wrote itself was
	// cut off (guard "invented_observation").
	FaultInventedObservation = "invented_observation"
	// FaultUnknownTool: a call of a tool the loop does not have was
	// answered with the tools it has (guard nodekind.GuardUnknownTool).
	FaultUnknownTool = nodekind.GuardUnknownTool
	// FaultRepeat: a repeated call was answered by the repeat guard
	// instead of running again (guard "repeat").
	FaultRepeat = "repeat"
	// FaultToolError: a tool call failed and its error was shown to the
	// model (guard nodekind.GuardToolError).
	FaultToolError = nodekind.GuardToolError
	// FaultRejected: a plan or re-plan decision that broke the plan rules
	// was sent back to the model (a planner's or replanner's guard).
	FaultRejected = "rejected"
	// FaultRetry: a failed model call (HTTP 429, 5xx, a timeout) was
	// retried by the provider middleware (trace.KindRetry).
	FaultRetry = "retry"
	// FaultProvider: a model call failed after its retries and the run
	// went on without it.
	FaultProvider = state.FailureProvider
	// FaultError: a node failed with another error and the run went on.
	FaultError = state.FailureError
)

// FaultLegend explains the fault kinds reports count under recovered.
const FaultLegend = "Recovered counts the correct runs that met each kind of fault on the way (a run counts once per kind; " +
	"recovery_events in report.json counts the events): parse (a reply that could not be parsed was fed back), " +
	"empty_reply (an empty reply was asked for again), invented_observation (an observation the model wrote itself was cut), " +
	"unknown_tool (a call of a missing tool was answered with the tools there are), repeat (a repeated call was answered " +
	"by the repeat guard), tool_error (a failed tool call's error was shown to the model), rejected (an invalid plan or " +
	"re-plan decision was sent back), retry (a failed model call was retried), provider (a model call failed for good and " +
	"the run went on), error (a node failed and the run went on), loop or budget (a loop was stopped and its finalizer " +
	"answered), and the engine's failure kinds of plan steps that failed while the run still answered correctly."

// haltKinds are the failure kinds a guard event's "failure" may carry:
// the loop stopped with that failure and, where set up to, its finalizer
// answered from the work so far.
var haltKinds = map[string]bool{
	state.FailureParse: true, state.FailureLoop: true, state.FailureBudget: true, state.FailureTool: true,
	state.FailureProvider: true, state.FailureTimeout: true, state.FailurePlan: true,
}

// FaultKind says which fault kind an event reports, or "" for an event
// that reports none (routine guards such as observation truncation and
// prompt compaction included).
func FaultKind(e trace.Event) string {
	switch e.Kind {
	case trace.KindParseError:
		return FaultParse
	case trace.KindRetry:
		return FaultRetry
	case trace.KindError:
		if strings.HasPrefix(e.Text, llm.ErrModel.Error()) {
			return FaultProvider
		}
		return FaultError
	case trace.KindGuard:
		if f, ok := e.Data["failure"].(string); ok {
			if haltKinds[f] {
				return f
			}
			return ""
		}
		g, ok := e.Data["guard"].(string)
		if !ok {
			return FaultRejected
		}
		switch g {
		case FaultEmptyReply, FaultInventedObservation, FaultUnknownTool, FaultRepeat, FaultToolError:
			return g
		}
	}
	return ""
}

// faultCounter is a trace sink that counts a run's events by fault kind.
// It is safe for concurrent use.
type faultCounter struct {
	mu sync.Mutex
	n  map[string]int
}

// Emit counts e when it reports a fault.
func (f *faultCounter) Emit(e trace.Event) {
	kind := FaultKind(e)
	if kind == "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == nil {
		f.n = map[string]int{}
	}
	f.n[kind]++
}

// counts returns a copy of the counts; nil when there were none.
func (f *faultCounter) counts() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.n)
}

// traceFile appends whole runs' JSONL traces to one file per config and
// model, each run's events on consecutive lines, so that a comparison of
// thousands of runs writes a handful of files instead of one per run. It
// is safe for concurrent use.
type traceFile struct {
	mu    sync.Mutex
	f     *os.File
	w     *bufio.Writer
	rel   string // slash-separated path relative to the output folder
	lines int    // lines in the file, written or buffered
	err   error  // first write error; later runs are then not traced
}

// openTraceFile opens (creating or appending to) rel, a path relative to
// outDir, and counts the lines already there, so that new runs' line
// numbers are right after a resume.
func openTraceFile(outDir, rel string) (*traceFile, error) {
	path := filepath.Join(outDir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("compare: creating the trace folder: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("compare: opening the trace file: %w", err)
	}
	lines, last, err := countLines(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("compare: reading %s: %w", path, err)
	}
	t := &traceFile{f: f, w: bufio.NewWriterSize(f, 64<<10), rel: filepath.ToSlash(rel), lines: lines}
	if last != 0 && last != '\n' {
		// A killed compare left half a line: end it so the next run starts
		// on a line of its own.
		_ = t.w.WriteByte('\n')
		t.lines++
	}
	return t, nil
}

// countLines counts the newline-terminated lines of r and returns its last
// byte (0 when empty).
func countLines(r io.Reader) (int, byte, error) {
	buf := make([]byte, 64<<10)
	lines, last := 0, byte(0)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			lines += bytes.Count(buf[:n], []byte{'\n'})
			last = buf[n-1]
		}
		if errors.Is(err, io.EOF) {
			return lines, last, nil
		}
		if err != nil {
			return 0, 0, err
		}
	}
}

// add appends one run's trace (complete JSONL lines) and returns where it
// is, as "traces/<model>/<config>.jsonl:<first>-<last>" (1-based lines),
// or "" when nothing was written.
func (t *traceFile) add(run []byte) string {
	n := bytes.Count(run, []byte{'\n'})
	if n == 0 {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return ""
	}
	if _, err := t.w.Write(run); err != nil {
		t.err = err
		return ""
	}
	first := t.lines + 1
	t.lines += n
	return fmt.Sprintf("%s:%d-%d", t.rel, first, t.lines)
}

// flush writes buffered traces to the file.
func (t *traceFile) flush() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err == nil {
		t.err = t.w.Flush()
	}
	return t.err
}

// close flushes and closes the file.
func (t *traceFile) close() error {
	err := t.flush()
	return errors.Join(err, t.f.Close())
}

// traceKey names the trace file of one config: its runs with one model.
type traceKey struct {
	config string // the pipeline name
	model  string // the model spec (ModelSpec)
	slug   string // the model spec made safe for a file name (modelSlug)
}

// rel is the file's path relative to the run folder:
// traces/<model>/<config>.jsonl.
func (k traceKey) rel() string {
	return filepath.Join("traces", k.slug, safeName(k.config)+".jsonl")
}

// traceSet holds the trace files of a comparison, one per config and
// model.
type traceSet struct {
	byKey map[traceKey]*traceFile // keyed without the slug
	files []*traceFile
	bufs  sync.Pool // of *bytes.Buffer: see buffer
}

// openTraces opens a trace file per key; keys that map to the same file
// share it.
func openTraces(outDir string, keys []traceKey) (*traceSet, error) {
	ts := &traceSet{byKey: map[traceKey]*traceFile{}}
	byFile := map[string]*traceFile{}
	for _, k := range keys {
		rel := k.rel()
		tf, ok := byFile[rel]
		if !ok {
			var err error
			if tf, err = openTraceFile(outDir, rel); err != nil {
				_ = ts.close()
				return nil, err
			}
			byFile[rel] = tf
			ts.files = append(ts.files, tf)
		}
		ts.byKey[traceKey{config: k.config, model: k.model}] = tf
	}
	return ts, nil
}

// add appends a run's trace to the file of its config and model spec;
// see traceFile.add.
func (ts *traceSet) add(config, model string, run []byte) string {
	if ts == nil {
		return ""
	}
	tf := ts.byKey[traceKey{config: config, model: model}]
	if tf == nil {
		return ""
	}
	return tf.add(run)
}

// flush flushes every file. A nil set does nothing.
func (ts *traceSet) flush() error { return ts.each((*traceFile).flush) }

// close closes every file. A nil set does nothing.
func (ts *traceSet) close() error { return ts.each((*traceFile).close) }

// each calls fn on every file, all of them even when some fail, and joins
// the errors. A nil set does nothing.
func (ts *traceSet) each(fn func(*traceFile) error) error {
	if ts == nil {
		return nil
	}
	var errs []error
	for _, tf := range ts.files {
		errs = append(errs, fn(tf))
	}
	return errors.Join(errs...)
}

// maxPooledTrace bounds the buffers put back in a traceSet's pool, so one
// huge trace does not stay in memory.
const maxPooledTrace = 1 << 20

// traceBuffer is the writer a run's JSONL sink writes to: a pooled buffer
// that release hands back. Writes after release fail instead of reaching
// a buffer another run may be using by then (an event emitted late, by a
// goroutine that outlived its run).
type traceBuffer struct {
	mu   sync.Mutex
	buf  *bytes.Buffer
	pool *sync.Pool
}

// buffer returns an empty buffer for a run's trace, from the set's pool:
// a run's trace is tens of kilobytes, and growing a fresh buffer to that
// size for every run was a good part of a comparison's allocations.
func (ts *traceSet) buffer() *traceBuffer {
	b, _ := ts.bufs.Get().(*bytes.Buffer)
	if b == nil {
		b = new(bytes.Buffer)
	}
	b.Reset()
	return &traceBuffer{buf: b, pool: &ts.bufs}
}

// errTraceReleased is what a write after release returns.
var errTraceReleased = errors.New("compare: the run's trace buffer was released")

// Write appends p, or fails once the buffer is released.
func (t *traceBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.buf == nil {
		return 0, errTraceReleased
	}
	return t.buf.Write(p)
}

// bytes returns the trace written so far; it is valid until release.
func (t *traceBuffer) bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.buf == nil {
		return nil
	}
	return t.buf.Bytes()
}

// release hands the buffer back to the pool; later writes fail.
func (t *traceBuffer) release() {
	t.mu.Lock()
	b := t.buf
	t.buf = nil
	t.mu.Unlock()
	if b != nil && b.Cap() <= maxPooledTrace {
		t.pool.Put(b)
	}
}

// routeCollector notes the way an adaptive config goes in a run
// (Record.Route) from its decision events: the candidate of an autopilot
// node's last check, else a router's last route.
type routeCollector struct {
	mu                sync.Mutex
	candidate, routed string
}

// Emit implements trace.Sink.
func (r *routeCollector) Emit(e trace.Event) {
	if e.Kind != trace.KindDecision || e.Data == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if e.Data["autopilot"] == "check" {
		if c, ok := e.Data["candidate"].(string); ok {
			r.candidate = c
		}
		return
	}
	if rt, ok := e.Data["route"].(string); ok {
		r.routed = rt
	}
}

// route returns the run's route; "" when it took none.
func (r *routeCollector) route() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.candidate != "" {
		return r.candidate
	}
	return r.routed
}
