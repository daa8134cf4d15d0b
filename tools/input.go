package tools

import "fmt"

// InputError is a refusal caused by a model's input to a tool: its
// message reads "<sentinel>: <detail>" and it matches both the tool's
// sentinel and ErrBadInput, so the engine reports it as bad input and
// callers can still test the tool's own reason.
type InputError struct {
	// Sentinel is the tool's own error the refusal matches.
	Sentinel error
	// Msg is the detail.
	Msg string
}

func (e *InputError) Error() string { return e.Sentinel.Error() + ": " + e.Msg }

// Unwrap returns the sentinel and ErrBadInput.
func (e *InputError) Unwrap() []error { return []error{e.Sentinel, ErrBadInput} }

// BadInput returns an *InputError for sentinel with a formatted detail.
func BadInput(sentinel error, format string, args ...any) error {
	return &InputError{Sentinel: sentinel, Msg: fmt.Sprintf(format, args...)}
}

// SettingOr returns v, or def when v is zero or negative: the value of a
// tool's numeric setting (a limit, a timeout) that was left unset.
func SettingOr[T ~int | ~int64](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}
