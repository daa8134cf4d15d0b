package layout_test

import (
	"context"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/planner-engine/planner/internal/layout"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/planner-engine/planner"

// listImports returns one line per package of the module (tests
// excluded): its import path, then every package it imports directly, as
// `go list` reports them.
func listImports(t *testing.T) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	cmd := exec.CommandContext(ctx, "go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	require.NoError(t, err, "go list: %s", out)
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// imports lists every package of the module (tests excluded) with its
// direct imports inside the module.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	graph := map[string][]string{}
	for _, line := range listImports(t) {
		fields := strings.Fields(line)
		pkg := rel(fields[0])
		graph[pkg] = nil
		for _, imp := range fields[1:] {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				graph[pkg] = append(graph[pkg], rel(imp))
			}
		}
	}
	require.Contains(t, graph, "graph", "go list found the module's packages")
	return graph
}

// rel is an import path relative to the module ("." for the root package).
func rel(path string) string {
	if path == module {
		return "."
	}
	return strings.TrimPrefix(path, module+"/")
}

// deps returns every module package pkg imports, directly or not.
func deps(graph map[string][]string, pkg string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		for _, d := range graph[p] {
			if !seen[d] {
				seen[d] = true
				walk(d)
			}
		}
	}
	walk(pkg)
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// under reports whether pkg is one of prefixes or inside one of them.
func under(pkg string, prefixes ...string) bool {
	for _, p := range prefixes {
		if pkg == p || strings.HasPrefix(pkg, p+"/") {
			return true
		}
	}
	return false
}

// paradigms are the packages that implement node kinds. They may use the
// executor (for ReAct sub-loops) but not each other.
var paradigms = []string{"executor", "planner", "replanner", "nodes"}

// floors maps every package of Layers to its floor, 1 for the lowest.
func floors(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	for i, l := range layout.Layers() {
		for _, p := range l.Packages {
			_, dup := out[p]
			require.False(t, dup, "%s is on two floors of layout.Layers", p)
			out[p] = i + 1
		}
	}
	return out
}

// checkEveryImportGoesDown: every package is on a floor of layout.Layers,
// every floor's package exists, and every import goes to a lower floor.
func checkEveryImportGoesDown(t *testing.T, graph map[string][]string) {
	fl := floors(t)
	for pkg := range fl {
		if _, ok := graph[pkg]; !ok {
			t.Errorf("layout.Layers lists %s, which go list does not find: remove it", pkg)
		}
	}
	for _, pkg := range slices.Sorted(maps.Keys(graph)) {
		f, ok := fl[pkg]
		if !ok {
			t.Errorf("%s is on no floor: add it to layout.Layers (internal/layout/layers.go) above every package it imports", pkg)
			continue
		}
		for _, d := range graph[pkg] {
			if fl[d] >= f {
				t.Errorf("%s (floor %d) imports %s (floor %d): imports go down only", pkg, f, d, fl[d])
			}
		}
	}
}

// longestChain returns the longest chain of imports that starts at pkg.
func longestChain(graph map[string][]string, pkg string, memo map[string][]string) []string {
	if c, ok := memo[pkg]; ok {
		return c
	}
	best := []string{pkg}
	for _, d := range graph[pkg] {
		if c := longestChain(graph, d, memo); len(c)+1 > len(best) {
			best = append([]string{pkg}, c...)
		}
	}
	memo[pkg] = best
	return best
}

func checkLongestChain(t *testing.T, graph map[string][]string) {
	memo := map[string][]string{}
	var longest []string
	for _, pkg := range slices.Sorted(maps.Keys(graph)) {
		if c := longestChain(graph, pkg, memo); len(c) > len(longest) {
			longest = c
		}
	}
	t.Logf("longest import chain (%d packages): %s", len(longest), strings.Join(longest, " -> "))
	assert.LessOrEqual(t, len(longest), layout.MaxChain, "longest import chain: %s", strings.Join(longest, " -> "))
}

// testHarnesses are packages that only tests import.
var testHarnesses = []string{"internal/hostile", "internal/integrationlog", "internal/layout", "internal/temporaltest", "server/browsertest", "tools/mcp/mcptest"}

// checkTelemetryImportsOnlyItsFloor keeps the OpenTelemetry package light:
// llm, node and pipeline import it, so it imports (directly) only the run's
// data and the trace scrubbing below them.
func checkTelemetryImportsOnlyItsFloor(t *testing.T, graph map[string][]string) {
	ok := []string{"trace", "redact", "state", "config"}
	require.Contains(t, graph, "telemetry")
	for _, d := range graph["telemetry"] {
		if !slices.Contains(ok, d) {
			t.Errorf("telemetry imports %s; it imports only %v", d, ok)
		}
	}
}

func checkParadigmsDoNotImportEachOther(t *testing.T, graph map[string][]string) {
	for pkg := range graph {
		if !under(pkg, paradigms...) {
			continue
		}
		own := strings.SplitN(pkg, "/", 2)[0]
		for _, d := range deps(graph, pkg) {
			if !under(d, paradigms...) || under(d, own) || under(d, "executor") {
				continue
			}
			t.Errorf("paradigm %s imports paradigm %s (only the executor may be shared)", pkg, d)
		}
		for _, d := range deps(graph, pkg) {
			if under(d, "pipeline", "paradigms", "eval", "internal/app", "cmd", ".") {
				t.Errorf("paradigm %s imports %s, which sits above it", pkg, d)
			}
		}
	}
}

func checkOnlyTheWiringAndEvaluationKnowTheSimulator(t *testing.T, graph map[string][]string) {
	for pkg := range graph {
		// autopilot/fit learns a policy from comparisons' results, so it
		// reads eval/compare's store; the policy it writes (package
		// autopilot) and the node that applies it know nothing of eval.
		// mcpserver serves the server's runs over MCP: it reaches eval
		// only through server.
		if under(pkg, "eval", "internal/app", "cmd", "server", "autopilot/fit", "mcpserver") || under(pkg, testHarnesses...) {
			continue
		}
		for _, d := range deps(graph, pkg) {
			if under(d, "eval") {
				t.Errorf("%s imports %s: production code below the evaluation layer must not know the simulator or the suites", pkg, d)
			}
		}
	}
}

func checkPipelineImportsNoParadigm(t *testing.T, graph map[string][]string) {
	for _, d := range deps(graph, "pipeline") {
		if under(d, append([]string{"paradigms"}, paradigms...)...) {
			t.Errorf("pipeline imports %s; it takes node constructors through pipeline.Constructors", d)
		}
	}
}

func checkSimulatorImportsNoParadigm(t *testing.T, graph map[string][]string) {
	require.Contains(t, graph, "eval/sim")
	for _, d := range deps(graph, "eval/sim") {
		if under(d, append([]string{"pipeline", "paradigms", "internal/app", "cmd", "."}, paradigms...)...) {
			t.Errorf("eval/sim imports %s; the simulator reads prompts and call metadata as a model would, not the nodes' code", d)
		}
	}
}

// checkServerIsATopFloor: the HTTP API (server) sits beside internal/app,
// under cmd: it uses the public API and the comparison runner, never the
// simulator (the command line hands it an engine that has one), the CLI
// wiring or the commands; only cmd imports it.
func checkServerIsATopFloor(t *testing.T, graph map[string][]string) {
	require.Contains(t, graph, "server")
	for _, d := range deps(graph, "server") {
		if under(d, "eval/sim", "internal/app", "cmd") {
			t.Errorf("server imports %s; it takes its engine from its caller", d)
		}
	}
	for pkg, imps := range graph {
		// mcpserver is a front door over the server's Go API (runs, events,
		// approvals); nothing below the command line but it may import it.
		if slices.Contains(imps, "server") && !under(pkg, "cmd", "mcpserver") {
			t.Errorf("%s imports server; only cmd and mcpserver may", pkg)
		}
	}
}

// TestImportRules lists the module's imports once (go list is the slow
// part) and checks each rule on that graph in its own subtest.
func TestImportRules(t *testing.T) {
	graph := imports(t)
	t.Run("EveryImportGoesDown", func(t *testing.T) { checkEveryImportGoesDown(t, graph) })
	t.Run("LongestChain", func(t *testing.T) { checkLongestChain(t, graph) })
	t.Run("TelemetryImportsOnlyItsFloor", func(t *testing.T) { checkTelemetryImportsOnlyItsFloor(t, graph) })
	t.Run("ParadigmsDoNotImportEachOther", func(t *testing.T) { checkParadigmsDoNotImportEachOther(t, graph) })
	t.Run("OnlyTheWiringAndEvaluationKnowTheSimulator", func(t *testing.T) { checkOnlyTheWiringAndEvaluationKnowTheSimulator(t, graph) })
	t.Run("PipelineImportsNoParadigm", func(t *testing.T) { checkPipelineImportsNoParadigm(t, graph) })
	t.Run("SimulatorImportsNoParadigm", func(t *testing.T) { checkSimulatorImportsNoParadigm(t, graph) })
	t.Run("ServerIsATopFloor", func(t *testing.T) { checkServerIsATopFloor(t, graph) })
	t.Run("TemporalIsATopFloor", func(t *testing.T) { checkTemporalIsATopFloor(t, graph) })
}

// checkTemporalIsATopFloor: the Temporal runner (temporal) sits beside
// server and internal/app, under cmd: it uses the public API, never the
// simulator, the CLI wiring or the commands; only cmd imports it, so the
// default run path never links the Temporal SDK.
func checkTemporalIsATopFloor(t *testing.T, graph map[string][]string) {
	require.Contains(t, graph, "temporal")
	for _, d := range deps(graph, "temporal") {
		if under(d, "eval", "internal/app", "cmd", "server") {
			t.Errorf("temporal imports %s; it takes its engine from its caller", d)
		}
	}
	for pkg, imps := range graph {
		if slices.Contains(imps, "temporal") && !under(pkg, "cmd") {
			t.Errorf("%s imports temporal; only cmd may", pkg)
		}
	}
}

// TestOnlyTemporalAndCmdImportTheTemporalSDK keeps Temporal opt-in: no
// package but temporal, the commands and the tests' dev-server harness
// (internal/temporaltest, which no production package imports) imports
// go.temporal.io (tests excluded), so a program that does not run on
// Temporal does not link it.
func TestOnlyTemporalAndCmdImportTheTemporalSDK(t *testing.T) {
	seen := false
	for _, line := range listImports(t) {
		fields := strings.Fields(line)
		pkg := rel(fields[0])
		for _, imp := range fields[1:] {
			if imp != "go.temporal.io" && !strings.HasPrefix(imp, "go.temporal.io/") {
				continue
			}
			seen = seen || pkg == "temporal"
			if !under(pkg, "temporal", "cmd", "internal/temporaltest") {
				t.Errorf("%s imports %s; only temporal and cmd may import the Temporal SDK", pkg, imp)
			}
		}
		for _, imp := range fields[1:] {
			if imp == module+"/internal/temporaltest" {
				t.Errorf("%s imports internal/temporaltest; only tests may", pkg)
			}
		}
	}
	assert.True(t, seen, "go list shows temporal importing the SDK")
}
