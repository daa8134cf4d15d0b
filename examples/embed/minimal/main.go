// Command minimal embeds the planner engine with only what it names: the
// offline providers every Engine has ("scripted" and "replay"), the real
// provider openai (package llm/provider/openai) and the calculator tool
// (package tools/toolset). It compiles none of the other providers' SDKs
// (Google's genai, gRPC), no search index, no SQLite, no MCP SDK and no
// OpenTelemetry exporter. By default it runs a ReAct pipeline with the
// calculator on its demo task with the scripted model, offline:
//
//	go run .
//	OPENAI_API_KEY=... go run . -llm openai:gpt-4o-mini "What is 17 * 23 + 4?"
//
// A pipeline that lists another tool, or a model of another provider,
// fails to load with an error that names the option registering it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/llm/provider/openai"
	"github.com/planner-engine/planner/tools/toolset"
)

func main() {
	cfg := flag.String("config", "pipeline.yaml", "pipeline YAML file")
	model := flag.String("llm", "scripted:script.yaml", "model as provider:model")
	flag.Parse()
	question := strings.Join(flag.Args(), " ")
	if question == "" {
		question = "A farmer has 3 fields of 17 rows with 23 plants each. How many plants?"
	}
	if err := run(context.Background(), *cfg, *model, question); err != nil {
		fmt.Fprintln(os.Stderr, "minimal:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg, model, question string) error {
	eng, err := planner.New(
		planner.WithProviders(openai.Adapter()),
		planner.WithTools(toolset.New(toolset.Calculator())),
	)
	if err != nil {
		return err
	}
	defer eng.Close()
	p, err := eng.Load(ctx, cfg, planner.WithLLM(model))
	if err != nil {
		return err
	}
	res, err := p.Run(ctx, question)
	if err != nil {
		return err
	}
	fmt.Printf("answer: %s\n", res.Answer)
	fmt.Printf("complete: %t, model: %s, providers: %s\n", res.Complete, p.Model(), strings.Join(eng.Providers(), ", "))
	return nil
}
