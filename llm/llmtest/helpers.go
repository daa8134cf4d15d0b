package llmtest

import (
	"maps"
	"slices"
	"strings"

	"github.com/tmc/langchaingo/llms"
)

// Options applies opts to a zero llms.CallOptions and returns it: the
// options a call was made with.
func Options(opts ...llms.CallOption) llms.CallOptions {
	var o llms.CallOptions
	for _, f := range opts {
		f(&o)
	}
	return o
}

// Text returns the text of msgs as a model reads it: the text of every
// text part and the content of every tool response, each followed by a
// newline.
func Text(msgs []llms.MessageContent) string {
	var b strings.Builder
	for _, m := range msgs {
		for _, p := range m.Parts {
			switch v := p.(type) {
			case llms.TextContent:
				b.WriteString(v.Text)
				b.WriteByte('\n')
			case llms.ToolCallResponse:
				b.WriteString(v.Content)
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}

// LastText returns the text of the last message of msgs, as Text writes
// it without the final newline; "" when msgs is empty.
func LastText(msgs []llms.MessageContent) string {
	if len(msgs) == 0 {
		return ""
	}
	return strings.TrimSuffix(Text(msgs[len(msgs)-1:]), "\n")
}

// TextResponse returns a response of one choice whose content is text.
func TextResponse(text string) *llms.ContentResponse {
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: text}}}
}

// ToolCall returns a native tool call of the function name with the JSON
// arguments args.
func ToolCall(id, name, args string) llms.ToolCall {
	return llms.ToolCall{ID: id, Type: "function", FunctionCall: &llms.FunctionCall{Name: name, Arguments: args}}
}

// Clone returns a copy of resp that shares nothing a caller may change with
// it: its choices, their tool calls, function calls and generation info
// (a shallow copy of the map) are copied. Clone(nil) is nil.
func Clone(resp *llms.ContentResponse) *llms.ContentResponse {
	if resp == nil {
		return nil
	}
	out := &llms.ContentResponse{Choices: make([]*llms.ContentChoice, len(resp.Choices))}
	for i, c := range resp.Choices {
		if c == nil {
			continue
		}
		cc := *c
		cc.GenerationInfo = maps.Clone(c.GenerationInfo)
		cc.FuncCall = cloneFunc(c.FuncCall)
		cc.ToolCalls = slices.Clone(c.ToolCalls)
		for j := range cc.ToolCalls {
			cc.ToolCalls[j].FunctionCall = cloneFunc(cc.ToolCalls[j].FunctionCall)
		}
		out.Choices[i] = &cc
	}
	return out
}

func cloneFunc(f *llms.FunctionCall) *llms.FunctionCall {
	if f == nil {
		return nil
	}
	c := *f
	return &c
}
