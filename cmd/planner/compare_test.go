package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/planner-engine/planner/eval/compare"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCompareRefusesFlagsOutOfRange(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	twoTasks := filepath.Join(dir, "two.jsonl")
	require.NoError(t, os.WriteFile(twoTasks, []byte(`{"question":"a?","answer":"1"}`+"\n"+`{"question":"b?","answer":"2"}`+"\n"), 0o600))
	tests := []struct {
		name       string
		args       []string
		wantStderr string // the message, whole
	}{
		{name: "negative limit", args: []string{"--limit", "-1"},
			wantStderr: "--limit must be at least 1 (the number of tasks to use; leave it out for all), got -1"},
		{name: "zero limit", args: []string{"--limit", "0"},
			wantStderr: "--limit must be at least 1 (the number of tasks to use; leave it out for all), got 0"},
		{name: "zero concurrency", args: []string{"--concurrency", "0"},
			wantStderr: "--concurrency must be at least 1 (the number of runs in flight), got 0"},
		{name: "negative concurrency", args: []string{"--concurrency", "-3"},
			wantStderr: "--concurrency must be at least 1 (the number of runs in flight), got -3"},
		{name: "zero timeout", args: []string{"--timeout", "0s"},
			wantStderr: "--timeout must be more than 0s (the time limit per run, e.g. 30s or 2m), got 0s"},
		{name: "negative timeout", args: []string{"--timeout", "-5s"},
			wantStderr: "--timeout must be more than 0s (the time limit per run, e.g. 30s or 2m), got -5s"},
		{name: "empty --out", args: []string{"--out", ""},
			wantStderr: "--out must name a folder (leave it out for one per comparison under out/compare)"},
		{name: "a reversed slice of the demo suite", args: []string{"--slice", "50:10"},
			wantStderr: "--slice: empty slice: 50:10 selects nothing from the 40 tasks (0-based start:end, end excluded; " +
				"a start from 0 to 39, or -40 to -1 counting from the end, and an end after it)"},
		{name: "a slice past the end of a file", args: []string{"--suite", twoTasks, "--slice", "5:"},
			wantStderr: "--slice: " + twoTasks + ": empty slice: 5: selects nothing from the 2 tasks (0-based start:end, end excluded; " +
				"a start from 0 to 1, or -2 to -1 counting from the end, and an end after it)"},
		{name: "a slice that cannot be read", args: []string{"--slice", "900"},
			wantStderr: `--slice: bad slice: "900": want start:end, e.g. 900:1000`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"compare", "--config", configPath("direct.yaml"), "--llm", "sim", "--out", out}, tt.args...)
			res := cli(t, args...)
			assert.Equal(t, exitUsage, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
			assert.Contains(t, res.stderr, "planner: "+tt.wantStderr+"\n")
			assert.NoDirExists(t, out, "nothing ran")
		})
	}
}

func TestCompareSaysAnEmptySuiteIsEmpty(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		file, content, want string
	}{
		{"empty.jsonl", "", "the suite is empty: the file has nothing in it"},
		{"blank.jsonl", "\n \n", "the suite is empty: the file has nothing in it"},
		{"empty.json", "[]", "the suite is empty: the hotpotqa file holds no tasks"},
		{"header.csv", "Rank,Puzzles\n", "the suite is empty: the game24 file holds no tasks"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(dir, tt.file)
			require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o600))
			res := cli(t, "compare", "--suite", path, "--config", configPath("direct.yaml"), "--llm", "sim", "--out", filepath.Join(t.TempDir(), "out"))
			assert.Equal(t, exitFail, res.code, "stderr: %s", res.stderr)
			assert.Contains(t, res.stderr, "planner: "+path+": "+tt.want+"\n")
			assert.NotContains(t, res.stderr, "unknown suite format")
		})
	}
}

// runFolderLine matches the line compare prints first, naming its run
// folder.
var runFolderLine = regexp.MustCompile(`(?m)^compare: run folder (\S+) \(running the same command again resumes there\)$`)

// compareProcess runs the planner's main in a process of its own in dir,
// with args.
func compareProcess(ctx context.Context, t *testing.T, dir string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := mainCommand(ctx, t, isolatedEnv(), args...)
	cmd.Dir = dir
	return cmd
}

// readReport decodes the report.json of a run folder.
func readReport(t *testing.T, folder string) (rep struct {
	ModelSpec string `json:"model_spec"`
	Ran       int    `json:"ran"`
	Reused    int    `json:"reused"`
	Configs   []struct {
		Config    string `json:"config"`
		ModelSpec string `json:"model_spec"`
		Runs      int    `json:"runs"`
	} `json:"configs"`
}) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(folder, "report.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rep))
	return rep
}

func TestEachComparisonGetsARunFolderOfItsOwn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	compareWith := func(model string) string {
		cmd := compareProcess(ctx, t, dir, "compare", "--suite", "demo", "--limit", "3", "--config", configPath("direct.yaml"),
			"--llm", model, "--quiet")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Run(), "stderr: %s", stderr.String())
		m := runFolderLine.FindStringSubmatch(stderr.String())
		require.NotNil(t, m, "stderr: %s", stderr.String())
		assert.Regexp(t, `^out/compare/demo-`+regexp.QuoteMeta(strings.ReplaceAll(model, ":", "_"))+`-seed1-[0-9a-f]{8}$`, m[1])
		assert.Contains(t, stdout.String(), "reports: "+filepath.Join(m[1], "report.html"))
		return filepath.Join(dir, m[1])
	}
	perfect := compareWith("sim:perfect")
	noisy := compareWith("sim:noisy")
	require.NotEqual(t, perfect, noisy)
	for folder, spec := range map[string]string{perfect: "sim:perfect", noisy: "sim:noisy"} {
		rep := readReport(t, folder)
		assert.Equal(t, spec, rep.ModelSpec, "the second comparison left the first's report alone")
		require.Len(t, rep.Configs, 1)
		assert.Equal(t, spec, rep.Configs[0].ModelSpec)
		assert.Equal(t, 3, rep.Configs[0].Runs)
		assert.FileExists(t, filepath.Join(folder, "traces", strings.ReplaceAll(spec, ":", "_"), "direct.jsonl"))
	}
	assert.Equal(t, perfect, compareWith("sim:perfect"), "the same command finds its folder again")
	assert.Equal(t, 3, readReport(t, perfect).Reused)
}

// lockedLines collects the lines of a stream read by one goroutine while
// another reads what has come so far.
type lockedLines struct {
	mu   sync.Mutex
	text strings.Builder
}

func (l *lockedLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.text.String()
}

func TestAnInterruptedCompareExits130AndTheSameCommandResumes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	args := []string{"compare", "--suite", "demo", "--limit", "20", "--concurrency", "2", "--config", configPath("react.yaml"),
		"--llm", "sim:slow", "--quiet"}

	cmd := compareProcess(ctx, t, dir, args...)
	pipe, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var stderr lockedLines
	started := make(chan string, 1)
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			stderr.mu.Lock()
			stderr.text.WriteString(sc.Text() + "\n")
			stderr.mu.Unlock()
			if m := runFolderLine.FindStringSubmatch(sc.Text()); m != nil {
				started <- m[1]
			}
		}
	}()
	var folder string
	select {
	case folder = <-started:
	case <-ctx.Done():
		t.Fatalf("compare never said where its run folder is; stderr: %s", stderr.String())
	}
	// Interrupt once some runs are stored; the others are in flight or
	// waiting.
	for storedRuns(ctx, t, filepath.Join(dir, folder)) < 2 {
		select {
		case <-ctx.Done():
			t.Fatalf("no run was stored; stderr: %s", stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	<-scanned
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stderr: %s", stderr.String())
	assert.Equal(t, exitSIGINT, ee.ExitCode(), "stderr: %s", stderr.String())
	assert.Contains(t, stderr.String(), "planner: compare stopped; the runs finished so far are saved in "+folder+
		". Re-run the same command to resume: finished runs are not run again.\n")
	assert.Contains(t, stderr.String(), "interrupted by SIGINT")
	assert.NoFileExists(t, filepath.Join(dir, folder, "report.json"), "no report of a partial comparison")

	again := compareProcess(ctx, t, dir, args...)
	var stdout, stderr2 bytes.Buffer
	again.Stdout, again.Stderr = &stdout, &stderr2
	require.NoError(t, again.Run(), "stderr: %s", stderr2.String())
	m := runFolderLine.FindStringSubmatch(stderr2.String())
	require.NotNil(t, m, stderr2.String())
	assert.Equal(t, folder, m[1], "the same command, the same folder")
	rep := readReport(t, filepath.Join(dir, folder))
	assert.Positive(t, rep.Reused, "the runs finished before the interrupt are reused")
	assert.Positive(t, rep.Ran, "the interrupted ones run now")
	assert.Equal(t, 20, rep.Ran+rep.Reused)
}

// storedRuns counts the results stored in a run folder so far; 0 before
// its store exists.
func storedRuns(ctx context.Context, t *testing.T, folder string) int {
	t.Helper()
	if _, err := os.Stat(filepath.Join(folder, "results.db")); err != nil {
		return 0
	}
	st, err := compare.OpenStore(ctx, folder)
	require.NoError(t, err)
	defer st.Close()
	recs, err := st.All(ctx, 1)
	require.NoError(t, err)
	return len(recs)
}
