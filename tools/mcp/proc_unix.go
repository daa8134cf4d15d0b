//go:build unix

package mcp

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// The names stop records for the signals it sends, as exitSignal names
// them.
const (
	termSignal = "SIGTERM"
	killSignal = "SIGKILL"
)

// ownProcessGroup makes the command the leader of a new process group, so
// that the server and everything it starts can be signalled together.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// terminateGroup asks the process group led by p to exit (SIGTERM).
func terminateGroup(p *os.Process) error { return signalGroup(p, syscall.SIGTERM) }

// killGroup kills the process group led by p (SIGKILL).
func killGroup(p *os.Process) error { return signalGroup(p, syscall.SIGKILL) }

func signalGroup(p *os.Process, sig syscall.Signal) error {
	if p == nil || p.Pid <= 0 {
		return nil
	}
	err := syscall.Kill(-p.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil // the group is gone already
	}
	return err
}

// signalNames are the names of the signals that usually end a server.
var signalNames = map[syscall.Signal]string{
	syscall.SIGABRT: "SIGABRT", syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE",
	syscall.SIGHUP: "SIGHUP", syscall.SIGILL: "SIGILL", syscall.SIGINT: "SIGINT",
	syscall.SIGKILL: killSignal, syscall.SIGPIPE: "SIGPIPE", syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGSEGV: "SIGSEGV", syscall.SIGTERM: termSignal, syscall.SIGTRAP: "SIGTRAP",
	syscall.SIGUSR1: "SIGUSR1", syscall.SIGUSR2: "SIGUSR2", syscall.SIGXCPU: "SIGXCPU",
	syscall.SIGXFSZ: "SIGXFSZ",
}

// exitSignal names the signal that ended a process ("SIGKILL"), or
// returns "" when it exited by itself; core reports a core dump.
func exitSignal(state *os.ProcessState) (name string, core bool) {
	ws, ok := state.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return "", false
	}
	name, ok = signalNames[ws.Signal()]
	if !ok {
		name = "signal " + strconv.Itoa(int(ws.Signal()))
	}
	return name, ws.CoreDump()
}
