//go:build unix

package mcp

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
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
