// Command embed runs a pipeline of the planner engine from an outside Go
// module (package github.com/planner-engine/planner) with the command
// line's full set of providers, tools and keyword index (package full),
// so that any shipped pipeline and any provider works. By default it runs
// the shipped chain-of-thought pipeline on its demo task with the scripted
// model, offline:
//
//	go run .
//	go run . -llm openai:gpt-4o-mini "What is 17 * 23 + 4?"
//	go run . -config ../../configs/react.yaml -llm scripted:../scripts/react_demo.yaml \
//	  "By how many kilometres does Jupiter's equatorial diameter exceed Saturn's?"
//
// It compiles every provider SDK and tool library; the program in
// ./minimal registers only what it names and compiles far less.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/full"
)

func main() {
	cfg := flag.String("config", "../../configs/cot.yaml", "pipeline YAML file")
	model := flag.String("llm", "scripted:../../examples/scripts/cot_demo.yaml", "model as provider:model")
	flag.Parse()
	question := strings.Join(flag.Args(), " ")
	if question == "" {
		question = "A farmer has 3 fields of 17 rows with 23 plants each. How many plants?"
	}
	if err := run(context.Background(), *cfg, *model, question); err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg, model, question string) error {
	eng, err := planner.New(full.Options()...)
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
	fmt.Printf("complete: %t, model: %s\n", res.Complete, p.Model())
	fmt.Printf("usage: %d model calls, %d prompt + %d completion tokens (estimated: %t), $%.6f\n",
		res.Usage.ModelCalls, res.Usage.PromptTokens, res.Usage.CompletionTokens, res.Usage.Estimated, res.Usage.CostUSD)
	return nil
}
