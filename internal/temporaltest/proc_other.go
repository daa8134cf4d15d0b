//go:build !unix

package temporaltest

import "os/exec"

func setProcessGroup(*exec.Cmd) {}

// signalGroup kills cmd's process: other systems have no SIGTERM to send.
func signalGroup(cmd *exec.Cmd, _ bool) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill() // it may be gone already
	}
}
