package code

import (
	"errors"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

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
	sample   []metrics.Sample // liveHeap
	inUse    []metrics.Sample // heapInUse
	// ceiling is the heap in use above which the watchdog forces a
	// garbage collection to measure the live heap.
	ceiling uint64
	// began is when the program started; nextPoll is how long after
	// that the heap in use is next read.
	began    time.Time
	nextPoll time.Duration
	ticks    int
}

// Runtime metrics the memory watchdog reads.
const (
	// liveHeap is the heap's live bytes, as of the last garbage
	// collection (about 0.3µs to read).
	liveHeap = "/gc/heap/live:bytes"
	// heapInUse is the bytes of the heap's objects, live or garbage not
	// yet swept (about 1µs to read).
	heapInUse = "/memory/classes/heap/objects:bytes"
)

// pollInterval is how often, at most, the watchdog reads the heap in use
// between collections: often enough that a program allocating as fast as
// memory allows gains only a few megabytes between reads, rarely enough
// that the reads cost under 1% of its time.
const pollInterval = 100 * time.Microsecond

// bigAlloc is the size of a value made in one step above which the
// watchdog reads the heap at once rather than at its next poll.
const bigAlloc = 1 << 20

func newRun(cfg Config) *run {
	r := &run{cfg: cfg, stopped: make(chan struct{}), out: output{w: limitWriter{max: cfg.MaxOutput}}, began: time.Now()}
	r.sample = []metrics.Sample{{Name: liveHeap}}
	r.inUse = []metrics.Sample{{Name: heapInUse}}
	metrics.Read(r.sample)
	metrics.Read(r.inUse)
	if r.sample[0].Value.Kind() == metrics.KindUint64 && r.inUse[0].Value.Kind() == metrics.KindUint64 {
		r.baseLive = r.sample[0].Value.Uint64()
		r.ceiling = r.inUse[0].Value.Uint64() + uint64(cfg.MaxMemory)
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

// checkMemory enforces MaxMemory. The limit is on the live heap's growth
// since the program started, which only a garbage collection measures;
// between collections the heap grows by garbage as well, by as much as
// the live heap (GOGC=100), so waiting for the next collection lets a
// program reach about twice its limit. The watchdog therefore also reads
// the heap in use (live and garbage) every pollInterval, and at once
// after a big allocation (see noteAlloc); when that has grown past the
// ceiling it forces a collection and measures. The ceiling starts at the
// heap in use when the program started plus MaxMemory; after each
// collection it is the live heap then plus a sixteenth of MaxMemory, or
// the starting live heap plus MaxMemory if higher. So the heap in use
// never passes the start plus 17/16 of MaxMemory by more than one step's
// allocation before the program is stopped (a step of a built-in
// allocates at most about three times MaxValueSize), and a program that
// makes garbage but keeps little forces a collection at most once per
// MaxMemory bytes allocated; one that keeps close to MaxMemory, once per
// sixteenth of it.
func (r *run) checkMemory() {
	if r.mem == nil {
		return
	}
	if c := r.mem.cycles.Load(); c != r.seenGC {
		r.seenGC = c
		r.measure()
		return
	}
	if el := time.Since(r.began); el >= r.nextPoll {
		r.nextPoll = el + pollInterval
		r.pollHeap()
	}
}

// pollHeap reads the heap in use and, when it has passed the ceiling,
// forces a garbage collection and measures the live heap.
func (r *run) pollHeap() {
	if r.mem == nil || r.stopCause() != causeNone {
		return
	}
	metrics.Read(r.inUse)
	if r.inUse[0].Value.Uint64() <= r.ceiling {
		return
	}
	runtime.GC()
	r.seenGC = r.mem.cycles.Load()
	r.measure()
}

// measure compares the live heap of the last collection with the start:
// it stops the program when it has grown by more than MaxMemory, and
// otherwise sets the ceiling for the heap in use (see checkMemory).
func (r *run) measure() {
	metrics.Read(r.sample)
	live := r.sample[0].Value.Uint64()
	limit := uint64(r.cfg.MaxMemory)
	if live > r.baseLive && live-r.baseLive > limit {
		r.stop(causeMemory)
		return
	}
	r.ceiling = max(r.baseLive+limit, live+limit/16)
}

// noteAlloc tells the memory watchdog of thread's program that a
// built-in made v in one step: when v is big (bigAlloc), the heap is read
// at once instead of at the next poll.
func noteAlloc(thread *starlark.Thread, v starlark.Value) {
	if approxSize(v) < bigAlloc {
		return
	}
	if r := runOf(thread); r != nil {
		r.pollHeap()
	}
}

// approxSize is a lower bound of the bytes v occupies, not counting
// what its elements hold.
func approxSize(v starlark.Value) int {
	switch v := v.(type) {
	case starlark.String:
		return len(v)
	case starlark.Bytes:
		return len(v)
	case *starlark.List:
		return 16 * v.Len()
	case starlark.Tuple:
		return 16 * len(v)
	case *starlark.Dict:
		return 32 * v.Len()
	case *starlark.Set:
		return 16 * v.Len()
	}
	return 0
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
