package llmtest

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/tmc/langchaingo/llms"
)

// Func is a model backed by a function: GenerateContent calls it. It is
// safe for concurrent use when the function is. A test whose model has
// behaviour of its own (a reply computed from the prompt, say) writes it
// as a Func.
type Func func(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error)

// GenerateContent calls f.
func (f Func) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	return f(ctx, msgs, opts...)
}

// Call answers a single prompt through GenerateContent.
func (f Func) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, f, prompt, opts...)
}

// Fixed answers every call alike: with Err when it is set, else with a
// copy of Response (an empty text reply when Response is nil), so that a
// caller that changes its reply changes no other call's. It counts its
// calls. Use a pointer: a Fixed must not be copied once used.
type Fixed struct {
	// Response is the reply of every call.
	Response *llms.ContentResponse
	// Err, when set, fails every call instead.
	Err error

	calls atomic.Int64
}

// Reply returns a model that answers every call with text.
func Reply(text string) *Fixed { return &Fixed{Response: TextResponse(text)} }

// ToolReply returns a model that answers every call with text and the
// native tool calls calls (stop reason "tool_calls"), as a provider that
// calls tools does.
func ToolReply(text string, calls ...llms.ToolCall) *Fixed {
	return &Fixed{Response: &llms.ContentResponse{Choices: []*llms.ContentChoice{{
		Content: text, StopReason: "tool_calls", ToolCalls: calls,
	}}}}
}

// Respond returns a model that answers every call with a copy of resp.
func Respond(resp *llms.ContentResponse) *Fixed { return &Fixed{Response: resp} }

// Fail returns a model that fails every call with err.
func Fail(err error) *Fixed { return &Fixed{Err: err} }

// GenerateContent answers the call.
func (m *Fixed) GenerateContent(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
	m.calls.Add(1)
	if m.Err != nil {
		return nil, m.Err
	}
	if m.Response == nil {
		return TextResponse(""), nil
	}
	return Clone(m.Response), nil
}

// Call answers a single prompt through GenerateContent.
func (m *Fixed) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// Calls returns how many calls the model has answered or failed.
func (m *Fixed) Calls() int { return int(m.calls.Load()) }

// Sequence plays its models in turn: the i-th call (from 0) goes to
// Models[i], and every call after the last model to the last one again. A
// Sequence of no model answers every call with an empty text reply. It
// takes a call's turn when the call starts, so concurrent calls each get
// a turn of their own.
type Sequence struct {
	// Models are the turns.
	Models []llms.Model

	mu    sync.Mutex
	calls int
}

// Seq returns a Sequence of models.
func Seq(models ...llms.Model) *Sequence { return &Sequence{Models: models} }

// Replies returns a Sequence that answers call i with texts[i], and every
// call after the last with the last text.
func Replies(texts ...string) *Sequence {
	s := &Sequence{}
	for _, t := range texts {
		s.Models = append(s.Models, Reply(t))
	}
	return s
}

// FailTimes returns a Sequence whose first n calls fail with err and
// whose later calls go to then: a model that recovers.
func FailTimes(n int, err error, then llms.Model) *Sequence {
	s := &Sequence{}
	fail := Fail(err)
	for range n {
		s.Models = append(s.Models, fail)
	}
	s.Models = append(s.Models, then)
	return s
}

// GenerateContent passes the call to the model of its turn.
func (s *Sequence) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	s.mu.Lock()
	i := s.calls
	s.calls++
	s.mu.Unlock()
	if len(s.Models) == 0 {
		return TextResponse(""), nil
	}
	return s.Models[min(i, len(s.Models)-1)].GenerateContent(ctx, msgs, opts...)
}

// Call answers a single prompt through GenerateContent.
func (s *Sequence) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, s, prompt, opts...)
}

// Calls returns how many calls the Sequence has received.
func (s *Sequence) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Echo answers each call with Prefix followed by the text of its last
// message (see LastText).
type Echo struct {
	// Prefix starts every reply.
	Prefix string
}

// GenerateContent answers the call.
func (e Echo) GenerateContent(_ context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	return TextResponse(e.Prefix + LastText(msgs)), nil
}

// Call answers a single prompt through GenerateContent.
func (e Echo) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, e, prompt, opts...)
}

// orEmpty returns m, or a model that answers an empty text reply when m
// is nil.
func orEmpty(m llms.Model) llms.Model {
	if m == nil {
		return &Fixed{}
	}
	return m
}
