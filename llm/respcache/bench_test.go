package respcache_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/planner-engine/planner/hooks"
	"github.com/tmc/langchaingo/llms"
)

// benchReply is a reply of a ReAct step's size.
func benchReply(context.Context, *hooks.ModelCall) (*hooks.ModelResult, error) {
	return &hooks.ModelResult{Response: &llms.ContentResponse{Choices: []*llms.ContentChoice{{
		Content:        "Thought: I should look this up.\nAction: search\nAction Input: population of Lyon 2020",
		StopReason:     "stop",
		GenerationInfo: map[string]any{"PromptTokens": 812, "CompletionTokens": 24},
	}}}}, nil
}

// BenchmarkHit answers the rich request (every kind of part, a tool) from
// the cache: key, read, decode, answer.
func BenchmarkHit(b *testing.B) {
	c := open(b)
	ctx := context.Background()
	if _, err := c.ForRun(0, nil).WrapProvider(benchReply)(ctx, richCall(nil)); err != nil {
		b.Fatal(err)
	}
	fn := c.ForRun(0, nil).WrapProvider(func(context.Context, *hooks.ModelCall) (*hooks.ModelResult, error) {
		b.Fatal("a hit called the provider")
		return nil, nil
	})
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := fn(ctx, richCall(nil)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMiss makes a new request each time: key, look up, call, measure,
// scrub, encode, write and rename.
func BenchmarkMiss(b *testing.B) {
	c := open(b)
	ctx := context.Background()
	fn := c.ForRun(0, nil).WrapProvider(benchReply)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		call := richCall(func(c *hooks.ModelCall) {
			c.Messages = append(c.Messages, llms.TextParts(llms.ChatMessageTypeHuman, fmt.Sprint("question ", i)))
		})
		if _, err := fn(ctx, call); err != nil {
			b.Fatal(err)
		}
	}
}
