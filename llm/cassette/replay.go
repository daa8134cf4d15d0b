package cassette

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/tmc/langchaingo/llms"
	"go.yaml.in/yaml/v3"
)

// MismatchError is returned by a replayed call whose request matches no
// unused recording. It matches ErrMismatch.
type MismatchError struct {
	// Seq is the seq of the closest unused recording.
	Seq int
	// Diff is a unified diff from that recording's request to the live
	// request, both rendered as YAML.
	Diff string
}

// Error includes the diff.
func (e *MismatchError) Error() string {
	return fmt.Sprintf("%s: closest unused recording is call #%d; re-record the cassette if the change is intended:\n%s",
		ErrMismatch, e.Seq, e.Diff)
}

// Unwrap returns ErrMismatch.
func (e *MismatchError) Unwrap() error { return ErrMismatch }

// RecordedError is returned when the matching recording is of a failed
// call. Its message is the recorded error text, so message-based
// classification (such as the middleware package's Classify) still works.
// It matches ErrRecordedFailure.
type RecordedError struct {
	// Seq is the recording's seq.
	Seq int
	// Message is the recorded (scrubbed) error text.
	Message string
}

// Error returns the recorded error text.
func (e *RecordedError) Error() string { return e.Message }

// Unwrap returns ErrRecordedFailure.
func (e *RecordedError) Unwrap() error { return ErrRecordedFailure }

// ReadEntries parses a cassette. Blank lines are skipped; a malformed line
// or an unsupported version fails with ErrBadCassette naming the line.
func ReadEntries(r io.Reader) ([]Entry, error) {
	raws, err := readLines(r)
	if err != nil {
		return nil, err
	}
	entries := make([]Entry, 0, len(raws))
	for _, rl := range raws {
		var e Entry
		if err := json.Unmarshal(rl.data, &e); err != nil {
			return nil, fmt.Errorf("%w: line %d: %w", ErrBadCassette, rl.lineNo, err)
		}
		entries = append(entries, e)
	}
	return entries, nil
}

type rawLine struct {
	lineNo int
	data   []byte
}

// readLines splits a cassette into non-blank lines and checks each one's
// version.
func readLines(r io.Reader) ([]rawLine, error) {
	br := bufio.NewReader(r)
	var out []rawLine
	for n := 1; ; n++ {
		data, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("cassette: read line %d: %w", n, err)
		}
		if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 {
			var head struct {
				Version int `json:"v"`
			}
			if jerr := json.Unmarshal(trimmed, &head); jerr != nil {
				return nil, fmt.Errorf("%w: line %d: %w", ErrBadCassette, n, jerr)
			}
			if head.Version != FormatVersion {
				return nil, fmt.Errorf("%w: line %d: format version %d, want %d", ErrBadCassette, n, head.Version, FormatVersion)
			}
			out = append(out, rawLine{lineNo: n, data: trimmed})
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
	}
}

// recording is one replayable entry.
type recording struct {
	seq     int
	lineNo  int
	key     string
	tree    any
	resp    *Response
	errText string
	used    bool
	yaml    string // rendered on first mismatch
}

// Replayer is an llms.Model that answers from a cassette instead of a
// provider. It is safe for concurrent use; see the package documentation
// for how requests are matched.
type Replayer struct {
	scrub *scrubber
	mu    sync.Mutex // guards the fields below and recording.used/yaml
	recs  []*recording
	byKey map[string][]*recording
	left  int
}

// OpenReplay loads the cassette at path and returns a model serving its
// recordings. Pass the options that were given to the Recorder.
func OpenReplay(path string, opts ...Option) (*Replayer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cassette: open %s: %w", path, err)
	}
	defer f.Close()
	p, err := NewReplayer(f, opts...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// NewReplayer reads a cassette from r and returns a model serving its
// recordings.
func NewReplayer(r io.Reader, opts ...Option) (*Replayer, error) {
	lines, err := readLines(r)
	if err != nil {
		return nil, err
	}
	p := &Replayer{scrub: newScrubber(buildConfig(opts)), byKey: map[string][]*recording{}}
	for _, rl := range lines {
		var l struct {
			Seq      int             `json:"seq"`
			Request  json.RawMessage `json:"request"`
			Response *Response       `json:"response"`
			Error    string          `json:"error"`
		}
		if err := json.Unmarshal(rl.data, &l); err != nil {
			return nil, fmt.Errorf("%w: line %d: %w", ErrBadCassette, rl.lineNo, err)
		}
		if l.Response == nil && l.Error == "" {
			return nil, fmt.Errorf("%w: line %d: entry has neither response nor error", ErrBadCassette, rl.lineNo)
		}
		var tree any
		if err := json.Unmarshal(l.Request, &tree); err != nil {
			return nil, fmt.Errorf("%w: line %d: request: %w", ErrBadCassette, rl.lineNo, err)
		}
		tree = p.scrub.tree(tree)
		key, err := json.Marshal(tree)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: request: %w", ErrBadCassette, rl.lineNo, err)
		}
		p.recs = append(p.recs, &recording{
			seq: l.Seq, lineNo: rl.lineNo, key: string(key), tree: tree, resp: l.Response, errText: l.Error,
		})
	}
	slices.SortStableFunc(p.recs, func(a, b *recording) int { return cmp.Compare(a.seq, b.seq) })
	for _, rec := range p.recs {
		p.byKey[rec.key] = append(p.byKey[rec.key], rec)
	}
	p.left = len(p.recs)
	return p, nil
}

// Remaining returns how many recordings have not been replayed yet.
func (p *Replayer) Remaining() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.left
}

// GenerateContent answers from the first unused recording of an identical
// request. If the caller passed a streaming function it receives the first
// choice's content as one chunk. Errors: ErrMismatch (with a diff),
// ErrExhausted, or a *RecordedError for a recorded failure.
func (p *Replayer) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	canon, err := p.scrub.canonicalRequest(newRequest(msgs, opts))
	if err != nil {
		return nil, err
	}
	rec, err := p.take(canon)
	if err != nil {
		return nil, err
	}
	if rec.errText != "" {
		return nil, &RecordedError{Seq: rec.seq, Message: rec.errText}
	}
	resp := rec.resp.toLLM()
	var co llms.CallOptions
	for _, o := range opts {
		o(&co)
	}
	if co.StreamingFunc != nil && len(resp.Choices) > 0 && resp.Choices[0].Content != "" {
		if err := co.StreamingFunc(ctx, []byte(resp.Choices[0].Content)); err != nil {
			return nil, err
		}
	}
	return resp, nil
}

// Call implements llms.Model through GenerateContent.
func (p *Replayer) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, p, prompt, opts...)
}

// take claims the recording for canon or explains why there is none.
func (p *Replayer) take(canon canonical) (*recording, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	same := p.byKey[canon.key]
	for _, rec := range same {
		if !rec.used {
			rec.used = true
			p.left--
			return rec, nil
		}
	}
	if len(same) > 0 {
		return nil, fmt.Errorf("%w: this request was recorded %d time(s) and every recording was used (first at call #%d); re-record the cassette if the run now repeats it",
			ErrExhausted, len(same), same[0].seq)
	}
	if p.left == 0 {
		return nil, fmt.Errorf("%w: all %d recorded calls were replayed and this call is extra; re-record the cassette if the run changed",
			ErrExhausted, len(p.recs))
	}
	// The closest recording is the one sharing the most words with the live
	// request (words rather than lines, so that a one-word edit of a
	// one-line prompt still ranks its recording first); ties go to the
	// earliest call.
	live := renderYAML(canon.tree)
	liveWords := strings.Fields(live)
	var (
		best      *recording
		bestRatio = -1.0
	)
	for _, rec := range p.recs {
		if rec.used {
			continue
		}
		if rec.yaml == "" {
			rec.yaml = renderYAML(rec.tree)
		}
		if ratio := difflib.NewMatcher(strings.Fields(rec.yaml), liveWords).Ratio(); ratio > bestRatio {
			best, bestRatio = rec, ratio
		}
	}
	diff, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(best.yaml), B: difflib.SplitLines(live),
		FromFile: fmt.Sprintf("recorded call #%d (line %d)", best.seq, best.lineNo), ToFile: "actual call",
		Context: 3,
	})
	if err != nil {
		diff = fmt.Sprintf("(diff unavailable: %v)", err)
	}
	return nil, &MismatchError{Seq: best.seq, Diff: diff}
}

// renderYAML renders a request tree for diffing: one field per line, and
// multi-line strings as YAML block scalars so each prompt line is a line.
func renderYAML(tree any) string {
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(tree); err != nil {
		return fmt.Sprintf("(cannot render request: %v)\n", err)
	}
	_ = enc.Close()
	return b.String()
}
