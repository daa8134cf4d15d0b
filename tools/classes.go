package tools

import "errors"

// errorClasses are the failure classes of a tool call that a journal
// records, so that a replayed failure matches the same sentinel error as
// the live one did.
func errorClasses() []struct {
	name string
	err  error
} {
	return []struct {
		name string
		err  error
	}{
		{"timeout", ErrToolTimeout},
		{"panic", ErrToolPanic},
		{"bad_input", ErrBadInput},
		{"not_approved", ErrNotApproved},
		{"unknown_tool", ErrUnknownTool},
	}
}

// ErrorClass names the class of a tool call's failure: "timeout",
// "panic", "bad_input", "not_approved", "unknown_tool", or "" for any
// other error.
func ErrorClass(err error) string {
	for _, c := range errorClasses() {
		if errors.Is(err, c.err) {
			return c.name
		}
	}
	return ""
}

// ClassError returns the sentinel error of a class ErrorClass named, or
// nil for "" or an unknown name.
func ClassError(class string) error {
	for _, c := range errorClasses() {
		if c.name == class {
			return c.err
		}
	}
	return nil
}

// ReplayedError is a tool failure answered from a journal rather than by
// running the tool: the recorded message, matching the recorded class's
// sentinel error (ClassError), so a resumed run sees the same failure as
// the live one did.
type ReplayedError struct {
	// Msg is the recorded error message; Class its ErrorClass.
	Msg, Class string
}

func (e *ReplayedError) Error() string { return e.Msg }

// Unwrap returns the class's sentinel error (nil for no class).
func (e *ReplayedError) Unwrap() error { return ClassError(e.Class) }
