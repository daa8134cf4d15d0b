package code

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/planner-engine/planner/tools"
)

// Sentinel errors. Every failure of a program is an *Error whose Kind is
// one of them; it matches tools.ErrBadInput as well, since the program is
// the tool's input. A cancelled context yields the context's error
// instead.
var (
	// ErrSyntax means the program could not be parsed or resolved: a
	// syntax error, an undefined name, or a load statement.
	ErrSyntax = errors.New("syntax error")
	// ErrSourceTooLarge means the program is longer than Config.MaxSource.
	ErrSourceTooLarge = errors.New("program too large")
	// ErrRuntime means the program failed while running (division by
	// zero, a missing dict key, fail(...), and so on).
	ErrRuntime = errors.New("runtime error")
	// ErrStepLimit means the program ran more than Config.MaxSteps steps.
	ErrStepLimit = errors.New("step limit exceeded")
	// ErrTimeLimit means the program ran longer than Config.Timeout.
	ErrTimeLimit = errors.New("time limit exceeded")
	// ErrDepthLimit means calls nested deeper than Config.MaxDepth.
	ErrDepthLimit = errors.New("maximum recursion depth exceeded")
	// ErrMemoryLimit means the heap grew by more than Config.MaxMemory.
	ErrMemoryLimit = errors.New("memory limit exceeded")
	// ErrValueTooLarge means an operation would have made a value larger
	// than Config.MaxValueSize or MaxIntBits.
	ErrValueTooLarge = errors.New("value too large")
)

// Error is the failure of a program. Its message's first line says what
// went wrong and where, with the offending source line and often a hint,
// since a model sees only that line; the following lines hold the
// traceback and the text printed before the failure.
type Error struct {
	// Kind is the sentinel error this failure matches.
	Kind error
	// Msg is the one-line message.
	Msg string
	// Line and Col locate the failure in the program (1-based), or are 0
	// when unknown.
	Line, Col int
	// Traceback lists the calls active at a runtime failure, outermost
	// first, one per line; empty for other failures.
	Traceback string
	// Output is the text the program printed before it failed (capped
	// like a successful call's output).
	Output string
	// cause is the underlying error, if any.
	cause error
}

// Error returns the one-line message, then the traceback and the printed
// output, if any, on the following lines.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Msg)
	if e.Traceback != "" {
		b.WriteString("\n")
		b.WriteString(e.Traceback)
	}
	if e.Output != "" {
		b.WriteString("\nprinted before the error:\n")
		b.WriteString(e.Output)
	}
	return b.String()
}

// Unwrap returns the Kind, tools.ErrBadInput and the underlying error, so
// errors.Is matches any of them.
func (e *Error) Unwrap() []error {
	errs := []error{e.Kind, tools.ErrBadInput}
	if e.cause != nil {
		errs = append(errs, e.cause)
	}
	return errs
}

// sizeError is the error of an operation whose result would be too large;
// it matches ErrValueTooLarge.
type sizeError struct{ msg string }

func (e *sizeError) Error() string { return e.msg }
func (e *sizeError) Unwrap() error { return ErrValueTooLarge }

// tooLarge returns a sizeError with a formatted message.
func tooLarge(format string, args ...any) error {
	return &sizeError{msg: fmt.Sprintf(format, args...)}
}

// byteSize renders n bytes for messages: "16 MiB", "1.5 KiB", "300 bytes".
func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// withCommas renders n with thousands separators.
func withCommas(n uint64) string {
	s := strconv.FormatUint(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// sourceLine returns line n (1-based) of src, trimmed and shortened to
// fit on a line of a message, or "" when there is none.
func sourceLine(src string, n int) string {
	if n <= 0 {
		return ""
	}
	for i := 1; i < n; i++ {
		_, rest, ok := strings.Cut(src, "\n")
		if !ok {
			return ""
		}
		src = rest
	}
	line, _, _ := strings.Cut(src, "\n")
	return shorten(strings.TrimSpace(line), 120)
}

// shorten cuts s to at most n bytes at a rune boundary, marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:runeStart(s, n)] + "…"
}

// runeStart returns the largest i <= n such that s[:i] ends on a rune
// boundary.
func runeStart(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return n
}

// quotedTail renders the last n bytes of s as a quoted one-line string.
func quotedTail(s string, n int) string {
	if len(s) <= n {
		return strconv.Quote(s)
	}
	i := len(s) - n
	for i < len(s) && s[i]&0xC0 == 0x80 {
		i++
	}
	return "…" + strconv.Quote(s[i:])
}
