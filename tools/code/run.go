package code

import (
	"errors"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"

	"go.starlark.net/starlark"
)

// localKey is the thread-local key under which a program's thread keeps
// its *run.
const localKey = "planner/tools/code.run"

// checkEvery is how many steps pass between the checks of the depth and
// memory limits.
const checkEvery = 16

// A stopCause says why a program was stopped before it finished.
type stopCause int32

const (
	causeNone stopCause = iota
	causeSteps
	causeTime
	causeDepth
	causeMemory
	causeContext
)

// errStopped is what a built-in returns once the program has been
// stopped; the run's cause says why.
var errStopped = errors.New("program stopped")

// run is the state of one program's execution.
type run struct {
	cfg    Config
	thread *starlark.Thread
	out    output

	cause    atomic.Int32  // a stopCause; the first one set wins
	stopped  chan struct{} // closed when cause is set
	stopOnce sync.Once

	mem      *gcWatch
	seenGC   uint64
	baseLive uint64
	sample   []metrics.Sample
	ticks    int
}

// liveHeap is the runtime metric of the heap's live bytes, as of the last
// garbage collection.
const liveHeap = "/gc/heap/live:bytes"

func newRun(cfg Config) *run {
	r := &run{cfg: cfg, stopped: make(chan struct{}), out: output{w: limitWriter{max: cfg.MaxOutput}}}
	r.sample = []metrics.Sample{{Name: liveHeap}}
	metrics.Read(r.sample)
	if r.sample[0].Value.Kind() == metrics.KindUint64 {
		r.baseLive = r.sample[0].Value.Uint64()
		r.mem = watchGC()
		r.seenGC = r.mem.cycles.Load()
	}
	return r
}

// runOf returns the run of a program's thread, or nil.
func runOf(thread *starlark.Thread) *run {
	r, _ := thread.Local(localKey).(*run)
	return r
}

// stop stops the program for cause; only the first cause counts. It is
// safe to call from any goroutine.
func (r *run) stop(cause stopCause) {
	if r.cause.CompareAndSwap(int32(causeNone), int32(cause)) {
		r.thread.Cancel(cause.String())
		r.stopOnce.Do(func() { close(r.stopped) })
	}
}

// stopCause returns why the program was stopped, or causeNone.
func (r *run) stopCause() stopCause { return stopCause(r.cause.Load()) }

// done releases the run's resources.
func (r *run) done() {
	if r.mem != nil {
		r.mem.stop()
	}
}

// onMaxSteps is the thread's OnMaxSteps hook, which the interpreter calls
// every checkEvery steps: it enforces the step, depth and memory limits
// and sets the next checkpoint.
func (r *run) onMaxSteps(thread *starlark.Thread) {
	switch {
	case thread.Steps >= r.cfg.MaxSteps:
		r.stop(causeSteps)
		return
	case thread.CallStackDepth() > r.cfg.MaxDepth:
		r.stop(causeDepth)
		return
	}
	r.checkMemory()
	thread.SetMaxExecutionSteps(min(thread.Steps+checkEvery, r.cfg.MaxSteps))
}

// tick counts a step of a built-in that loops over its arguments (sum,
// map, filter), so that such loops count against the step limit and stop
// when the program is stopped.
func (r *run) tick(thread *starlark.Thread) error {
	if r == nil {
		return nil
	}
	thread.Steps++
	if thread.Steps >= r.cfg.MaxSteps {
		r.stop(causeSteps)
	}
	if r.ticks++; r.ticks%checkEvery == 0 {
		r.checkMemory()
	}
	if r.stopCause() != causeNone {
		return errStopped
	}
	return nil
}

// checkMemory stops the program when, after a garbage collection since
// the last check, the live heap has grown by more than MaxMemory.
func (r *run) checkMemory() {
	if r.mem == nil {
		return
	}
	c := r.mem.cycles.Load()
	if c == r.seenGC {
		return
	}
	r.seenGC = c
	metrics.Read(r.sample)
	if live := r.sample[0].Value.Uint64(); live > r.baseLive && live-r.baseLive > uint64(r.cfg.MaxMemory) {
		r.stop(causeMemory)
	}
}

// String names the cause, as the reason given to starlark's Cancel.
func (c stopCause) String() string {
	switch c {
	case causeSteps:
		return "step limit"
	case causeTime:
		return "time limit"
	case causeDepth:
		return "depth limit"
	case causeMemory:
		return "memory limit"
	case causeContext:
		return "cancelled"
	}
	return "none"
}

// output is what a program printed, capped at its writer's max bytes.
// The program's goroutine writes it; the caller reads it once the
// program ends, or under the lock when it gave up waiting.
type output struct {
	mu sync.Mutex
	w  limitWriter
}

// print writes args as print does, separated by sep and followed by end.
func (o *output) print(args starlark.Tuple, sep, end string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.w.full {
		return
	}
	rd := renderer{w: &o.w}
	for i, a := range args {
		if i > 0 {
			o.w.WriteString(sep)
		}
		rd.printed(a)
	}
	o.w.WriteString(end)
}

// snapshot returns the text so far and whether some was dropped.
func (o *output) snapshot() (string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return string(o.w.buf), o.w.full
}

// gcWatch counts garbage collections while a program runs, so that the
// memory check reads the heap metric only after one (reading it costs
// about a microsecond, too much for every few steps). A sentinel object
// with a cleanup is made unreachable at once; each collection runs the
// cleanup, which counts and arms a new sentinel until stopped.
type gcWatch struct {
	cycles  atomic.Uint64
	stopped atomic.Bool
}

// gcSentinel is an object whose collection marks a garbage collection;
// its pointer field keeps it out of the tiny allocator, whose objects are
// freed in batches.
type gcSentinel struct{ _ *int }

func watchGC() *gcWatch {
	w := &gcWatch{}
	w.arm()
	return w
}

func (w *gcWatch) arm() {
	runtime.AddCleanup(new(gcSentinel), (*gcWatch).collected, w)
}

func (w *gcWatch) collected() {
	if w.stopped.Load() {
		return
	}
	w.cycles.Add(1)
	w.arm()
}

func (w *gcWatch) stop() { w.stopped.Store(true) }
