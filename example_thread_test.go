package planner_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/full"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/sqlitestore"
)

// Run a durable thread whose calculator calls need a human's approval: the
// run stops and saves itself when the model calls the calculator, and a
// later Resume (in this process or another) approves the call and
// finishes the run without repeating any model or tool call.
func ExamplePipeline_Resume() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "planner-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := sqlitestore.Open(ctx, filepath.Join(dir, "threads.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	eng, err := planner.New(full.Options()...)
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	p, err := eng.Load(ctx, "examples/pipelines/react_approval.yaml", planner.WithLLM("scripted:examples/scripts/react_demo.yaml"))
	if err != nil {
		log.Fatal(err)
	}
	q := "By how many kilometres does Jupiter's equatorial diameter exceed Saturn's?"
	res, err := p.Run(ctx, q, planner.WithThread(store, "jupiter"))
	var wait *journal.WaitingError
	if !errors.As(err, &wait) {
		log.Fatalf("expected the run to wait, got %v", err)
	}
	fmt.Println("status:", res.Status)
	fmt.Println("waits for:", wait.Approval.Tool, wait.Approval.Input)

	res, err = p.Resume(ctx, store, "jupiter", planner.WithDecision(journal.Decision{Approved: true, By: "example"}))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("status:", res.Status)
	fmt.Println("answer:", res.Answer)
	fmt.Println("replayed:", res.Replayed, "new:", res.Live)
	// Output:
	// status: waiting
	// waits for: calculator 142984 - 120536
	// status: done
	// answer: 22448
	// replayed: 5 new: 4
}
