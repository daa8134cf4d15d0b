package mcp

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
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
func (p *process) stop(grace time.Duration) error {
	defer p.closePipes()
	select {
	case <-p.exited:
		return nil
	default:
	}
	if err := terminateGroup(p.cmd.Process); err != nil {
		_ = killGroup(p.cmd.Process)
	}
	select {
	case <-p.exited:
		return nil
	case <-time.After(grace):
	}
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

// exitText describes a process exit: "exited with exit status 3",
// "was killed (signal: killed)".
func exitText(state *os.ProcessState, waitErr error) string {
	if state == nil {
		if waitErr != nil {
			return "ended: " + waitErr.Error()
		}
		return "exited"
	}
	if state.Exited() {
		return "exited with " + state.String()
	}
	return "was stopped (" + state.String() + ")"
}
