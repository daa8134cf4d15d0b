package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/llm/provider"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// complete runs cobra's hidden __complete command, as a shell's
// completion script does, and returns the candidates (without their
// descriptions) and the directive line.
func complete(t *testing.T, env []string, args ...string) (cands []string, directive string) {
	t.Helper()
	res := execPlanner(t, invocation{args: append([]string{"__complete"}, args...), env: env})
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.NotContains(t, res.stderr, "planner:", "completion prints no error")
	assert.NotContains(t, res.stdout, "Error", "completion prints no error")
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	require.NotEmpty(t, lines)
	for _, l := range lines[:len(lines)-1] {
		value, _, _ := strings.Cut(l, "\t")
		cands = append(cands, value)
	}
	return cands, lines[len(lines)-1]
}

func TestCompleteLLM(t *testing.T) {
	cands, _ := complete(t, nil, "run", "--llm", "")
	for _, p := range provider.Providers() {
		assert.Contains(t, cands, p+":")
	}
	for _, kind := range []string{"sim", "sim:", "scripted", "scripted:", "replay:"} {
		assert.Contains(t, cands, kind)
	}

	cands, _ = complete(t, nil, "run", "--llm", "sim:")
	want := []string{}
	for _, name := range sim.ProfileNames() {
		want = append(want, "sim:"+name)
	}
	assert.Equal(t, want, cands, "every sim profile")
	cands, _ = complete(t, nil, "compare", "--llm", "sim:no")
	assert.Equal(t, []string{"sim:noisy"}, cands)

	scripts := filepath.Join(repoRoot, "examples", "scripts") + "/"
	cands, _ = complete(t, nil, "run", "--llm", "scripted:"+scripts+"cot_")
	assert.Contains(t, cands, "scripted:"+scripts+"cot_demo.yaml")
	for _, c := range cands {
		assert.True(t, strings.HasPrefix(c, "scripted:"+scripts+"cot_") && strings.HasSuffix(c, ".yaml"), c)
	}

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run.jsonl"), []byte("{}\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "more"), 0o700))
	cands, directive := complete(t, nil, "run", "--llm", "replay:"+dir+"/")
	assert.ElementsMatch(t, []string{"replay:" + dir + "/run.jsonl", "replay:" + dir + "/more/"}, cands, "cassettes and folders, not other files")
	assert.Equal(t, ":6", directive, "no space after a folder; no file completion of the shell")
}

func TestCompleteConfigFiles(t *testing.T) {
	configs := filepath.Join(repoRoot, "configs") + "/"
	for _, args := range [][]string{
		{"run", "--config", configs + "re"},
		{"run", "-c", configs + "re"},
		{"compare", "-c", configs + "re"},
		{"compare", "--config", configs + "react.yaml", "--config", configs + "re"},
		{"validate", configs + "re"},
		{"graph", configs + "re"},
	} {
		cands, _ := complete(t, nil, args...)
		assert.Contains(t, cands, configs+"react.yaml", args)
		assert.Contains(t, cands, configs+"rewoo.yaml", args)
		assert.NotContains(t, cands, configs+"cot.yaml", "only names that start as typed: %v", args)
	}
	cands, _ := complete(t, nil, "graph", configs+"react.yaml", "")
	assert.Empty(t, cands, "graph takes one file")
	cands, _ = complete(t, nil, "graph", configs+"react.yaml", "--format", "")
	assert.Equal(t, []string{"dot", "mermaid", "svg"}, cands)
}

func TestCompleteTaskIDs(t *testing.T) {
	cands, _ := complete(t, nil, "run", "--task", "demo-0")
	assert.Contains(t, cands, "demo-01", "the default suite is demo")
	assert.Contains(t, cands, "demo-07")
	assert.NotContains(t, cands, "demo-10")

	cands, _ = complete(t, nil, "run", "--suite", "sorting", "--task", "")
	require.NotEmpty(t, cands)
	assert.Equal(t, "sort16-001", cands[0])

	file := filepath.Join(t.TempDir(), "mine.jsonl")
	require.NoError(t, os.WriteFile(file, []byte(`{"id":"capital","question":"What is the capital of France?","answer":"Paris"}`+"\n"+
		`{"id":"river","question":"Which river flows through Paris?","answer":"Seine"}`+"\n"), 0o600))
	cands, _ = complete(t, nil, "run", "--suite", file, "--task", "")
	assert.Equal(t, []string{"capital", "river"}, cands)
	cands, _ = complete(t, []string{"PLANNER_SUITE=" + file}, "run", "--task", "r")
	assert.Equal(t, []string{"river"}, cands, "the suite of PLANNER_SUITE")

	cands, _ = complete(t, nil, "run", "--suite", filepath.Join(t.TempDir(), "missing.jsonl"), "--task", "")
	assert.Empty(t, cands, "a suite that does not load offers nothing, quietly")

	cands, _ = complete(t, nil, "compare", "--suite", "sort")
	assert.Equal(t, []string{"sorting", "sorting32", "sorting64"}, cands)
}

func TestCompleteThreadNames(t *testing.T) {
	store := filepath.Join(t.TempDir(), "threads.db")
	for _, name := range []string{"galileo", "gauss", "kepler"} {
		res := cli(t, "run", "--config", configPath("react.yaml"), "--llm", "sim", "--suite", "demo", "--task", "demo-07", "--thread", name, "--store", store, "-q")
		require.Equal(t, exitOK, res.code, res.stderr)
	}
	for _, args := range [][]string{
		{"resume", "--store", store, "g"},
		{"history", "--store", store, "g"},
		{"audit", "--store", store, "--thread", "g"},
		{"run", "--store", store, "--thread", "g"},
	} {
		cands, _ := complete(t, nil, args...)
		assert.ElementsMatch(t, []string{"galileo", "gauss"}, cands, args)
	}
	cands, _ := complete(t, []string{"PLANNER_STORE=" + store}, "resume", "")
	assert.ElementsMatch(t, []string{"galileo", "gauss", "kepler"}, cands, "the default store")
	cands, _ = complete(t, nil, "resume", "--store", store, "galileo", "")
	assert.Empty(t, cands, "resume takes one thread")

	missing := filepath.Join(t.TempDir(), "none.db")
	cands, _ = complete(t, nil, "resume", "--store", missing, "")
	assert.Empty(t, cands)
	assert.NoFileExists(t, missing, "completion never creates a store")
}
