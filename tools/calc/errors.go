package calc

import (
	"errors"
	"fmt"
)

// Sentinel errors wrapped by every *Error; test them with errors.Is.
var (
	// ErrSyntax means the expression is not well formed.
	ErrSyntax = errors.New("syntax error")
	// ErrDivByZero means a division or modulo had a zero divisor.
	ErrDivByZero = errors.New("division by zero")
	// ErrDomain means a function or operator got an argument outside its
	// domain, such as sqrt(-1), ln(0), 2.5! or tan(pi/2) (within 4 ulp of
	// an odd multiple of π/2; see the package documentation).
	ErrDomain = errors.New("argument out of domain")
	// ErrTooLarge means the input, its nesting or a value exceeds a limit
	// (see WithMaxLength, WithMaxDepth and WithMaxBits).
	ErrTooLarge = errors.New("too large")
	// ErrUnknownName means the expression names an unknown function or
	// constant.
	ErrUnknownName = errors.New("unknown name")
	// ErrArgCount means a function was called with the wrong number of
	// arguments.
	ErrArgCount = errors.New("wrong number of arguments")
)

// Error describes why an expression could not be evaluated.
type Error struct {
	// Kind is the sentinel the error wraps: ErrSyntax, ErrDivByZero,
	// ErrDomain, ErrTooLarge, ErrUnknownName or ErrArgCount.
	Kind error
	// Column is the 1-based position, in characters of the original input,
	// where the problem was found; 0 when it concerns the whole input.
	Column int
	// Msg explains the problem.
	Msg string
}

// Error renders the error as "<kind>: <msg> at column <n>".
func (e *Error) Error() string {
	if e.Column > 0 {
		return fmt.Sprintf("%v: %s at column %d", e.Kind, e.Msg, e.Column)
	}
	return fmt.Sprintf("%v: %s", e.Kind, e.Msg)
}

// Unwrap returns Kind so that errors.Is(err, ErrSyntax) and friends work.
func (e *Error) Unwrap() error { return e.Kind }

// newError builds an *Error with a formatted message.
func newError(kind error, col int, format string, args ...any) *Error {
	return &Error{Kind: kind, Column: col, Msg: fmt.Sprintf(format, args...)}
}
