package mcp

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// killWait bounds the wait for a process to exit after SIGKILL.
const killWait = 10 * time.Second

// stderrShown is how much of a server's standard error an error message
// quotes.
const stderrShown = 1500

// process is a running stdio server: its pipes, the tail of its standard
// error and its exit.
type process struct {
	cmd *exec.Cmd
	// stdin and stdout are planner's ends of the server's pipes. The
	// session's transport closes them; stop closes them too, so that a
	// descendant that escaped the process group cannot keep the session
	// waiting.
	stdin  *os.File
	stdout *os.File
	stderr *ring
	// stderrDone is closed when the server's standard error reached EOF.
	stderrDone chan struct{}
	// exited is closed when the server process has exited and been
	// reaped; state and waitErr are set before.
	exited  chan struct{}
	state   *os.ProcessState
	waitErr error

	// mu guards what planner did to stop the process: why, and which
	// signals it sent the process (not those sent to its group after it
	// exited).
	mu         sync.Mutex
	stopReason string
	sent       []string
}

// childEnv is the environment of a stdio server: the variables named by
// DefaultEnvKeys (or the whole environment with InheritEnv), then Env.
func childEnv(cfg *Config) []string {
	vars := map[string]string{}
	if cfg.InheritEnv {
		for _, kv := range os.Environ() {
			if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
				vars[k] = v
			}
		}
	} else {
		for _, k := range DefaultEnvKeys() {
			// Skip exported shell functions ("() { ...; }"), which the
			// reference clients leave out as a security risk.
			if v, ok := os.LookupEnv(k); ok && !strings.HasPrefix(v, "()") {
				vars[k] = v
			}
		}
	}
	for k, v := range cfg.Env {
		vars[k] = v
	}
	env := make([]string, 0, len(vars))
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env
}

// startProcess starts argv in its own process group with pipes for its
// standard streams.
func startProcess(cfg *Config) (p *process, err error) {
	cmd := exec.Command(cfg.Command[0], cfg.Command[1:]...)
	cmd.Dir = cfg.Dir
	cmd.Env = childEnv(cfg)
	ownProcessGroup(cmd)

	var files []*os.File
	defer func() {
		if err != nil {
			for _, f := range files {
				_ = f.Close()
			}
		}
	}()
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err := pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	// The child holds its own copies now.
	_ = inR.Close()
	_ = outW.Close()
	_ = errW.Close()

	p = &process{
		cmd:        cmd,
		stdin:      inW,
		stdout:     outR,
		stderr:     newRing(StderrTailSize),
		stderrDone: make(chan struct{}),
		exited:     make(chan struct{}),
	}
	go func() {
		defer close(p.stderrDone)
		var w io.Writer = p.stderr
		if cfg.Stderr != nil {
			w = io.MultiWriter(p.stderr, cfg.Stderr)
		}
		_, _ = io.Copy(w, errR)
		_ = errR.Close()
	}()
	go func() {
		err := cmd.Wait()
		p.waitErr, p.state = err, cmd.ProcessState
		// Nothing the server started may outlive it.
		_ = killGroup(cmd.Process)
		close(p.exited)
	}()
	return p, nil
}

// stop ends the server: SIGTERM to its process group, SIGKILL after grace,
// then it waits for the exit. It closes planner's ends of the pipes.
// reason says why planner stops the server ("the client was closed");
// the description of the exit repeats it (see exitError).
func (p *process) stop(grace time.Duration, reason string) error {
	defer p.closePipes()
	if !p.beginStop(reason) {
		return nil
	}
	p.sending(termSignal)
	if err := terminateGroup(p.cmd.Process); err != nil {
		p.sending(killSignal)
		_ = killGroup(p.cmd.Process)
	}
	select {
	case <-p.exited:
		return nil
	case <-time.After(grace):
	}
	p.sending(killSignal)
	if err := killGroup(p.cmd.Process); err != nil {
		return fmt.Errorf("killing process group %d: %w", p.cmd.Process.Pid, err)
	}
	// SIGKILL cannot be refused, but the kernel may take a while to tear
	// a big process down on a busy machine.
	select {
	case <-p.exited:
		return nil
	case <-time.After(killWait):
		return fmt.Errorf("process %d did not exit within %s of SIGKILL", p.cmd.Process.Pid, killWait)
	}
}

// beginStop records why planner stops the process, unless it has exited
// already (or a reason was recorded before); it reports whether the
// process still runs.
func (p *process) beginStop(reason string) bool {
	select {
	case <-p.exited:
		return false
	default:
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopReason == "" {
		p.stopReason = reason
	}
	return true
}

// sending records that planner sends the process signal sig.
func (p *process) sending(sig string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent = append(p.sent, sig)
}

func (p *process) closePipes() {
	_ = p.stdin.Close()
	_ = p.stdout.Close()
}

// waitExit waits up to d for the process to exit, and then briefly for
// the end of its standard error; it reports whether the process exited.
func (p *process) waitExit(d time.Duration) bool {
	select {
	case <-p.exited:
	default:
		if d <= 0 {
			return false
		}
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-p.exited:
		case <-timer.C:
			return false
		}
	}
	select {
	case <-p.stderrDone:
	case <-time.After(200 * time.Millisecond):
	}
	return true
}

// stderrTail is the end of the server's standard error, for messages.
func (p *process) stderrTail() string { return p.stderr.tail(stderrShown) }

// exitError describes how the process ended, once it has (after exited
// is closed): its exit status or the signal that ended it, whether
// planner sent that signal and why, and the end of its standard error.
func (p *process) exitError() *ExitError {
	e := &ExitError{ExitCode: -1, Stderr: p.stderrTail(), Err: p.waitErr}
	if p.state != nil {
		e.ExitCode = p.state.ExitCode()
		e.Signal, e.CoreDumped = exitSignal(p.state)
		if e.Err == nil && !p.state.Success() {
			e.Err = &exec.ExitError{ProcessState: p.state}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	e.Reason = p.stopReason
	e.ByPlanner = e.Signal != "" && slices.Contains(p.sent, e.Signal)
	return e
}

// ExitError describes how a stdio server's process ended. The errors
// wrapping ErrServerDown or ErrStartup that report a server's exit wrap
// one; errors.As gets it.
type ExitError struct {
	// ExitCode is the process's exit status, or -1 when a signal ended
	// it.
	ExitCode int
	// Signal names the signal that ended the process, such as "SIGKILL"
	// or "SIGSEGV"; it is empty when the process exited by itself.
	Signal string
	// CoreDumped is set when the signal left a core dump.
	CoreDumped bool
	// ByPlanner is set when planner sent that signal, to stop the server
	// (SIGTERM, then SIGKILL after Config.KillGrace). A signal planner
	// did not send came from elsewhere: the kernel's out-of-memory
	// killer, a user, a supervisor.
	ByPlanner bool
	// Reason says why planner was stopping the server when it ended
	// (closing its standard input first, then signalling it): "the
	// client was closed", "its connection broke (EOF)", ...; empty when
	// the server ended on its own.
	Reason string
	// Stderr is the end of the server's standard error, at most 1,500
	// bytes of it.
	Stderr string
	// Err is the error of waiting for the process, an *exec.ExitError
	// when it failed; nil after a clean exit.
	Err error
}

// Error describes the exit in words, with the end of the server's
// standard error: "exited with exit status 3", "was stopped by planner
// with SIGTERM because the client was closed", "was killed by SIGKILL,
// which planner did not send (...)".
func (e *ExitError) Error() string { return withStderr(e.what(), e.Stderr) }

// what is Error without the standard error.
func (e *ExitError) what() string {
	core := ""
	if e.CoreDumped {
		core = " (core dumped)"
	}
	switch {
	case e.Signal == "" && e.ExitCode >= 0 && e.Reason != "":
		return fmt.Sprintf("exited with exit status %d after planner began stopping it because %s", e.ExitCode, e.Reason)
	case e.Signal == "" && e.ExitCode >= 0:
		return fmt.Sprintf("exited with exit status %d", e.ExitCode)
	case e.Signal == "":
		if e.Err != nil {
			return "ended: " + e.Err.Error()
		}
		return "exited"
	case e.ByPlanner:
		s := fmt.Sprintf("was stopped by planner with %s%s", e.Signal, core)
		if e.Signal == killSignal && killSignal != termSignal {
			s += fmt.Sprintf(" (it did not exit within the kill grace of %s)", termSignal)
		}
		if e.Reason != "" {
			s += " because " + e.Reason
		}
		return s
	case e.Signal == killSignal:
		return fmt.Sprintf("was killed by %s%s, which planner did not send (the kernel's out-of-memory killer, a user or a supervisor did)", e.Signal, core)
	}
	return fmt.Sprintf("was killed by %s%s, which planner did not send", e.Signal, core)
}

// Unwrap returns Err.
func (e *ExitError) Unwrap() error { return e.Err }
