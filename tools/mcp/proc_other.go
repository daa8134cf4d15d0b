//go:build !unix

package mcp

import (
	"errors"
	"os"
	"os/exec"
)

// The names stop records for the signals it sends: without process
// groups both are a kill, and exitSignal reports no signal.
const (
	termSignal = "kill"
	killSignal = "kill"
)

// exitSignal returns "": this platform does not report the signal that
// ended a process.
func exitSignal(*os.ProcessState) (name string, core bool) { return "", false }

// ownProcessGroup is a no-op where process groups are not available; Close
// then stops only the server process itself.
func ownProcessGroup(*exec.Cmd) {}

// terminateGroup kills the process p: without process groups there is no
// gentler signal that every platform supports.
func terminateGroup(p *os.Process) error { return killGroup(p) }

// killGroup kills the process p.
func killGroup(p *os.Process) error {
	if p == nil {
		return nil
	}
	if err := p.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}
