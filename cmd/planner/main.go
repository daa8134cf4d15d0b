// Command planner runs LLM agent reasoning paradigms declared as YAML graphs.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/planner-engine/planner/redact"
	"github.com/planner-engine/planner/trace"
)

// Exit codes. They are documented in the README and in the root --help.
const (
	// exitOK: the command succeeded; for run, a complete answer.
	exitOK = 0
	// exitFail: the run or validation failed.
	exitFail = 1
	// exitUsage: a command-line mistake.
	exitUsage = 2
	// Exit code 3 (exitWaiting, threads.go): a run stopped to wait for a
	// human's approval of a tool call.
	// exitIncomplete: the run ended with a best-effort answer that is not
	// complete (a budget, a loop or parse failures ended it).
	exitIncomplete = 4
	// exitSIGINT and exitSIGTERM follow the shell convention 128+signal.
	exitSIGINT  = 130
	exitSIGTERM = 143
)

// stopGrace is how long a command may take to save its work and return after
// SIGINT or SIGTERM before the process exits anyway.
const stopGrace = 3 * time.Second

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go watchSignals(sigs, cancel, os.Stderr, os.Exit)
	code := execute(ctx, os.Args[1:], process{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, lookupEnv: os.LookupEnv})
	signal.Stop(sigs)
	os.Exit(code)
}

// process is what one invocation of the command line takes from the
// process around it: the standard streams and the environment lookup for
// the PLANNER_* flag variables and NO_COLOR. main passes the real ones;
// tests pass buffers and their own variables. Model providers and the
// secret scrubber still read the process environment (API keys,
// OPENAI_BASE_URL), and relative paths are taken from the working directory.
type process struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// lookupEnv looks up an environment variable as os.LookupEnv does.
	lookupEnv func(key string) (string, bool)
	// otel is the OpenTelemetry setup of the command being run; nil: none.
	otel *otelSetup
	// scrub removes secrets from what the command line prints outside a
	// run (errors, history); execute builds it. A run's own output goes
	// through its Engine's scrubber.
	scrub *redact.Scrubber
}

// getenv returns the value of the variable key, or "" when it is unset.
func (p process) getenv(key string) string {
	v, _ := p.lookupEnv(key)
	return v
}

// interrupted is the cancellation cause of a command stopped by a signal.
type interrupted struct{ sig os.Signal }

func (i *interrupted) Error() string { return "interrupted by " + signalName(i.sig) }

// exitCode is 128 + the signal number, as shells report it.
func (i *interrupted) exitCode() int {
	if i.sig == syscall.SIGTERM {
		return exitSIGTERM
	}
	return exitSIGINT
}

func signalName(s os.Signal) string {
	if s == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}

// watchSignals cancels the command's context on the first signal, so every
// run, model call, tool and compare worker stops and saves what it has. A
// second signal, or a command still busy after stopGrace, exits at once.
func watchSignals(sigs <-chan os.Signal, cancel context.CancelCauseFunc, stderr io.Writer, exit func(int)) {
	first, ok := <-sigs
	if !ok {
		return
	}
	cause := &interrupted{sig: first}
	cancel(cause)
	fmt.Fprintf(stderr, "\nplanner: %s received; stopping and saving what the run has (press Ctrl-C again to exit at once)\n", signalName(first))
	timer := time.NewTimer(stopGrace)
	defer timer.Stop()
	select {
	case second, ok := <-sigs:
		if !ok {
			return
		}
		fmt.Fprintf(stderr, "planner: %s received again; exiting now\n", signalName(second))
	case <-timer.C:
		fmt.Fprintf(stderr, "planner: still busy %s after %s; exiting now\n", cause.Error(), stopGrace)
	}
	exit(cause.exitCode())
}

// execute runs the command line args (without the program name) with a
// fresh command tree bound to p, and returns the process exit code: exitOK,
// exitFail, exitUsage, exitIncomplete, or exitSIGINT / exitSIGTERM when
// ctx was cancelled with an *interrupted cause (exitOK when the command
// returns *stoppedCleanly: serve stopped as asked). Errors are printed to
// p.stderr, scrubbed of secrets. It keeps no state between calls, so
// invocations may run concurrently.
func execute(ctx context.Context, args []string, p process) int {
	p.scrub = redact.New()
	tel := &otelSetup{stderr: p.stderr, scrub: p.scrub} // OTEL_* spans of run, resume and compare (telemetry.go)
	p.otel = tel
	root := newRoot(p)
	tel.wire(root)
	defer tel.close()
	// A nil slice would make cobra read os.Args.
	root.SetArgs(append([]string{}, args...))
	root.SetIn(p.stdin)
	root.SetOut(p.stdout)
	root.SetErr(p.stderr)
	err := root.ExecuteContext(ctx)
	var clean *stoppedCleanly
	if errors.As(err, &clean) {
		return exitOK // a server stopped by a signal as it should stop (serve.go)
	}
	var sig *interrupted
	if errors.As(context.Cause(ctx), &sig) {
		fmt.Fprintf(p.stderr, "planner: %s; stopped cleanly\n", sig.Error())
		return sig.exitCode()
	}
	if err == nil {
		return exitOK
	}
	// cobra reports a mistyped command ("planner rnu") with a plain error.
	if strings.HasPrefix(err.Error(), "unknown command ") {
		err = &usageError{err: err}
	}
	// Errors can quote what a server, a model or a tool sent back: keys,
	// and control characters that must not reach the terminal.
	msg := trace.Printable(p.scrub.String(err.Error()))
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(p.stderr, "planner: %s\nRun '%s --help' for usage.\n", msg, strings.TrimSpace("planner "+ue.cmd))
		return exitUsage
	}
	var inc *incompleteError
	if errors.As(err, &inc) {
		return exitIncomplete
	}
	var we *waitingError
	if errors.As(err, &we) {
		return exitWaiting
	}
	var se *silentError
	if !errors.As(err, &se) {
		fmt.Fprintf(p.stderr, "planner: %s\n", msg)
	}
	return exitFail
}

// usageError marks a command-line mistake (exit code 2).
type usageError struct {
	// cmd is the command's path below planner ("run", "tools call"; "" for
	// planner itself), for the "Run 'planner CMD --help'" hint.
	cmd string
	err error
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// silentError is a failure already reported to the user (exit code 1).
type silentError struct{ err error }

func (e *silentError) Error() string { return e.err.Error() }
func (e *silentError) Unwrap() error { return e.err }

// incompleteError marks a run that printed a best-effort answer which is not
// complete (exit code 4). The answer and its reason are already printed.
type incompleteError struct{ reason string }

func (e *incompleteError) Error() string { return "incomplete answer: " + e.reason }
