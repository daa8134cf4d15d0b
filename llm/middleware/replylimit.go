package middleware

import (
	"context"
	"fmt"
	"maps"
	"unicode/utf8"

	"github.com/tmc/langchaingo/llms"
)

// TruncatedInfoKey is the GenerationInfo key that NewReplyLimit sets to true
// on every choice it shortened.
const TruncatedInfoKey = "planner_truncated"

// TruncateEvent describes one reply field cut by NewReplyLimit.
type TruncateEvent struct {
	// Choice is the index of the choice in the response.
	Choice int
	// Field names what was cut: "content", "reasoning", or
	// "tool_calls[i].arguments" (the deprecated FuncCall is "func_call.arguments").
	Field string
	// Size is the field's length in bytes before the cut.
	Size int
	// Limit is the configured maximum, in bytes.
	Limit int
}

// NewReplyLimit returns a middleware that caps each text field of a
// response at maxBytes bytes: every choice's Content and ReasoningContent,
// and the Arguments of each of its tool calls (and of FuncCall). A longer
// field is cut at the last UTF-8 rune boundary within maxBytes and gets the
// marker
//
//	\n[reply truncated: D of N bytes dropped; the limit is M bytes]
//
// appended, and its choice gets GenerationInfo[TruncatedInfoKey] = true.
// The hook of WithOnTruncate, if any, is called once per cut field. The
// model's response is copied before it is changed, never modified in
// place. Output already sent to a streaming function is not limited, but
// the call's context carries maxBytes to the provider's
// LongLineTransport, which cuts a longer string of one streamed chunk to
// maxBytes+1 bytes as it reads it (this middleware then cuts the reply
// and reports it; the Size it reports counts what reached it).
// maxBytes <= 0 returns a middleware that leaves the model unchanged.
//
// Place it outside any cassette recorder, so that recordings keep the raw
// reply (see the package documentation); Config.Middlewares puts it
// outermost.
func NewReplyLimit(maxBytes int, opts ...Option) Middleware {
	if maxBytes <= 0 {
		return func(m llms.Model) llms.Model { return m }
	}
	o := buildOptions(opts)
	return func(next llms.Model) llms.Model {
		return Wrap(next, func(ctx context.Context, msgs []llms.MessageContent, callOpts ...llms.CallOption) (*llms.ContentResponse, error) {
			resp, err := next.GenerateContent(withReplyLimit(ctx, maxBytes), msgs, callOpts...)
			if resp == nil {
				return resp, err
			}
			return limitResponse(ctx, resp, maxBytes, o), err
		})
	}
}

// limitResponse returns resp, or a copy of it with over-long fields cut.
func limitResponse(ctx context.Context, resp *llms.ContentResponse, limit int, o options) *llms.ContentResponse {
	var out *llms.ContentResponse
	for i, ch := range resp.Choices {
		if ch == nil || !choiceTooLong(ch, limit) {
			continue
		}
		if out == nil {
			out = &llms.ContentResponse{Choices: append([]*llms.ContentChoice(nil), resp.Choices...)}
		}
		c := *ch
		cut := func(field string, s string) string {
			t, ok := truncate(s, limit)
			if ok && o.onTruncate != nil {
				o.onTruncate(ctx, TruncateEvent{Choice: i, Field: field, Size: len(s), Limit: limit})
			}
			return t
		}
		c.Content = cut("content", c.Content)
		c.ReasoningContent = cut("reasoning", c.ReasoningContent)
		if c.FuncCall != nil && len(c.FuncCall.Arguments) > limit {
			fc := *c.FuncCall
			fc.Arguments = cut("func_call.arguments", fc.Arguments)
			c.FuncCall = &fc
		}
		if len(c.ToolCalls) > 0 {
			calls := append([]llms.ToolCall(nil), c.ToolCalls...)
			for j := range calls {
				if fc := calls[j].FunctionCall; fc != nil && len(fc.Arguments) > limit {
					cp := *fc
					cp.Arguments = cut(fmt.Sprintf("tool_calls[%d].arguments", j), cp.Arguments)
					calls[j].FunctionCall = &cp
				}
			}
			c.ToolCalls = calls
		}
		c.GenerationInfo = maps.Clone(c.GenerationInfo)
		if c.GenerationInfo == nil {
			c.GenerationInfo = map[string]any{}
		}
		c.GenerationInfo[TruncatedInfoKey] = true
		out.Choices[i] = &c
	}
	if out == nil {
		return resp
	}
	return out
}

func choiceTooLong(ch *llms.ContentChoice, limit int) bool {
	if len(ch.Content) > limit || len(ch.ReasoningContent) > limit {
		return true
	}
	if ch.FuncCall != nil && len(ch.FuncCall.Arguments) > limit {
		return true
	}
	for _, tc := range ch.ToolCalls {
		if tc.FunctionCall != nil && len(tc.FunctionCall.Arguments) > limit {
			return true
		}
	}
	return false
}

// truncate cuts s to at most limit bytes at a rune boundary and appends the
// truncation marker; ok is false, and s returned unchanged, when s fits.
func truncate(s string, limit int) (string, bool) {
	if len(s) <= limit {
		return s, false
	}
	n := limit
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("\n[reply truncated: %d of %d bytes dropped; the limit is %d bytes]", len(s)-n, len(s), limit), true
}
