// Package cassette records langchaingo model exchanges to a file and replays
// them, so that agent runs can be repeated offline and deterministically.
//
// # File format
//
// A cassette is a JSON Lines file: one Entry object per line, written when
// the call returns, so a crashed run keeps every finished call. An entry is
//
//	{"v":1,"seq":0,
//	 "request":{"messages":[{"role":"human","parts":[{"type":"text","text":"..."}]}],
//	            "options":{"model":"gpt-4o-mini","temperature":0.2,"max_tokens":256,
//	                       "stop_words":["Observation:"],"json_mode":true,"tools":[...]}},
//	 "response":{"choices":[{"content":"...","stop_reason":"stop",
//	             "tool_calls":[{"id":"call_1","type":"function","name":"search","arguments":"{}"}],
//	             "generation_info":{"PromptTokens":12,"CompletionTokens":5}}]},
//	 "error":"only present when the call failed"}
//
// seq numbers calls in the order they started; under concurrency lines may
// be written out of seq order. Part types are text, image_url, binary,
// tool_call and tool_response. Option fields left at their zero value are
// omitted. Streaming functions are not recorded and do not take part in
// matching. GenerationInfo values that cannot be encoded as JSON are
// replaced by a "<unserialisable T>" string.
//
// # Secrets
//
// Before anything is written, every string in the entry is scrubbed with
// the engine's one set of rules, package redact's (redact.Scrubber.Tree):
// the value of each environment variable whose name ends in _KEY, _TOKEN,
// _SECRET or _PASSWORD (values shorter than 8 characters are ignored)
// becomes "[REDACTED:NAME]"; bearer tokens and the well-known key shapes of
// OpenAI ("sk-..."), Anthropic ("sk-ant-...") and Google ("AIza...") become
// "[REDACTED]"; and the value of any map field named like a credential
// (Authorization, Cookie, api_key, x-api-key, access_token, password,
// secret, ...) becomes "[REDACTED]" when it is a string (so a tool schema
// with a "password" property keeps its schema).
//
// # Replay matching
//
// A Replayer answers each call with the first unused recording whose request
// is identical, after the same scrubbing, to the live request, comparing the
// canonical JSON of messages and options. Identical requests are served in
// recorded order, so concurrent runs replay correctly whatever their
// interleaving. A request that matches no unused recording fails with an
// error matching ErrMismatch whose message holds a unified diff, in YAML
// form, between the closest unused recording and the live request. Once
// every recording is used, further calls fail with ErrExhausted.
//
// Wrap the Recorder around the complete model stack (outside the retry
// middleware) to record one entry per logical call; wrap it around the bare
// provider to record every attempt, failures included.
package cassette

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/planner-engine/planner/redact"
	"github.com/tmc/langchaingo/llms"
)

// FormatVersion is the entry format version written to and accepted from
// cassettes.
const FormatVersion = 1

// Sentinel errors.
var (
	// ErrMismatch is matched by the error of a replayed call whose request
	// differs from every unused recording.
	ErrMismatch = errors.New("cassette: request does not match the recording")
	// ErrExhausted is matched by the error of a replayed call made after
	// every recording was used.
	ErrExhausted = errors.New("cassette: no recorded calls left")
	// ErrBadCassette is returned for a cassette that cannot be parsed.
	ErrBadCassette = errors.New("cassette: malformed cassette")
	// ErrRecordedFailure is matched by errors replayed from entries that
	// recorded a failed call.
	ErrRecordedFailure = errors.New("cassette: recorded call failed")
)

// Entry is one line of a cassette.
type Entry struct {
	// Version is the format version, FormatVersion.
	Version int `json:"v"`
	// Seq numbers calls from 0 in the order they started.
	Seq int `json:"seq"`
	// Request is what the model was asked.
	Request Request `json:"request"`
	// Response is what it answered; nil when the call failed.
	Response *Response `json:"response,omitempty"`
	// Error is the failed call's error text.
	Error string `json:"error,omitempty"`
}

// Request is a recorded GenerateContent request.
type Request struct {
	// Messages are the chat messages in order.
	Messages []Message `json:"messages"`
	// Options are the call options that affect the answer.
	Options Options `json:"options"`
}

// Message is one chat message.
type Message struct {
	// Role is the llms.ChatMessageType ("system", "human", "ai", "tool", ...).
	Role string `json:"role"`
	// Parts are the message's content parts.
	Parts []Part `json:"parts"`
}

// Part is one content part. Type selects which other fields are set:
// text (Text); image_url (URL, Detail); binary (MIMEType, Data);
// tool_call (ID, ToolType, Name, Arguments); tool_response (ID, Name,
// Content).
type Part struct {
	Type      string `json:"type"`
	Text      string `json:"text,omitempty"`
	URL       string `json:"url,omitempty"`
	Detail    string `json:"detail,omitempty"`
	MIMEType  string `json:"mime_type,omitempty"`
	Data      []byte `json:"data,omitempty"`
	ID        string `json:"id,omitempty"`
	ToolType  string `json:"tool_type,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	Content   string `json:"content,omitempty"`
}

// Options are the recorded llms.CallOptions; see that type for meanings.
type Options struct {
	Model             string                    `json:"model,omitempty"`
	CandidateCount    int                       `json:"candidate_count,omitempty"`
	MaxTokens         int                       `json:"max_tokens,omitempty"`
	Temperature       float64                   `json:"temperature,omitempty"`
	StopWords         []string                  `json:"stop_words,omitempty"`
	TopK              int                       `json:"top_k,omitempty"`
	TopP              float64                   `json:"top_p,omitempty"`
	Seed              int                       `json:"seed,omitempty"`
	MinLength         int                       `json:"min_length,omitempty"`
	MaxLength         int                       `json:"max_length,omitempty"`
	N                 int                       `json:"n,omitempty"`
	RepetitionPenalty float64                   `json:"repetition_penalty,omitempty"`
	FrequencyPenalty  float64                   `json:"frequency_penalty,omitempty"`
	PresencePenalty   float64                   `json:"presence_penalty,omitempty"`
	JSONMode          bool                      `json:"json_mode,omitempty"`
	ResponseMIMEType  string                    `json:"response_mime_type,omitempty"`
	Tools             []llms.Tool               `json:"tools,omitempty"`
	ToolChoice        any                       `json:"tool_choice,omitempty"`
	Functions         []llms.FunctionDefinition `json:"functions,omitempty"`
	FunctionCall      string                    `json:"function_call,omitempty"`
	Metadata          map[string]any            `json:"metadata,omitempty"`
}

// Response is a recorded llms.ContentResponse.
type Response struct {
	// Choices are the response choices in order.
	Choices []Choice `json:"choices"`
}

// Choice is a recorded llms.ContentChoice.
type Choice struct {
	Content          string         `json:"content"`
	StopReason       string         `json:"stop_reason,omitempty"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []ToolCall     `json:"tool_calls,omitempty"`
	FuncCall         *ToolCall      `json:"func_call,omitempty"`
	GenerationInfo   map[string]any `json:"generation_info,omitempty"`
}

// ToolCall is a recorded tool call (llms.ToolCall or llms.FunctionCall).
type ToolCall struct {
	ID        string `json:"id,omitempty"`
	Type      string `json:"type,omitempty"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Option configures a Recorder or Replayer. Give both the same options so
// that scrubbing, and therefore matching, agrees.
type Option func(*config)

type config struct {
	scrubber *redact.Scrubber
	redact   []redact.Option
}

func buildConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithEnviron scrubs secrets found in env ("NAME=value" strings) instead of
// the process environment read at construction.
func WithEnviron(env []string) Option {
	return func(c *config) { c.redact = append(c.redact, redact.WithEnviron(env)) }
}

// WithSecretSuffixes replaces the default name endings (_KEY, _TOKEN,
// _SECRET, _PASSWORD) that mark an environment variable as secret. Names are
// compared in upper case.
func WithSecretSuffixes(suffixes ...string) Option {
	return func(c *config) { c.redact = append(c.redact, redact.WithSecretSuffixes(suffixes...)) }
}

// WithSecrets adds literal values to scrub, replaced by "[REDACTED]".
func WithSecrets(values ...string) Option {
	return func(c *config) { c.redact = append(c.redact, redact.WithSecrets(values...)) }
}

// WithScrubber scrubs with s, a scrubber shared with the rest of the
// process, instead of building one; WithEnviron, WithSecretSuffixes and
// WithSecrets are then ignored. Default: a scrubber built by redact.New
// from those options (the process environment when none is given).
func WithScrubber(s *redact.Scrubber) Option {
	return func(c *config) { c.scrubber = s }
}

// scrubber applies the redact package's rules to recorded data.
type scrubber struct {
	r *redact.Scrubber
}

func newScrubber(c config) *scrubber {
	if c.scrubber != nil {
		return &scrubber{r: c.scrubber}
	}
	return &scrubber{r: redact.New(c.redact...)}
}

// text scrubs one string.
func (s *scrubber) text(v string) string { return s.r.String(v) }

// tree scrubs a decoded JSON value in place and returns it; map fields
// named like credentials lose their string values.
func (s *scrubber) tree(v any) any { return s.r.Tree(v) }

// toTree converts v to its generic JSON form.
func toTree(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// safeValue returns v's generic JSON form, or a placeholder string when v
// cannot be encoded.
func safeValue(v any) any {
	if v == nil {
		return nil
	}
	out, err := toTree(v)
	if err != nil {
		return fmt.Sprintf("<unserialisable %T>", v)
	}
	return out
}

// safeMap applies safeValue to every value of m.
func safeMap(m map[string]any) map[string]any {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]any, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out[k] = safeValue(m[k])
	}
	return out
}

// newRequest converts a live call into its recorded form.
func newRequest(msgs []llms.MessageContent, opts []llms.CallOption) Request {
	var co llms.CallOptions
	for _, o := range opts {
		o(&co)
	}
	req := Request{Messages: make([]Message, 0, len(msgs)), Options: Options{
		Model: co.Model, CandidateCount: co.CandidateCount, MaxTokens: co.MaxTokens,
		Temperature: co.Temperature, StopWords: co.StopWords, TopK: co.TopK, TopP: co.TopP,
		Seed: co.Seed, MinLength: co.MinLength, MaxLength: co.MaxLength, N: co.N,
		RepetitionPenalty: co.RepetitionPenalty, FrequencyPenalty: co.FrequencyPenalty,
		PresencePenalty: co.PresencePenalty, JSONMode: co.JSONMode,
		ResponseMIMEType: co.ResponseMIMEType, ToolChoice: safeValue(co.ToolChoice),
		FunctionCall: string(co.FunctionCallBehavior), Metadata: safeMap(co.Metadata),
	}}
	for _, t := range co.Tools {
		if t.Function != nil {
			fn := *t.Function
			fn.Parameters = safeValue(fn.Parameters)
			t.Function = &fn
		}
		req.Options.Tools = append(req.Options.Tools, t)
	}
	for _, f := range co.Functions {
		f.Parameters = safeValue(f.Parameters)
		req.Options.Functions = append(req.Options.Functions, f)
	}
	for _, m := range msgs {
		msg := Message{Role: string(m.Role), Parts: make([]Part, 0, len(m.Parts))}
		for _, p := range m.Parts {
			msg.Parts = append(msg.Parts, newPart(p))
		}
		req.Messages = append(req.Messages, msg)
	}
	return req
}

func newPart(p llms.ContentPart) Part {
	switch v := p.(type) {
	case llms.TextContent:
		return Part{Type: "text", Text: v.Text}
	case *llms.TextContent:
		return newPart(*v)
	case llms.ImageURLContent:
		return Part{Type: "image_url", URL: v.URL, Detail: v.Detail}
	case *llms.ImageURLContent:
		return newPart(*v)
	case llms.BinaryContent:
		return Part{Type: "binary", MIMEType: v.MIMEType, Data: v.Data}
	case *llms.BinaryContent:
		return newPart(*v)
	case llms.ToolCall:
		part := Part{Type: "tool_call", ID: v.ID, ToolType: v.Type}
		if v.FunctionCall != nil {
			part.Name, part.Arguments = v.FunctionCall.Name, v.FunctionCall.Arguments
		}
		return part
	case *llms.ToolCall:
		return newPart(*v)
	case llms.ToolCallResponse:
		return Part{Type: "tool_response", ID: v.ToolCallID, Name: v.Name, Content: v.Content}
	case *llms.ToolCallResponse:
		return newPart(*v)
	default:
		return Part{Type: fmt.Sprintf("%T", p), Content: fmt.Sprint(safeValue(p))}
	}
}

// newResponse converts a live response into its recorded form.
func newResponse(resp *llms.ContentResponse) *Response {
	if resp == nil {
		return nil
	}
	out := &Response{Choices: make([]Choice, 0, len(resp.Choices))}
	for _, c := range resp.Choices {
		if c == nil {
			out.Choices = append(out.Choices, Choice{})
			continue
		}
		ch := Choice{
			Content: c.Content, StopReason: c.StopReason, ReasoningContent: c.ReasoningContent,
			GenerationInfo: safeMap(c.GenerationInfo),
		}
		for _, tc := range c.ToolCalls {
			rec := ToolCall{ID: tc.ID, Type: tc.Type}
			if tc.FunctionCall != nil {
				rec.Name, rec.Arguments = tc.FunctionCall.Name, tc.FunctionCall.Arguments
			}
			ch.ToolCalls = append(ch.ToolCalls, rec)
		}
		if c.FuncCall != nil {
			ch.FuncCall = &ToolCall{Name: c.FuncCall.Name, Arguments: c.FuncCall.Arguments}
		}
		out.Choices = append(out.Choices, ch)
	}
	return out
}

// toLLM rebuilds a fresh llms.ContentResponse from a recorded one. Integral
// float64 values at the top level of GenerationInfo (token counts after a
// JSON round trip) become int again.
func (r *Response) toLLM() *llms.ContentResponse {
	out := &llms.ContentResponse{Choices: make([]*llms.ContentChoice, 0, len(r.Choices))}
	for _, c := range r.Choices {
		ch := &llms.ContentChoice{Content: c.Content, StopReason: c.StopReason, ReasoningContent: c.ReasoningContent}
		if c.GenerationInfo != nil {
			ch.GenerationInfo = make(map[string]any, len(c.GenerationInfo))
			for k, v := range c.GenerationInfo {
				if f, ok := v.(float64); ok && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
					v = int(f)
				}
				ch.GenerationInfo[k] = v
			}
		}
		for _, tc := range c.ToolCalls {
			ch.ToolCalls = append(ch.ToolCalls, llms.ToolCall{
				ID: tc.ID, Type: tc.Type, FunctionCall: &llms.FunctionCall{Name: tc.Name, Arguments: tc.Arguments},
			})
		}
		if c.FuncCall != nil {
			ch.FuncCall = &llms.FunctionCall{Name: c.FuncCall.Name, Arguments: c.FuncCall.Arguments}
		}
		out.Choices = append(out.Choices, ch)
	}
	return out
}

// canonical is the scrubbed generic form of a request and its JSON text,
// the matching key.
type canonical struct {
	tree any
	key  string
}

func (s *scrubber) canonicalRequest(req Request) (canonical, error) {
	tree, err := toTree(req)
	if err != nil {
		return canonical{}, fmt.Errorf("cassette: encode request: %w", err)
	}
	tree = s.tree(tree)
	b, err := json.Marshal(tree)
	if err != nil {
		return canonical{}, fmt.Errorf("cassette: encode request: %w", err)
	}
	return canonical{tree: tree, key: string(b)}, nil
}
