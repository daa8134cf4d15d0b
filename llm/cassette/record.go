package cassette

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/tmc/langchaingo/llms"
)

// line is the on-disk form of an Entry, after scrubbing.
type line struct {
	Version  int    `json:"v"`
	Seq      int    `json:"seq"`
	Request  any    `json:"request"`
	Response any    `json:"response,omitempty"`
	Error    string `json:"error,omitempty"`
}

// ErrNoModel means a Recorder made without a model (NewRecorder with nil)
// was called directly rather than through a model of Through.
var ErrNoModel = errors.New("cassette: the recorder has no model; record through Recorder.Through")

// Recorder is an llms.Model that passes every call to the wrapped model and
// appends the exchange to a cassette. It is safe for concurrent use.
type Recorder struct {
	model  llms.Model
	scrub  *scrubber
	seq    atomic.Int64
	mu     sync.Mutex // guards w, closer and closed
	w      io.Writer
	closer io.Closer
	closed bool
}

// NewRecorder returns a Recorder that writes entries to w. Closing the
// Recorder does not close w. model may be nil when every call goes
// through a model of Through; GenerateContent then fails with
// ErrNoModel.
func NewRecorder(model llms.Model, w io.Writer, opts ...Option) *Recorder {
	return &Recorder{model: model, scrub: newScrubber(buildConfig(opts)), w: w}
}

// CreateRecorder creates (or truncates) the cassette file at path and returns
// a Recorder writing to it. Close the Recorder to close the file.
func CreateRecorder(model llms.Model, path string, opts ...Option) (*Recorder, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cassette: create %s: %w", path, err)
	}
	r := NewRecorder(model, f, opts...)
	r.closer = f
	return r, nil
}

// GenerateContent calls the wrapped model and records the exchange. Calls
// that fail because ctx ended are not recorded. If the entry cannot be
// written the call fails, since the recording would be incomplete.
func (r *Recorder) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	return r.record(ctx, r.model, msgs, opts)
}

// Through returns an llms.Model that passes every call to model and
// appends the exchange to r's cassette, in the order of r's other calls:
// one cassette can record several models (a pipeline's and its nodes').
// Its calls fail once r is closed.
func (r *Recorder) Through(model llms.Model) llms.Model { return through{r: r, model: model} }

// through is the model Through returns.
type through struct {
	r     *Recorder
	model llms.Model
}

func (t through) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	return t.r.record(ctx, t.model, msgs, opts)
}

func (t through) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, t, prompt, opts...)
}

// SupportsReasoning implements llms.ReasoningModel for the model recorded.
func (t through) SupportsReasoning() bool {
	rm, ok := t.model.(llms.ReasoningModel)
	return ok && rm.SupportsReasoning()
}

// record makes the call with model and records the exchange.
func (r *Recorder) record(ctx context.Context, model llms.Model, msgs []llms.MessageContent, opts []llms.CallOption) (*llms.ContentResponse, error) {
	if model == nil {
		return nil, ErrNoModel
	}
	seq := int(r.seq.Add(1) - 1)
	req := newRequest(msgs, opts)
	resp, err := model.GenerateContent(ctx, msgs, opts...)
	if err != nil && ctx.Err() != nil {
		return resp, err
	}
	if werr := r.write(seq, req, resp, err); werr != nil {
		if err != nil {
			return nil, fmt.Errorf("%w (and the model call failed: %w)", werr, err)
		}
		return nil, werr
	}
	return resp, err
}

// Call implements llms.Model through GenerateContent, so it is recorded too.
func (r *Recorder) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, r, prompt, opts...)
}

// SupportsReasoning implements llms.ReasoningModel, reporting the wrapped
// model's answer (false when it does not implement the interface).
func (r *Recorder) SupportsReasoning() bool {
	rm, ok := r.model.(llms.ReasoningModel)
	return ok && rm.SupportsReasoning()
}

// Close closes the cassette file opened by CreateRecorder. Later calls fail.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	if r.closer != nil {
		if err := r.closer.Close(); err != nil {
			return fmt.Errorf("cassette: close: %w", err)
		}
	}
	return nil
}

func (r *Recorder) write(seq int, req Request, resp *llms.ContentResponse, callErr error) error {
	canon, err := r.scrub.canonicalRequest(req)
	if err != nil {
		return err
	}
	l := line{Version: FormatVersion, Seq: seq, Request: canon.tree}
	if callErr != nil {
		l.Error = r.scrub.text(callErr.Error())
	} else if rec := newResponse(resp); rec != nil {
		tree, err := toTree(rec)
		if err != nil {
			return fmt.Errorf("cassette: encode response: %w", err)
		}
		l.Response = r.scrub.tree(tree)
	}
	b, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("cassette: encode entry: %w", err)
	}
	b = append(b, '\n')
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return fmt.Errorf("cassette: recorder is closed; entry %d not written", seq)
	}
	if _, err := r.w.Write(b); err != nil {
		return fmt.Errorf("cassette: write entry %d: %w", seq, err)
	}
	return nil
}
