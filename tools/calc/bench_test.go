package calc

import (
	"context"
	"testing"
)

func BenchmarkEval(b *testing.B) {
	ctx := context.Background()
	const expr = "(1,250.75 - 320) * 1.08 / 3 + 2^10 - sqrt(16) + max(1, 2.5, 3)"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Eval(ctx, expr); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEvalRejectsHugeWork(b *testing.B) {
	ctx := context.Background()
	for _, expr := range []string{"9^9^9^9", "2^99999999", "100000!"} {
		b.Run(expr, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Eval(ctx, expr); err == nil {
					b.Fatal("expected an error")
				}
			}
		})
	}
}

func BenchmarkToolCall(b *testing.B) {
	ctx := context.Background()
	tool := New()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool.Call(ctx, `{"expression": "123456789 * 987654321 / 7"}`); err != nil {
			b.Fatal(err)
		}
	}
}
