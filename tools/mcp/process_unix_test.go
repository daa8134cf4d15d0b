//go:build unix

package mcp_test

import (
	"context"
	"errors"
	"os"
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
