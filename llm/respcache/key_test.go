package respcache_test

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/planner-engine/planner/hooks"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/llm/respcache"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// richCall is a greedy call with every kind of message part and a tool.
func richCall(change func(*hooks.ModelCall)) *hooks.ModelCall {
	schema := map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}
	call := &hooks.ModelCall{Node: "act", Kind: "react", Role: "", TaskID: "t1", Provider: "openai", Model: "gpt-4o-mini",
		Messages: []llms.MessageContent{
			llms.TextParts(llms.ChatMessageTypeSystem, "you search"),
			{Role: llms.ChatMessageTypeHuman, Parts: []llms.ContentPart{
				llms.TextPart("what is on this image?"),
				llms.BinaryPart("image/png", []byte{1, 2, 3}),
				llms.ImageURLPart("https://example.com/a.png"),
			}},
			{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{llmtest.ToolCall("call_1", "search", `{"q":"cats"}`)}},
			{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: "call_1", Name: "search", Content: "a cat"}}},
		},
		Options: []llms.CallOption{llms.WithTemperature(0), llms.WithTools([]llms.Tool{{Type: "function",
			Function: &llms.FunctionDefinition{Name: "search", Description: "search the web", Parameters: schema}}})},
		Measure: measure,
	}
	if change != nil {
		change(call)
	}
	return call
}

func withOption(o llms.CallOption) func(*hooks.ModelCall) {
	return func(c *hooks.ModelCall) { c.Options = append(c.Options, o) }
}

func withPart(msg, part int, p llms.ContentPart) func(*hooks.ModelCall) {
	return func(c *hooks.ModelCall) {
		msgs := slices.Clone(c.Messages)
		msgs[msg].Parts = slices.Clone(msgs[msg].Parts)
		msgs[msg].Parts[part] = p
		c.Messages = msgs
	}
}

func withTool(fn llms.FunctionDefinition) func(*hooks.ModelCall) {
	return withOption(llms.WithTools([]llms.Tool{{Type: "function", Function: &fn}}))
}

// optionRows are the rows of TestEachPartOfTheRequestIsKeyed that change
// one field of llms.CallOptions, by field name.
var optionRows = map[string]llms.CallOption{
	"Model":                llms.WithModel("gpt-4o"),
	"CandidateCount":       llms.WithCandidateCount(2),
	"MaxTokens":            llms.WithMaxTokens(64),
	"Temperature":          llms.WithTemperature(0.2),
	"StopWords":            llms.WithStopWords([]string{"Observation:"}),
	"TopK":                 llms.WithTopK(5),
	"TopP":                 llms.WithTopP(0.9),
	"Seed":                 llms.WithSeed(7),
	"MinLength":            llms.WithMinLength(3),
	"MaxLength":            llms.WithMaxLength(300),
	"N":                    llms.WithN(3),
	"RepetitionPenalty":    llms.WithRepetitionPenalty(1.1),
	"FrequencyPenalty":     llms.WithFrequencyPenalty(0.5),
	"PresencePenalty":      llms.WithPresencePenalty(0.5),
	"JSONMode":             llms.WithJSONMode(),
	"Tools":                llms.WithTools(nil),
	"ToolChoice":           llms.WithToolChoice("required"),
	"Functions":            llms.WithFunctions([]llms.FunctionDefinition{{Name: "f", Description: "old style"}}),
	"FunctionCallBehavior": llms.WithFunctionCallBehavior(llms.FunctionCallBehaviorAuto),
	"Metadata":             llms.WithMetadata(map[string]any{"openai:use_legacy_max_tokens": true}),
	"ResponseMIMEType":     llms.WithResponseMIMEType("application/json"),
}

func TestEveryCallOptionHasARow(t *testing.T) {
	typ := reflect.TypeFor[llms.CallOptions]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Type.Kind() == reflect.Func {
			continue
		}
		assert.Contains(t, optionRows, f.Name, "llms.CallOptions.%s is new: add a row for it, and check it changes the key", f.Name)
	}
}

func TestEachPartOfTheRequestIsKeyed(t *testing.T) {
	rows := map[string]struct {
		change func(*hooks.ModelCall)
		run    []respcache.RunOption
	}{
		"provider":     {change: func(c *hooks.ModelCall) { c.Provider = "ollama" }},
		"model":        {change: func(c *hooks.ModelCall) { c.Model = "gpt-4o" }},
		"message text": {change: withPart(1, 0, llms.TextPart("what is in this image?"))},
		"message role": {change: func(c *hooks.ModelCall) {
			c.Messages = slices.Clone(c.Messages)
			c.Messages[0].Role = llms.ChatMessageTypeHuman
		}},
		"one message more": {change: func(c *hooks.ModelCall) {
			c.Messages = append(slices.Clip(c.Messages), llms.TextParts(llms.ChatMessageTypeHuman, "and?"))
		}},
		"one message less": {change: func(c *hooks.ModelCall) { c.Messages = c.Messages[:3] }},
		"text split in two": {change: func(c *hooks.ModelCall) {
			c.Messages = slices.Clone(c.Messages)
			c.Messages[0] = llms.TextParts(llms.ChatMessageTypeSystem, "you ", "search")
		}},
		"image data":              {change: withPart(1, 1, llms.BinaryPart("image/png", []byte{1, 2, 4}))},
		"image MIME type":         {change: withPart(1, 1, llms.BinaryPart("image/jpeg", []byte{1, 2, 3}))},
		"image URL":               {change: withPart(1, 2, llms.ImageURLPart("https://example.com/b.png"))},
		"image detail":            {change: withPart(1, 2, llms.ImageURLWithDetailPart("https://example.com/a.png", "high"))},
		"tool call arguments":     {change: withPart(2, 0, llmtest.ToolCall("call_1", "search", `{"q":"dogs"}`))},
		"tool call name":          {change: withPart(2, 0, llmtest.ToolCall("call_1", "lookup", `{"q":"cats"}`))},
		"tool call id":            {change: withPart(2, 0, llmtest.ToolCall("call_2", "search", `{"q":"cats"}`))},
		"tool result":             {change: withPart(3, 0, llms.ToolCallResponse{ToolCallID: "call_1", Name: "search", Content: "a dog"})},
		"tool name":               {change: withTool(llms.FunctionDefinition{Name: "find", Description: "search the web", Parameters: map[string]any{"type": "object"}})},
		"tool description":        {change: withTool(llms.FunctionDefinition{Name: "search", Description: "search the news", Parameters: map[string]any{"type": "object"}})},
		"tool schema":             {change: withTool(llms.FunctionDefinition{Name: "search", Description: "search the web", Parameters: map[string]any{"type": "object", "required": []string{"q"}}})},
		"tool strict":             {change: withTool(llms.FunctionDefinition{Name: "search", Description: "search the web", Strict: true})},
		"temperature 0 to 1":      {change: withOption(llms.WithTemperature(1))},
		"model settings":          {run: []respcache.RunOption{respcache.WithModelSettings("base_url=http://localhost:8000/v1")}},
		"caller, when keyed":      {change: func(c *hooks.ModelCall) { c.Node = "other" }, run: []respcache.RunOption{respcache.WithCaller()}},
		"task, when caller keyed": {change: func(c *hooks.ModelCall) { c.TaskID = "t2" }, run: []respcache.RunOption{respcache.WithCaller()}},
	}
	for field, o := range optionRows {
		rows["option "+field] = struct {
			change func(*hooks.ModelCall)
			run    []respcache.RunOption
		}{change: withOption(o)}
	}
	c := open(t)
	p := newProvider()
	p.reply = func(*hooks.ModelCall, int) (*llms.ContentResponse, error) { return llmtest.TextResponse("ok"), nil }
	do(t, c.ForRun(0, nil), p, richCall(nil))
	require.Equal(t, 1, p.count())
	for name, row := range rows {
		t.Run(name, func(t *testing.T) {
			h := c.ForRun(0, nil, row.run...)
			_, err := h.WrapProvider(p.next)(context.Background(), richCall(row.change))
			require.NoError(t, err)
			assert.Equal(t, respcache.Stats{Misses: 1}, h.Stats(), "the changed request must not be answered by the base request's reply")
		})
	}
}

func TestWhatDoesNotChangeTheReplyDoesNotChangeTheKey(t *testing.T) {
	rows := map[string]struct {
		change func(*hooks.ModelCall)
		run    []respcache.RunOption
	}{
		"the same request": {},
		"the schema spelled as other JSON": {change: withTool(llms.FunctionDefinition{Name: "search", Description: "search the web",
			Parameters: json.RawMessage(`{ "properties": {"q": {"type":"string"}},  "type": "object" }`)})},
		"a streaming function": {change: withOption(llms.WithStreamingFunc(func(context.Context, []byte) error { return nil }))},
		"another caller": {change: func(c *hooks.ModelCall) {
			c.Node, c.Kind, c.Role, c.TaskID, c.StepID = "n2", "cot", "finalize", "t9", "E1"
		}},
		"temperature 0 from the model": {change: func(c *hooks.ModelCall) { c.Options = c.Options[1:] },
			run: []respcache.RunOption{respcache.WithModelTemperature(0)}},
		"another repeat (greedy)": {run: nil},
	}
	c := open(t)
	p := newProvider()
	do(t, c.ForRun(0, nil), p, richCall(nil))
	for name, row := range rows {
		t.Run(name, func(t *testing.T) {
			h := c.ForRun(3, nil, row.run...)
			_, err := h.WrapProvider(p.next)(context.Background(), richCall(row.change))
			require.NoError(t, err)
			assert.Equal(t, 1, h.Stats().Hits)
		})
	}
	assert.Equal(t, 1, p.count())
}
