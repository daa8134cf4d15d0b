//go:build !unix

package score

import "os/exec"

// ownProcessGroup leaves cmd as it is: without Unix process groups a
// timed-out scorer's process is killed (exec.CommandContext's default),
// its children are not.
func ownProcessGroup(*exec.Cmd) {}
