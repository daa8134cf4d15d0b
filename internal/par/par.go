// Package par runs work concurrently under a concurrency bound and hands
// the results back in a fixed order: Map for a fixed fan-out (n calls,
// results by index), Pool for a scheduler that decides what to start next
// from the results so far. Both respect the context, recover a worker's
// panic into a *PanicError, and never leave a worker running when they
// return (Map) or when the owner has waited for every call (Pool).
//
// The package imports nothing from the rest of the module.
package par

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
)

// ErrPanic marks the error of a worker that panicked; errors.As finds the
// *PanicError with the panic value.
var ErrPanic = errors.New("worker panicked")

// PanicError is a worker's panic turned into an error. Its message holds
// the panic value but never the stack, so it can be shown to users and
// models; Stack is there for logs and traces.
type PanicError struct {
	// Value is the value the worker panicked with.
	Value any
	// Stack is the worker goroutine's stack at the panic.
	Stack []byte
}

// Error implements error.
func (e *PanicError) Error() string { return fmt.Sprintf("%v: %v", ErrPanic, e.Value) }

// Unwrap returns ErrPanic and, when the panic value is an error, that
// error, so errors.Is matches both.
func (e *PanicError) Unwrap() []error {
	if err, ok := e.Value.(error); ok {
		return []error{ErrPanic, err}
	}
	return []error{ErrPanic}
}

// Func is the work for index i. It should return soon after ctx ends.
type Func[T any] func(ctx context.Context, i int) (T, error)

// call runs f(ctx, i), turning a panic into a *PanicError.
func call[T any](ctx context.Context, f Func[T], i int) (v T, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &PanicError{Value: p, Stack: debug.Stack()}
		}
	}()
	return f(ctx, i)
}

// Bound caps how many workers run at once across every MapBound call that
// shares it, for a node whose fan-outs should share one budget of calls in
// flight. A nil *Bound is no bound. It is safe for concurrent use.
//
// A worker must not itself wait for work under the same bound (a nested
// MapBound with the same Bound): with every slot held by waiting workers,
// the nested work could never start.
type Bound struct {
	slots chan struct{}
}

// NewBound returns a bound of limit workers at once; limit <= 0 returns
// nil, no bound.
func NewBound(limit int) *Bound {
	if limit <= 0 {
		return nil
	}
	return &Bound{slots: make(chan struct{}, limit)}
}

// Limit returns the bound's limit, or 0 for no bound.
func (b *Bound) Limit() int {
	if b == nil {
		return 0
	}
	return cap(b.slots)
}

// acquire takes a slot, or returns the context's cause once ctx has ended.
func (b *Bound) acquire(ctx context.Context) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if b == nil {
		return nil
	}
	select {
	case b.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (b *Bound) release() {
	if b != nil {
		<-b.slots
	}
}

// Map calls f(ctx, i) for every i in [0, n) concurrently, at most limit at
// once (limit <= 0: all at once), and returns what each call returned at
// its index: out[i] and errs[i] are f(ctx, i)'s, whatever order the calls
// finished in. Both slices have length n.
//
// Calls start in index order. Once ctx has ended no further call starts,
// and errs[i] of each call that did not start is context.Cause(ctx); Map
// still waits for the calls already running, which see ctx end. A call
// that panics has a *PanicError (wrapping ErrPanic) as its error; the
// other calls are not affected.
func Map[T any](ctx context.Context, limit, n int, f Func[T]) (out []T, errs []error) {
	return MapBound(ctx, NewBound(limit), n, f)
}

// MapBound is Map under b, a bound shared with other MapBound calls
// (nil: no bound).
func MapBound[T any](ctx context.Context, b *Bound, n int, f Func[T]) (out []T, errs []error) {
	out, errs = make([]T, n), make([]error, n)
	done := make(chan struct{}, n)
	started := 0
	for ; started < n; started++ {
		if err := b.acquire(ctx); err != nil {
			for j := started; j < n; j++ {
				errs[j] = err
			}
			break
		}
		go func(i int) {
			defer func() { done <- struct{}{} }()
			defer b.release()
			out[i], errs[i] = call(ctx, f, i)
		}(started)
	}
	for range started {
		<-done
	}
	return out, errs
}

// First returns the first non-nil error in index order, or nil.
func First(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Result is one finished call of a Pool.
type Result[T any] struct {
	// Key is the key the call was started with.
	Key int
	// Value and Err are what the call returned; Err is a *PanicError when
	// it panicked.
	Value T
	Err   error
}

// Pool runs calls on their own goroutines, at most limit at once, for one
// owner goroutine that starts calls with Go while the pool is not Full and
// collects them with Wait, in the order they finish: the shape of a
// dependency-driven scheduler, which decides what to start next from the
// results so far. Only the owner may use a Pool, and it must Wait for
// every call it started.
type Pool[T any] struct {
	limit   int
	running int
	done    chan Result[T]
}

// NewPool returns a pool of at most limit calls at once (limit <= 0: no
// bound).
func NewPool[T any](limit int) *Pool[T] {
	return &Pool[T]{limit: limit, done: make(chan Result[T], max(limit, 0))}
}

// Full reports whether limit calls are running, so Go must wait.
func (p *Pool[T]) Full() bool { return p.limit > 0 && p.running >= p.limit }

// Running returns how many started calls have not been collected by Wait.
func (p *Pool[T]) Running() int { return p.running }

// Go starts f(ctx, key) on its own goroutine. It panics when the pool is
// Full: the owner checks Full first.
func (p *Pool[T]) Go(ctx context.Context, key int, f Func[T]) {
	if p.Full() {
		panic(fmt.Sprintf("par: Go on a full pool (%d running)", p.running))
	}
	p.running++
	go func() {
		v, err := call(ctx, f, key)
		p.done <- Result[T]{Key: key, Value: v, Err: err}
	}()
}

// WaitOrWake blocks until a running call finishes, and returns it with ok
// true, or until wake receives (or is closed), and returns woken true. With
// no call running it waits for wake alone; a nil wake makes it Wait.
func (p *Pool[T]) WaitOrWake(wake <-chan struct{}) (r Result[T], ok, woken bool) {
	if wake == nil {
		r, ok = p.Wait()
		return r, ok, false
	}
	if p.running == 0 {
		<-wake
		return r, false, true
	}
	select {
	case r = <-p.done:
		p.running--
		return r, true, false
	case <-wake:
		return r, false, true
	}
}

// Wait blocks until a running call finishes and returns it; ok is false,
// at once, when no call is running.
func (p *Pool[T]) Wait() (r Result[T], ok bool) {
	if p.running == 0 {
		return r, false
	}
	r = <-p.done
	p.running--
	return r, true
}
