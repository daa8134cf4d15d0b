// Package mcptest provides real MCP servers for tests.
//
// ManyToolsServer serves, in process over streamable HTTP, a server that
// lists as many generated tools as asked (10,000 say), for tests of what
// reaches a prompt; it needs neither npm nor a network.
//
// FilesystemServer returns the command that runs the reference filesystem
// server, @modelcontextprotocol/server-filesystem from npm, pinned to
// FilesystemVersion. make test installs it ahead of time
// (scripts/integration-deps.sh reads the version from this file) and names
// the binary in the environment variable FilesystemBinEnv:
//
//	npm install --no-audit --no-fund --prefix "$DIR" @modelcontextprotocol/server-filesystem@2026.8.31
//	export PLANNER_MCP_FILESYSTEM_BIN="$DIR/node_modules/.bin/mcp-server-filesystem"
//
// Without the variable, the first test that asks installs it the same way
// into the user's cache directory, once; without node or npm, the test
// fails, saying how to get them. make test runs scripts/integration-deps.sh,
// which installs the server and sets the variable.
//
// The tests that use the filesystem server are integration tests, built
// only with the build tag integration (go test -tags integration; make
// test sets it).
package mcptest

import (
	"context"
	"errors"
	"github.com/planner-engine/planner/internal/integrationlog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/gofrs/flock"
)

const (
	// FilesystemPackage is the npm package of the reference filesystem
	// server.
	FilesystemPackage = "@modelcontextprotocol/server-filesystem"
	// FilesystemVersion is the pinned version of FilesystemPackage.
	FilesystemVersion = "2026.8.31"
	// FilesystemBinEnv names the environment variable that, when set,
	// holds the path of an installed mcp-server-filesystem binary.
	FilesystemBinEnv = "PLANNER_MCP_FILESYSTEM_BIN"
)

// installTimeout bounds the npm install.
const installTimeout = 5 * time.Minute

// FilesystemServer returns the argv that starts the reference filesystem
// server with root as its only allowed directory. It uses the binary named
// by $PLANNER_MCP_FILESYSTEM_BIN (a missing file is a test failure); else
// it installs the pinned package with npm into
// <user cache dir>/planner-test/npm, once across test processes (a file
// lock guards the install). It fails the test, saying what is missing and
// how to get it, when node or npm is not on PATH or the install fails (as
// it does offline).
func FilesystemServer(t testing.TB, root string) []string {
	t.Helper()
	bin := filesystemBin(t)
	integrationlog.Note(t, "mcp-filesystem", bin)
	return []string{bin, root}
}

func filesystemBin(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv(FilesystemBinEnv); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("%s=%s: %v", FilesystemBinEnv, bin, err)
		}
		return bin
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("%s is not set and node, which runs %s, is not on PATH: install Node.js and npm (Debian: apt-get install nodejs npm), "+
			"or set %s to an installed mcp-server-filesystem (scripts/integration-deps.sh, which make test runs, installs it)", FilesystemBinEnv, FilesystemPackage, FilesystemBinEnv)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	prefix := filepath.Join(cache, "planner-test", "npm")
	name := "mcp-server-filesystem"
	if runtime.GOOS == "windows" {
		name += ".cmd"
	}
	bin := filepath.Join(prefix, "node_modules", ".bin", name)
	// The marker is written after a complete install of this version, so
	// that an interrupted or older install is redone.
	marker := filepath.Join(prefix, ".installed-server-filesystem@"+FilesystemVersion)
	if exists(bin) && exists(marker) {
		return bin
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("%s is not set and npm is not on PATH to install %s@%s: install npm (Debian: apt-get install npm), "+
			"or set %s to an installed mcp-server-filesystem (scripts/integration-deps.sh, which make test runs, installs it)", FilesystemBinEnv, FilesystemPackage, FilesystemVersion, FilesystemBinEnv)
	}
	if err := os.MkdirAll(prefix, 0o755); err != nil {
		t.Fatalf("creating %s: %v", prefix, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
	defer cancel()
	lock := flock.New(filepath.Join(prefix, ".install.lock"))
	locked, err := lock.TryLockContext(ctx, 100*time.Millisecond)
	if err != nil || !locked {
		t.Fatalf("locking %s: %v", lock.Path(), errors.Join(err, ctx.Err()))
	}
	defer func() { _ = lock.Unlock() }()
	if exists(bin) && exists(marker) {
		return bin // another test process installed it meanwhile
	}
	t.Logf("installing %s@%s into %s", FilesystemPackage, FilesystemVersion, prefix)
	cmd := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--prefix", prefix, FilesystemPackage+"@"+FilesystemVersion)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("installing %s@%s with npm failed (offline? set %s to an installed server): %v\n%s", FilesystemPackage, FilesystemVersion, FilesystemBinEnv, err, out)
	}
	if !exists(bin) {
		t.Fatalf("npm installed %s@%s but %s is missing", FilesystemPackage, FilesystemVersion, bin)
	}
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatalf("writing %s: %v", marker, err)
	}
	return bin
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
