package planner_test

import (
	"context"
	"fmt"
	"log"

	"github.com/planner-engine/planner"
)

// Load a shipped pipeline and run one task with the command line's
// defaults. The scripted model (replies from a script, offline) stands in
// for a real one such as planner.WithLLM("openai:gpt-4o-mini").
func Example() {
	ctx := context.Background()
	eng, err := planner.New()
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	p, err := eng.Load(ctx, "configs/cot.yaml", planner.WithLLM("scripted:examples/scripts/cot_demo.yaml"))
	if err != nil {
		log.Fatal(err)
	}
	res, err := p.Run(ctx, "A farmer has 3 fields of 17 rows with 23 plants each. How many plants?")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("answer:", res.Answer)
	fmt.Println("complete:", res.Complete)
	fmt.Println("model calls:", res.Usage.ModelCalls, "estimated tokens:", res.Usage.Estimated)
	// Output:
	// answer: 1173
	// complete: true
	// model calls: 1 estimated tokens: true
}
