package trace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
)

// JSONL writes one JSON object per event. Writes are buffered; call Flush
// (or Close) at the end of a run.
type JSONL struct {
	mu  sync.Mutex
	w   *bufio.Writer
	c   io.Closer
	err error
}

// NewJSONL returns a JSONL sink writing to w. If w is an io.Closer, Close
// closes it.
func NewJSONL(w io.Writer) *JSONL {
	s := &JSONL{w: bufio.NewWriter(w)}
	if c, ok := w.(io.Closer); ok {
		s.c = c
	}
	return s
}

// Emit writes e as one line. The first write error is kept and returned by
// Flush and Close.
func (s *JSONL) Emit(e Event) {
	b, err := json.Marshal(e)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	if err != nil {
		s.err = fmt.Errorf("trace: encoding event %d: %w", e.Seq, err)
		return
	}
	b = append(b, '\n')
	if _, err := s.w.Write(b); err != nil {
		s.err = fmt.Errorf("trace: writing event: %w", err)
	}
}

// Flush writes buffered events.
func (s *JSONL) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.w.Flush(); err != nil && s.err == nil {
		s.err = fmt.Errorf("trace: flushing: %w", err)
	}
	return s.err
}

// Close flushes and closes the underlying writer when it is a Closer.
func (s *JSONL) Close() error {
	err := s.Flush()
	if s.c != nil {
		if cerr := s.c.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("trace: closing: %w", cerr)
		}
	}
	return err
}

// Terminal prints events as readable lines: the Thought / Action /
// Observation stream, plans, decisions and answers. Model tokens and
// low-level node events are shown only in verbose mode.
type Terminal struct {
	mu      sync.Mutex
	w       io.Writer
	color   bool
	verbose bool
	// maxLen caps each printed text, in characters; 0 or less means no cap.
	// Default 600.
	maxLen int
}

// TerminalOption configures a Terminal sink.
type TerminalOption func(*Terminal)

// WithColor turns ANSI colours on or off. Default off; the CLI turns it on
// when stdout is a terminal.
func WithColor(on bool) TerminalOption { return func(t *Terminal) { t.color = on } }

// WithVerbose also prints node start/end, routes and model calls. Default off.
func WithVerbose(on bool) TerminalOption { return func(t *Terminal) { t.verbose = on } }

// WithMaxLen caps each printed text at n characters; n <= 0 prints texts
// whole. Default 600.
func WithMaxLen(n int) TerminalOption { return func(t *Terminal) { t.maxLen = n } }

// NewTerminal returns a terminal sink writing to w.
func NewTerminal(w io.Writer, opts ...TerminalOption) *Terminal {
	t := &Terminal{w: w, maxLen: 600}
	for _, o := range opts {
		o(t)
	}
	return t
}

const (
	ansiReset  = "\x1b[0m"
	ansiDim    = "\x1b[2m"
	ansiBold   = "\x1b[1m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiBlue   = "\x1b[34m"
	ansiCyan   = "\x1b[36m"
	ansiMag    = "\x1b[35m"
)

// Emit prints e if it is of a shown kind.
func (t *Terminal) Emit(e Event) {
	line := t.format(e)
	if line == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	_, _ = io.WriteString(t.w, line)
}

func (t *Terminal) clip(s string) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); t.maxLen > 0 && len(r) > t.maxLen {
		return string(r[:t.maxLen]) + fmt.Sprintf("… [%d more chars]", len(r)-t.maxLen)
	}
	return s
}

func (t *Terminal) paint(color, s string) string {
	if !t.color {
		return s
	}
	return color + s + ansiReset
}

func (t *Terminal) format(e Event) string {
	node := ""
	if e.Node != "" {
		node = t.paint(ansiDim, "["+e.Node+"] ")
	}
	label := func(color, name string) string { return node + t.paint(color+ansiBold, name+":") + " " }
	switch e.Kind {
	case KindThought:
		return label(ansiCyan, "Thought") + indent(t.clip(e.Text)) + "\n"
	case KindAction:
		return label(ansiYellow, "Action") + fmt.Sprintf("%v[%v]", e.Data["tool"], t.clip(fmt.Sprint(e.Data["input"]))) + "\n"
	case KindObservation:
		return label(ansiBlue, "Observation") + indent(t.clip(e.Text)) + "\n"
	case KindParseError, KindGuard:
		return label(ansiMag, "Guard") + t.clip(e.Text) + "\n"
	case KindError:
		return label(ansiRed, "Error") + t.clip(e.Text) + "\n"
	case KindPlan, KindStep, KindDecision, KindVote, KindReflection, KindCandidate, KindInfo:
		name := strings.ToUpper(string(e.Kind[:1])) + string(e.Kind[1:])
		return label(ansiGreen, name) + indent(t.clip(e.Text)) + "\n"
	case KindAnswer:
		return label(ansiGreen, "Answer") + t.clip(e.Text) + "\n"
	case KindRetry:
		// Always shown: a retry wait can be long, and silence would look
		// like a hang.
		return "  " + node + t.paint(ansiYellow, "↻ "+t.clip(e.Text)) + "\n"
	case KindRunStart, KindRunEnd:
		if e.Text == "" {
			return ""
		}
		return t.paint(ansiDim, "== "+e.Text) + "\n"
	}
	if !t.verbose {
		return ""
	}
	switch e.Kind {
	case KindNodeStart:
		return t.paint(ansiDim, "-> "+e.Node) + "\n"
	case KindRoute:
		return t.paint(ansiDim, fmt.Sprintf("   %s --%v--> %v", e.Node, e.Data["route"], e.Data["to"])) + "\n"
	case KindLLMCall:
		if e.Usage == nil {
			return ""
		}
		est := ""
		if e.Usage.Estimated {
			est = " (estimated)"
		}
		return t.paint(ansiDim, fmt.Sprintf("   %smodel call: %d prompt + %d completion tokens%s, %.0f ms", node, e.Usage.PromptTokens, e.Usage.CompletionTokens, est, e.ElapsedMS)) + "\n"
	default:
		keys := make([]string, 0, len(e.Data))
		for k := range e.Data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return t.paint(ansiDim, fmt.Sprintf("   %s%s %s %v", node, e.Kind, t.clip(e.Text), keys)) + "\n"
	}
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n    ") }
