package parse

import (
	"errors"
	"fmt"
	"strings"
)

// Kind is the decision a completion was parsed into.
type Kind string

// The three kinds of Result.
const (
	// KindAction means the model asked to call a tool: Result.Tool and
	// Result.Input are set.
	KindAction Kind = "action"
	// KindFinal means the model gave its final answer: Result.Answer is set.
	KindFinal Kind = "final"
	// KindInvalid means the reply could not be parsed: Result.Error says why
	// and how to fix it, in words meant to be sent back to the model.
	KindInvalid Kind = "invalid"
)

// Format selects the output grammar Parse accepts and the format hints its
// error messages give.
type Format string

// The supported formats.
const (
	// FormatReAct is the Thought / Action / Action Input / Final Answer form.
	FormatReAct Format = "react"
	// FormatPaper is the ReAct paper's form: Action: Tool[input] and
	// Finish[answer].
	FormatPaper Format = "react-paper"
	// FormatAuto accepts both forms. It is the default.
	FormatAuto Format = "auto"
)

// Sentinel errors.
var (
	// ErrFormat is wrapped by Result.Err for replies that could not be parsed.
	ErrFormat = errors.New("invalid ReAct output format")
	// ErrUnknownFormat is returned by ParseFormat for an unknown format name.
	ErrUnknownFormat = errors.New("unknown ReAct output format")
)

// ParseFormat converts a configuration string into a Format. The empty string
// means FormatAuto; matching ignores case and surrounding spaces.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(s))); f {
	case "":
		return FormatAuto, nil
	case FormatReAct, FormatPaper, FormatAuto:
		return f, nil
	}
	return "", fmt.Errorf("%w %q: use %q, %q or %q", ErrUnknownFormat, s, FormatReAct, FormatPaper, FormatAuto)
}

// Result is the outcome of parsing one completion. Exactly one of the three
// shapes is filled, according to Kind.
type Result struct {
	// Kind is the decision: action, final or invalid.
	Kind Kind `json:"kind"`
	// Thought is the reasoning written before the decision, trimmed.
	Thought string `json:"thought,omitempty"`
	// Tool is the tool name as the model wrote it (trimmed of quotes and
	// Markdown); set only for KindAction and never empty there.
	Tool string `json:"tool,omitempty"`
	// Input is the tool input; set only for KindAction, possibly empty.
	Input string `json:"input,omitempty"`
	// Answer is the final answer; set only for KindFinal and never empty there.
	Answer string `json:"answer,omitempty"`
	// Error tells the model what was wrong and how to reply; set only for
	// KindInvalid and never empty there.
	Error string `json:"error,omitempty"`
	// Truncated is true when an invented Observation, and everything after
	// it, was cut from the reply before parsing.
	Truncated bool `json:"truncated,omitempty"`
	// Notes record tolerated deviations and dropped text, for traces, e.g.
	// "2 actions on one line; took the first".
	Notes []string `json:"notes,omitempty"`
}

// Err returns nil unless r is KindInvalid, in which case it returns an error
// wrapping ErrFormat with r.Error as its message.
func (r Result) Err() error {
	if r.Kind != KindInvalid {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrFormat, r.Error)
}

// Option changes how Parse works.
type Option func(*config)

type config struct {
	format Format
	// verbatim keeps a Tool[input] call's input as written (trimmed).
	verbatim bool
}

// WithFormat selects the accepted grammar. The default is FormatAuto; an
// unknown value also means FormatAuto.
func WithFormat(f Format) Option {
	return func(c *config) {
		switch f {
		case FormatReAct, FormatPaper:
			c.format = f
		default:
			c.format = FormatAuto
		}
	}
}

// WithVerbatimCalls returns the input of a Tool[input] call as written
// between its brackets, with only the white space around it trimmed: no
// quote, backtick or code-fence stripping and no cutting after a JSON
// object, as the ReAct paper's harness passed it (Search["Love the Way
// You Lie"] searches with the quotes). Inputs written after "Action
// Input:" are cleaned as usual.
func WithVerbatimCalls() Option {
	return func(c *config) { c.verbatim = true }
}

// paper reports whether the paper's Tool[input] form is accepted.
func (c config) paper() bool { return c.format != FormatReAct }

// Parse parses one model completion. It never panics and always returns
// exactly one of an action, a final answer or a format error; the package
// documentation lists the accepted forms and the rules for ambiguous replies.
func Parse(text string, opts ...Option) Result {
	cfg := config{format: FormatAuto}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if strings.IndexByte(text, '\r') >= 0 {
		text = strings.ReplaceAll(text, "\r\n", "\n")
		text = strings.ReplaceAll(text, "\r", "\n")
	}
	kept, cut := CutObservation(text)
	p := parser{cfg: cfg}
	res := p.run(kept)
	return p.finish(res, cut, strings.TrimSpace(text) == "", strings.TrimSpace(kept) == "")
}
