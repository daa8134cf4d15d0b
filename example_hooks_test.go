package planner_test

import (
	"context"
	"fmt"
	"log"
	"regexp"
	"strings"
	"sync/atomic"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/hooks"
	"github.com/tmc/langchaingo/llms"
)

// emailAddress matches an e-mail address.
var emailAddress = regexp.MustCompile(`[[:alnum:]._%+-]+@[[:alnum:].-]+\.[[:alpha:]]{2,}`)

// piiFilter is a program's hook: as a hooks.ModelHook it removes every
// e-mail address from a model call's prompt before the engine records or
// sends it, and it counts the model calls it saw; as a hooks.ToolHook it
// counts the tool calls. One hook serves every run of an Engine, so it is
// safe for concurrent use.
type piiFilter struct {
	modelCalls, toolCalls atomic.Int64
}

func (f *piiFilter) WrapModel(next hooks.ModelFunc) hooks.ModelFunc {
	return func(ctx context.Context, call *hooks.ModelCall) (*hooks.ModelResult, error) {
		f.modelCalls.Add(1)
		// Build new messages: the caller's are left as they are.
		msgs := make([]llms.MessageContent, len(call.Messages))
		for i, msg := range call.Messages {
			parts := make([]llms.ContentPart, len(msg.Parts))
			for j, p := range msg.Parts {
				if t, ok := p.(llms.TextContent); ok {
					p = llms.TextContent{Text: emailAddress.ReplaceAllString(t.Text, "[e-mail removed]")}
				}
				parts[j] = p
			}
			msgs[i] = llms.MessageContent{Role: msg.Role, Parts: parts}
		}
		call.Messages = msgs
		return next(ctx, call)
	}
}

func (f *piiFilter) WrapTool(next hooks.ToolFunc) hooks.ToolFunc {
	return func(ctx context.Context, call *hooks.ToolCall) (*hooks.ToolResult, error) {
		f.toolCalls.Add(1)
		return next(ctx, call)
	}
}

// leakCheck is a hooks.ProviderHook: it sees each request as the provider
// gets it, and notes whether any still held an e-mail address.
type leakCheck struct{ leaked atomic.Bool }

func (c *leakCheck) WrapProvider(next hooks.ModelFunc) hooks.ModelFunc {
	return func(ctx context.Context, call *hooks.ModelCall) (*hooks.ModelResult, error) {
		for _, msg := range call.Messages {
			for _, p := range msg.Parts {
				if t, ok := p.(llms.TextContent); ok && emailAddress.MatchString(t.Text) {
					c.leaked.Store(true)
				}
			}
		}
		return next(ctx, call)
	}
}

// Add a hook of your own to every run of an Engine: here a filter that
// keeps e-mail addresses out of prompts and counts the calls it sees. The
// program's hooks sit inside the run's budget and outside the engine's
// own records (spans, trace events, the journal), so no prompt is recorded
// or sent before the filter has seen it; see pipeline.HookOrder.
func ExampleWithHooks() {
	ctx := context.Background()
	filter, check := &piiFilter{}, &leakCheck{}
	eng, err := planner.New(planner.WithHooks(filter, check))
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	p, err := eng.Load(ctx, "configs/cot.yaml", planner.WithLLM("scripted:examples/scripts/cot_demo.yaml"))
	if err != nil {
		log.Fatal(err)
	}
	question := "A farmer has 3 fields of 17 rows with 23 plants each. How many plants? Mail the total to ann.lee@example.com."
	res, err := p.Run(ctx, question)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("answer:", res.Answer)
	fmt.Println("model calls seen:", filter.modelCalls.Load(), "tool calls seen:", filter.toolCalls.Load())
	fmt.Println("an address reached the model:", check.leaked.Load())
	fmt.Println("the question still holds it:", strings.Contains(question, "ann.lee@example.com"))
	// Output:
	// answer: 1173
	// model calls seen: 1 tool calls seen: 0
	// an address reached the model: false
	// the question still holds it: true
}
