// Package npmclients runs the official npm clients other programs use to
// reach planner: the `openai` package (the OpenAI-compatible endpoint) and
// the MCP TypeScript SDK, @modelcontextprotocol/sdk (planner mcp and the
// /mcp endpoint). Tests only import it.
//
// make test installs both, pinned to the versions below, into one
// node_modules folder (scripts/integration-deps.sh reads the versions from
// this file) and names the folder in the environment variable Env:
//
//	npm install --no-audit --no-fund --prefix "$DIR" openai@VERSION @modelcontextprotocol/sdk@VERSION
//	export PLANNER_NPM_CLIENTS="$DIR/node_modules"
//
// The tests that use them are integration tests (build tag integration);
// without the folder or node they fail, saying how to get them, and never
// skip.
package npmclients

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/planner-engine/planner/internal/integrationlog"
)

const (
	// OpenAIPackage is the official OpenAI client.
	OpenAIPackage = "openai"
	// OpenAIVersion is the pinned version of OpenAIPackage.
	OpenAIVersion = "6.49.0"
	// MCPPackage is the official MCP TypeScript SDK.
	MCPPackage = "@modelcontextprotocol/sdk"
	// MCPVersion is the pinned version of MCPPackage.
	MCPVersion = "1.32.2"
	// Env names the environment variable that holds the node_modules
	// folder both packages are installed in.
	Env = "PLANNER_NPM_CLIENTS"
)

// Suites of the integration log (scripts/integration-report.sh lists them).
const (
	// SuiteOpenAI is the suite of tests that drive planner with the openai
	// package.
	SuiteOpenAI = "openai-node"
	// SuiteMCP is the suite of tests that drive planner with the MCP SDK.
	SuiteMCP = "mcp-sdk-node"
)

// Script is a node program (an ES module) and the environment it runs with.
type Script struct {
	// Source is the program's text; it may import the packages by name.
	Source string
	// Env are NAME=value pairs added to the test process's environment.
	Env []string
	// Timeout bounds the run. Default 90 seconds.
	Timeout time.Duration
}

// Run runs s with node, where `import "openai"` and `import
// "@modelcontextprotocol/sdk/..."` resolve to the installed packages, notes
// the run under suite in the integration log, and returns what the program
// wrote to stdout. It fails t, with the program's stderr, when the program
// fails, and says how to get node or the packages when they are missing.
func Run(t testing.TB, suite string, s Script) []byte {
	t.Helper()
	modules := Modules(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not on PATH: install Node.js (Debian: apt-get install nodejs npm), then run scripts/integration-deps.sh")
	}
	integrationlog.Note(t, suite, node)
	dir := t.TempDir()
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil { // so that imports resolve from the script's folder
		t.Fatal(err)
	}
	script := filepath.Join(dir, "client.mjs")
	if err := os.WriteFile(script, []byte(s.Source), 0o644); err != nil {
		t.Fatal(err)
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 90 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Env = append(os.Environ(), s.Env...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		stderr := ""
		if errors.As(err, &ee) {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("node %s: %v (timeout %s)\nstdout:\n%s\nstderr:\n%s", script, err, timeout, out, stderr)
	}
	return out
}

// Modules returns the absolute node_modules folder named by Env, checking
// it holds both packages; it fails t, saying how to install them, when not.
func Modules(t testing.TB) string {
	t.Helper()
	modules := os.Getenv(Env)
	if modules == "" {
		t.Fatalf("%s is not set: it names the node_modules folder holding the npm packages %s@%s and %s@%s; "+
			"run scripts/integration-deps.sh out/integration/env and source that file (make test does both)",
			Env, OpenAIPackage, OpenAIVersion, MCPPackage, MCPVersion)
	}
	abs, err := filepath.Abs(modules)
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{OpenAIPackage, MCPPackage} {
		if _, err := os.Stat(filepath.Join(abs, filepath.FromSlash(pkg), "package.json")); err != nil {
			t.Fatalf("%s=%s holds no %s package (%v): run scripts/integration-deps.sh", Env, modules, pkg, err)
		}
	}
	return abs
}
