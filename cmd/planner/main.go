// Command planner runs LLM agent reasoning paradigms declared as YAML graphs.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:]))
}

func run(ctx context.Context, args []string) int {
	root := newRoot()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	if ctx.Err() != nil {
		fmt.Fprintln(os.Stderr, "planner: interrupted; stopped cleanly")
		return exitFail
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(os.Stderr, "planner: %v\nRun 'planner %s --help' for usage.\n", err, ue.cmd)
		return exitUsage
	}
	var se *silentError
	if !errors.As(err, &se) {
		fmt.Fprintf(os.Stderr, "planner: %v\n", err)
	}
	return exitFail
}

// usageError marks a command-line mistake (exit code 2).
type usageError struct {
	cmd string
	err error
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// silentError is a failure already reported to the user (exit code 1).
type silentError struct{ err error }

func (e *silentError) Error() string { return e.err.Error() }
func (e *silentError) Unwrap() error { return e.err }
