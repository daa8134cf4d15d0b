package adapter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/planner-engine/planner/llm/middleware"
	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/llms"
)

// model wraps a langchaingo adapter. It applies the config-level call
// options, rejects what the adapter cannot do, and turns the adapter's
// errors into redacted, classified ones.
type model struct {
	name     string
	inner    llms.Model
	defaults []llms.CallOption
	secret   string
	keyEnv   string

	// legacyMaxTokens (openai) sends max_tokens instead of
	// max_completion_tokens, for OpenAI-compatible servers.
	legacyMaxTokens bool
	// rejectTools (ollama) fails calls carrying tools or tool messages.
	rejectTools bool
	// splitRoles lists the roles whose multi-part messages are sent as one
	// message per part. anthropic: AI and tool (the adapter sends only the
	// first part; the Messages API merges consecutive same-role turns).
	// openai: tool (the adapter rejects a tool message of several parts;
	// the API wants one tool message per tool_call_id).
	splitRoles []llms.ChatMessageType
	// baseURL is the server's URL, named (as host:port) when it does not
	// answer and in the ollama tool hint; baseURLSource is where it came
	// from (resolved.baseURLSource).
	baseURL, baseURLSource string
	closer                 io.Closer

	// embed creates embeddings with embedModel (EmbeddingClient); nil when
	// the provider offers none.
	embed      embeddings.EmbedderClient
	embedModel string
}

// Call implements llms.Model through GenerateContent.
func (m *model) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// GenerateContent implements llms.Model. Options given here override the
// Config defaults. Errors wrap ErrUnsupported, a *StatusError for HTTP
// failures, the context's error, or the streaming func's error; none
// contains the API key.
func (m *model) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	opts := make([]llms.CallOption, 0, len(m.defaults)+len(options)+2)
	opts = append(opts, m.defaults...)
	opts = append(opts, options...)

	var probe llms.CallOptions
	for _, o := range opts {
		o(&probe)
	}
	if m.rejectTools {
		if err := m.checkNoTools(messages, &probe); err != nil {
			return nil, err
		}
	}
	if len(m.splitRoles) > 0 {
		messages = splitMultiPart(messages, m.splitRoles)
	}
	if m.legacyMaxTokens {
		opts = append(opts, withMetadataFlag(legacyMaxTokensKey))
	}
	// Remember the streaming func's error: googleai's adapter stops the
	// stream on it but returns no error.
	var stream streamResult
	if probe.StreamingFunc != nil {
		opts = append(opts, llms.WithStreamingFunc(stream.wrap(probe.StreamingFunc)))
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", m.name, err)
	}

	ctx, obs := observe(ctx)
	resp, err := m.inner.GenerateContent(ctx, messages, opts...)
	status, retryAfter := obs.StatusCode(), obs.RetryAfter()
	if err == nil && status >= 400 {
		// The native ollama client returns no error for a failed status
		// with an empty body.
		err = errors.New("the response carried no error message")
	}
	if err == nil {
		err = stream.err()
	}
	if err != nil {
		return nil, m.wrapError(err, status, retryAfter, obs.TransportErr())
	}
	return resp, nil
}

// Close releases the adapter's connections (googleai); otherwise a no-op.
func (m *model) Close() error {
	if m.closer == nil {
		return nil
	}
	return m.closer.Close()
}

// mistralStatus finds the status mistral-go writes into its error text.
var mistralStatus = regexp.MustCompile(`\(HTTP Error (\d{3})\)`)

// wrapError turns the adapter's error into a redacted one: a *StatusError
// for an HTTP status of 400 or more, an *UnreachableError when no server
// answered (transport, the raw error of the round trip, shows a dial
// failure), else the error prefixed with the provider's name.
func (m *model) wrapError(err error, status int, retryAfter time.Duration, transport error) error {
	err = redact(err, m.secret)
	if status == 0 && m.name == Mistral {
		if sub := mistralStatus.FindStringSubmatch(err.Error()); sub != nil {
			status, _ = strconv.Atoi(sub[1])
		}
	}
	if status >= 400 {
		return &StatusError{
			Provider:   m.name,
			StatusCode: status,
			RetryAfter: retryAfter,
			Err:        err,
			keyEnv:     m.keyEnv,
		}
	}
	if status == 0 && m.baseURL != "" {
		if reason, ok := middleware.DialFailure(errors.Join(err, transport)); ok {
			return &UnreachableError{Provider: m.name, Addr: hostPort(m.baseURL), Reason: reason, Source: m.baseURLSource, Err: err}
		}
	}
	if strings.HasPrefix(err.Error(), m.name+": ") {
		return err
	}
	return fmt.Errorf("%s: %w", m.name, err)
}

// checkNoTools fails a call the native ollama adapter would mishandle: it
// drops tools silently and rejects tool messages with an opaque error.
func (m *model) checkNoTools(messages []llms.MessageContent, probe *llms.CallOptions) error {
	what := ""
	switch {
	case len(probe.Tools) > 0:
		what = "tools (llms.WithTools)"
	case len(probe.Functions) > 0:
		what = "functions (llms.WithFunctions)"
	default:
		for _, msg := range messages {
			for _, part := range msg.Parts {
				switch part.(type) {
				case llms.ToolCall, llms.ToolCallResponse:
					what = "tool-call messages"
				}
			}
		}
	}
	if what == "" {
		return nil
	}
	return fmt.Errorf("%w: ollama: the native Ollama adapter cannot send %s; for native tool calling "+
		"use provider: openai with base_url: %s/v1 (Ollama's OpenAI-compatible API)", ErrUnsupported, what, m.baseURL)
}

// withMetadataFlag sets key to true in the call's metadata without
// modifying a map the caller passed in.
func withMetadataFlag(key string) llms.CallOption {
	return func(o *llms.CallOptions) {
		md := make(map[string]any, len(o.Metadata)+1)
		maps.Copy(md, o.Metadata)
		md[key] = true
		o.Metadata = md
	}
}

// streamResult keeps the first error a caller's streaming func returned.
type streamResult struct {
	mu    sync.Mutex
	first error
}

func (s *streamResult) wrap(fn func(context.Context, []byte) error) func(context.Context, []byte) error {
	return func(ctx context.Context, chunk []byte) error {
		err := fn(ctx, chunk)
		if err != nil {
			s.mu.Lock()
			if s.first == nil {
				s.first = err
			}
			s.mu.Unlock()
		}
		return err
	}
}

func (s *streamResult) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first == nil {
		return nil
	}
	return fmt.Errorf("streaming func: %w", s.first)
}

// splitMultiPart returns messages with every message of several parts whose
// role is in roles replaced by one message per part, in order. Other
// messages and the caller's slice are left untouched.
func splitMultiPart(messages []llms.MessageContent, roles []llms.ChatMessageType) []llms.MessageContent {
	out := make([]llms.MessageContent, 0, len(messages))
	for _, msg := range messages {
		if len(msg.Parts) < 2 || !slices.Contains(roles, msg.Role) {
			out = append(out, msg)
			continue
		}
		for _, part := range msg.Parts {
			out = append(out, llms.MessageContent{Role: msg.Role, Parts: []llms.ContentPart{part}})
		}
	}
	return out
}
