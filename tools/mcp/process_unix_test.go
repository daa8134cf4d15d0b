//go:build unix

package mcp_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/planner-engine/planner/tools/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gone reports whether process pid has ended: it no longer exists, or
// it is a zombie waiting for a parent that does not reap it.
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

func TestCloseKillsTheServersProcessGroup(t *testing.T) {
	t.Parallel()
	c, err := mcp.Connect(context.Background(), stdioConfig(t))
	require.NoError(t, err)
	out, err := toolNamed(t, c, "spawn").Call(context.Background(), "")
	require.NoError(t, err)
	grandchild, err := strconv.Atoi(out)
	require.NoError(t, err)
	server := callPID(t, c)
	require.False(t, gone(grandchild), "the server's child runs")

	require.NoError(t, c.Close())
	assert.True(t, gone(server), "the server has exited")
	assert.Eventually(t, func() bool { return gone(grandchild) }, 3*time.Second, 10*time.Millisecond,
		"the sleep the server started is killed with its process group")
}

func TestACrashKillsWhatTheServerStarted(t *testing.T) {
	t.Parallel()
	c := connect(t, stdioConfig(t))
	out, err := toolNamed(t, c, "spawn").Call(context.Background(), "")
	require.NoError(t, err)
	grandchild, err := strconv.Atoi(out)
	require.NoError(t, err)
	_, err = toolNamed(t, c, "crash").Call(context.Background(), "")
	require.ErrorIs(t, err, mcp.ErrServerDown)
	assert.Eventually(t, func() bool { return gone(grandchild) }, 3*time.Second, 10*time.Millisecond)
}

func TestStartupTimeoutWithACommandThatDoesNotSpeakMCP(t *testing.T) {
	t.Parallel()
	cfg := stdioConfig(t)
	cfg.Command = []string{"sleep", "60"}
	cfg.StartupTimeout = 300 * time.Millisecond
	start := time.Now()
	_, err := mcp.Connect(context.Background(), cfg)
	require.ErrorIs(t, err, mcp.ErrStartup)
	assert.Contains(t, err.Error(), "startup_timeout")
	assert.Contains(t, err.Error(), "sleep 60")
	assert.Less(t, time.Since(start), 3*time.Second)
}

// slowCallDuring starts a slow call on c, runs act once the call is in
// flight, and returns the call's error.
func slowCallDuring(t *testing.T, c *mcp.Client, act func()) error {
	t.Helper()
	errs := make(chan error, 1)
	go func() {
		_, err := toolNamed(t, c, "slow").Call(context.Background(), `{"seconds": 30}`)
		errs <- err
	}()
	require.Eventually(t, func() bool {
		out, err := toolNamed(t, c, "inflight").Call(context.Background(), "")
		return err == nil && out == "1"
	}, 10*time.Second, 10*time.Millisecond)
	act()
	select {
	case err := <-errs:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("the call in flight did not fail")
		return nil
	}
}

// exitOf returns the *mcp.ExitError err wraps.
func exitOf(t *testing.T, err error) *mcp.ExitError {
	t.Helper()
	require.ErrorIs(t, err, mcp.ErrServerDown)
	var ee *mcp.ExitError
	require.ErrorAs(t, err, &ee, "%v", err)
	return ee
}

func TestAKillFromOutsideNamesTheSignal(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		cfg := stdioConfig(t)
		cfg.MaxRestarts = -1
		c := connect(t, cfg)
		pid := callPID(t, c)
		err := slowCallDuring(t, c, func() { require.NoError(t, syscall.Kill(pid, sig)) })
		ee := exitOf(t, err)
		name := map[syscall.Signal]string{syscall.SIGKILL: "SIGKILL", syscall.SIGTERM: "SIGTERM"}[sig]
		assert.Equal(t, name, ee.Signal)
		assert.Equal(t, -1, ee.ExitCode)
		assert.False(t, ee.ByPlanner, "planner did not send %s", name)
		assert.Empty(t, ee.Reason)
		var xe *exec.ExitError
		assert.ErrorAs(t, err, &xe, "the wait's error is wrapped too")
		assert.Contains(t, err.Error(), "was killed by "+name+", which planner did not send")
		assert.Contains(t, err.Error(), "the call did not complete")

		// The next call, refused, says the same.
		_, err = toolNamed(t, c, "pid").Call(context.Background(), "")
		assert.Equal(t, name, exitOf(t, err).Signal)
		assert.Contains(t, err.Error(), "was killed by "+name)
		assert.Contains(t, err.Error(), "max_restarts")
	}
	cfg := stdioConfig(t)
	cfg.MaxRestarts = -1
	c := connect(t, cfg)
	err := slowCallDuring(t, c, func() { require.NoError(t, syscall.Kill(callPID(t, c), syscall.SIGKILL)) })
	assert.Contains(t, err.Error(), "the kernel's out-of-memory killer, a user or a supervisor")
}

func TestAServerPlannerStopsSaysWhy(t *testing.T) {
	t.Parallel()
	cfg := stdioConfig(t)
	cfg.MaxRestarts = -1
	c := connect(t, cfg)
	// The server closes its stdout and stays up: planner stops it, and
	// the signal is not the cause, the broken connection is.
	_, err := toolNamed(t, c, "hangup").Call(context.Background(), "")
	ee := exitOf(t, err)
	assert.Equal(t, "SIGTERM", ee.Signal)
	assert.True(t, ee.ByPlanner)
	assert.Contains(t, ee.Reason, "its connection broke")
	assert.Contains(t, ee.Stderr, "test server: hanging up")
	assert.Contains(t, err.Error(), "was stopped by planner with SIGTERM because its connection broke")
	assert.Contains(t, err.Error(), "its stderr ends with:\ntest server: hanging up")

	// One that ignores SIGTERM is killed after the grace, and says so.
	c = connect(t, cfg)
	_, err = toolNamed(t, c, "stubborn").Call(context.Background(), "")
	require.ErrorIs(t, err, mcp.ErrServerDown)
	require.Eventually(t, func() bool {
		_, err = toolNamed(t, c, "pid").Call(context.Background(), "")
		var ee *mcp.ExitError
		return errors.As(err, &ee)
	}, 10*time.Second, 50*time.Millisecond, "the refusal reports the exit once the server is gone")
	ee = exitOf(t, err)
	assert.Equal(t, "SIGKILL", ee.Signal)
	assert.True(t, ee.ByPlanner)
	assert.Contains(t, err.Error(), "was stopped by planner with SIGKILL (it did not exit within the kill grace of SIGTERM) because its connection broke")
	assert.Contains(t, err.Error(), "test server: ignoring SIGTERM")
}

func TestACrashCarriesItsExitStatus(t *testing.T) {
	t.Parallel()
	cfg := stdioConfig(t)
	marker := filepath.Join(t.TempDir(), "fail")
	cfg.Env[failIfEnv] = marker
	c := connect(t, cfg)
	_, err := toolNamed(t, c, "crash").Call(context.Background(), "")
	ee := exitOf(t, err)
	assert.Equal(t, 3, ee.ExitCode)
	assert.Empty(t, ee.Signal)
	assert.False(t, ee.ByPlanner)
	assert.Contains(t, ee.Stderr, "test server: crashing now")
	var xe *exec.ExitError
	require.ErrorAs(t, err, &xe)
	assert.Equal(t, 3, xe.ExitCode())

	// The restart fails too: the error says why the server went down
	// and why it would not start again.
	require.NoError(t, os.WriteFile(marker, nil, 0o644))
	_, err = toolNamed(t, c, "pid").Call(context.Background(), "")
	require.ErrorIs(t, err, mcp.ErrServerDown)
	require.ErrorIs(t, err, mcp.ErrStartup)
	assert.Contains(t, err.Error(), "exited with exit status 3, and restarting it failed")
	assert.Contains(t, err.Error(), "exit status 2 during the MCP handshake")
	assert.Contains(t, err.Error(), "the failure marker exists")
	var codes []int
	for _, e := range unwrapAll(err) {
		if ee, ok := e.(*mcp.ExitError); ok {
			codes = append(codes, ee.ExitCode)
		}
	}
	assert.ElementsMatch(t, []int{3, 2}, codes, "both exits are wrapped")
}

// unwrapAll returns err and every error it wraps, depth first.
func unwrapAll(err error) []error {
	out := []error{err}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		if w := u.Unwrap(); w != nil {
			out = append(out, unwrapAll(w)...)
		}
	case interface{ Unwrap() []error }:
		for _, w := range u.Unwrap() {
			out = append(out, unwrapAll(w)...)
		}
	}
	return out
}
