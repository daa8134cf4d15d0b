package trace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
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
// low-level node events are shown only in verbose mode. Every text it
// prints from an event (its text, node, tool, input, streamed tokens) is
// passed through Printable first, so model and tool output cannot send
// the terminal escape sequences or other control characters.
type Terminal struct {
	mu      sync.Mutex
	w       io.Writer
	color   bool
	verbose bool
	tokens  bool
	// maxLen caps each printed text, in characters; 0 or less means no cap.
	// Default 600.
	maxLen int
	// The streamed reply being printed (guarded by mu): liveOn says there
	// is one, live is its call number, liveNode its node, liveLen the
	// characters printed, liveNL the line feeds held back and liveCut
	// whether the cap was reached; quiet holds the nodes whose
	// next thought event repeats a reply already streamed.
	liveOn   bool
	live     any
	liveNode string
	liveLen  int
	liveNL   int
	liveCut  bool
	quiet    map[string]bool
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

// WithTokens prints token events (see KindToken) as they arrive: the
// reply a model is writing appears live, capped like any text, and the
// Thought parsed from it is not printed a second time (its Action and
// Observation are). When calls stream concurrently (samples, parallel
// steps), one reply is printed live at a time; the others show as their
// parsed events. Default off: token events are not printed.
func WithTokens(on bool) TerminalOption { return func(t *Terminal) { t.tokens = on } }

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
	if e.Kind == KindToken {
		if t.tokens {
			t.token(e)
		}
		return
	}
	line := t.format(e)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.liveOn {
		// Any other event ends the streamed reply's line.
		t.endLive(e)
	}
	if e.Kind == KindThought && t.quiet[e.Node] {
		delete(t.quiet, e.Node)
		return
	}
	if line != "" {
		_, _ = io.WriteString(t.w, line)
	}
}

// token prints a token event's text when its call owns the live line or
// no call does.
func (t *Terminal) token(e Event) {
	call := e.Data["call"]
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.liveOn && t.live != call {
		return
	}
	if !t.liveOn {
		t.liveOn, t.live, t.liveNode, t.liveLen, t.liveNL, t.liveCut = true, call, e.Node, 0, 0, false
		delete(t.quiet, e.Node)
		node := ""
		if e.Node != "" {
			node = t.paint(ansiDim, "["+Printable(e.Node)+"] ")
		}
		_, _ = io.WriteString(t.w, node+t.paint(ansiDim, "▸ "))
	}
	if t.liveCut {
		return
	}
	text := Printable(e.Text)
	if n := utf8.RuneCountInString(text); t.maxLen > 0 && t.liveLen+n > t.maxLen {
		text = string([]rune(text)[:t.maxLen-t.liveLen]) + "…"
		t.liveCut = true
	}
	t.liveLen += utf8.RuneCountInString(text)
	// Line feeds are held back until more text follows, so a reply
	// ending with one leaves no blank indented line.
	body := strings.TrimRight(text, "\n")
	held := len(text) - len(body)
	if body == "" {
		t.liveNL += held
		return
	}
	body = strings.Repeat("\n", t.liveNL) + body
	t.liveNL = held
	_, _ = io.WriteString(t.w, t.paint(ansiCyan, indent(body)))
}

// endLive closes the streamed reply's line because of event e. When e
// says the call ended (its llm_call event), the node's next thought event
// is not printed: the reply showed it. Called with mu held.
func (t *Terminal) endLive(e Event) {
	_, _ = io.WriteString(t.w, "\n")
	if e.Kind == KindLLMCall && e.Node == t.liveNode {
		if t.quiet == nil {
			t.quiet = map[string]bool{}
		}
		t.quiet[t.liveNode] = true
	}
	t.liveOn, t.live = false, nil
}

// DropKinds returns a sink that passes every event to s except those of
// the given kinds; for example DropKinds(s, KindToken) keeps a trace file
// or a recorder free of token events.
func DropKinds(s Sink, kinds ...Kind) Sink {
	return dropKinds{s: s, kinds: kinds}
}

type dropKinds struct {
	s     Sink
	kinds []Kind
}

func (d dropKinds) Emit(e Event) {
	for _, k := range d.kinds {
		if e.Kind == k {
			return
		}
	}
	d.s.Emit(e)
}

// clip returns s made printable (Printable), trimmed and cut at maxLen
// characters.
func (t *Terminal) clip(s string) string {
	s = strings.TrimSpace(Printable(s))
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
		node = t.paint(ansiDim, "["+Printable(e.Node)+"] ")
	}
	label := func(color, name string) string { return node + t.paint(color+ansiBold, name+":") + " " }
	switch e.Kind {
	case KindThought:
		return label(ansiCyan, "Thought") + indent(t.clip(e.Text)) + "\n"
	case KindAction:
		return label(ansiYellow, "Action") + fmt.Sprintf("%s[%s]", Printable(fmt.Sprint(e.Data["tool"])), t.clip(fmt.Sprint(e.Data["input"]))) + "\n"
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
		return t.paint(ansiDim, "== "+Printable(e.Text)) + "\n"
	}
	if !t.verbose {
		return ""
	}
	switch e.Kind {
	case KindNodeStart:
		return t.paint(ansiDim, "-> "+Printable(e.Node)) + "\n"
	case KindRoute:
		return t.paint(ansiDim, Printable(fmt.Sprintf("   %s --%v--> %v", e.Node, e.Data["route"], e.Data["to"]))) + "\n"
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
		return t.paint(ansiDim, fmt.Sprintf("   %s%s %s %s", node, Printable(string(e.Kind)), t.clip(e.Text), Printable(fmt.Sprint(keys)))) + "\n"
	}
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n    ") }
