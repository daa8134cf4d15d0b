package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordedSuite is a suite of two recorded ReAct runs over configs/react.yaml's
// tools (calculator, search on the demo corpus): each task's replies are the
// model's raw outputs, in order, one as an object in the scripted model's
// reply format.
const recordedSuite = `{"id": "jupiter-saturn", "question": "By how many kilometres does Jupiter's equatorial diameter exceed Saturn's?", "answer": "22448", "replies": [` +
	`"Thought: I need the equatorial diameters of Jupiter and Saturn.\nAction: search\nAction Input: Jupiter equatorial diameter", ` +
	`"Thought: Jupiter's is 142984 km. Now Saturn's.\nAction: search\nAction Input: Saturn equatorial diameter", ` +
	`"Thought: Saturn's is 120536 km.\nAction: calculator\nAction Input: 142984 - 120536", ` +
	`{"text": "Thought: Jupiter's exceeds Saturn's by 22448 km.\nFinal Answer: 22448"}]}
{"id": "spiders", "question": "How many legs do 3 spiders have?", "answer": "24", "replies": [` +
	`"Thought: Each spider has 8 legs.\nAction: calculator\nAction Input: 3*8", "Thought: 3 spiders have 24 legs.\nFinal Answer: 24"]}
`

// writeSuite writes a suite file into a new temporary folder.
func writeSuite(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "recorded.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

// traceEvents reads a JSONL trace file.
func traceEvents(t *testing.T, path string) []trace.Event {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var events []trace.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var e trace.Event
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e), "%s: %s", path, sc.Text())
		events = append(events, e)
	}
	require.NoError(t, sc.Err())
	return events
}

// ofKind returns the events of kind k, in order.
func ofKind(events []trace.Event, k trace.Kind) []trace.Event {
	var out []trace.Event
	for _, e := range events {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

func TestCompareReplaysEachTasksRecordedRun(t *testing.T) {
	t.Parallel()
	suitePath := writeSuite(t, recordedSuite)
	out := filepath.Join(t.TempDir(), "out")

	res := cli(t, "compare", "--llm", "scripted", "--suite", suitePath, "--config", configPath("react.yaml"), "--out", out, "--json")

	require.Equal(t, exitOK, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	var rep struct {
		Banner      string `json:"banner"`
		Model       string `json:"model"`
		ModelSpec   string `json:"model_spec"`
		Scripted    bool   `json:"scripted"`
		TaskReplies bool   `json:"task_replies"`
		Configs     []struct {
			Correct     int     `json:"correct"`
			SuccessRate float64 `json:"success_rate"`
			ModelCalls  int     `json:"model_calls"`
			ToolCalls   int     `json:"tool_calls"`
		} `json:"configs"`
	}
	res.lastJSON(t, &rep)
	assert.True(t, rep.Scripted)
	assert.True(t, rep.TaskReplies)
	assert.Equal(t, "scripted", rep.ModelSpec)
	assert.True(t, strings.HasPrefix(rep.Banner, "SCRIPTED: these numbers come from a scripted model replaying each task's own recorded replies"), rep.Banner)
	assert.Contains(t, rep.Model, "scripted")
	require.Len(t, rep.Configs, 1)
	assert.Equal(t, 2, rep.Configs[0].Correct, "both recorded answers are reproduced")
	assert.InDelta(t, 1.0, rep.Configs[0].SuccessRate, 1e-9)
	assert.Equal(t, 6, rep.Configs[0].ModelCalls, "one call per recorded reply")
	assert.Equal(t, 4, rep.Configs[0].ToolCalls)

	// The run folder's traces hold each recorded action and its observation.
	events := traceEvents(t, filepath.Join(out, "traces", "scripted", "react.jsonl"))
	var actions []string
	for _, e := range ofKind(events, trace.KindAction) {
		actions = append(actions, e.Data["tool"].(string)+"["+e.Data["input"].(string)+"]")
	}
	assert.ElementsMatch(t, []string{"search[Jupiter equatorial diameter]", "search[Saturn equatorial diameter]",
		"calculator[142984 - 120536]", "calculator[3*8]"}, actions)
	var observations []string
	for _, e := range ofKind(events, trace.KindObservation) {
		observations = append(observations, e.Text)
	}
	assert.Contains(t, observations, "22448")
	assert.Contains(t, strings.Join(observations, "\n"), "equatorial diameter is 142984 km")

	table := cli(t, "compare", "--llm", "scripted", "--suite", suitePath, "--config", configPath("react.yaml"), "--out", out)
	require.Equal(t, exitOK, table.code, "stderr: %s", table.stderr)
	assert.Contains(t, table.stdout, "SCRIPTED: these numbers come from a scripted model replaying each task's own recorded replies")
	assert.Contains(t, table.stdout, "model scripted")
}

func TestCompareWithScriptedRepliesNeedsThemOnEveryTask(t *testing.T) {
	t.Parallel()
	suitePath := writeSuite(t, recordedSuite+`{"id": "unrecorded", "question": "What?", "answer": "x"}`+"\n")
	out := filepath.Join(t.TempDir(), "out")

	res := cli(t, "compare", "--llm", "scripted", "--suite", suitePath, "--config", configPath("react.yaml"), "--out", out)

	assert.Equal(t, exitUsage, res.code, "stderr: %s", res.stderr)
	assert.Contains(t, res.stderr, `planner: --llm scripted without a file plays each task's own "replies"; 1 of the 3 tasks has none (id unrecorded)`)
	assert.NoDirExists(t, out, "nothing ran")
}

func TestRunPlaysASuiteTasksRecordedReplies(t *testing.T) {
	t.Parallel()
	suitePath := writeSuite(t, recordedSuite+`{"id": "unrecorded", "question": "What?", "answer": "x"}`+"\n")

	res := cli(t, "run", "--config", configPath("react.yaml"), "--llm", "scripted", "--suite", suitePath, "--task", "jupiter-saturn")

	require.Equal(t, exitOK, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Contains(t, res.stdout, "model: scripted: each suite task's own recorded replies, played in order, not a real model\n")
	assert.Contains(t, res.stdout, "\nAnswer: 22448\n")

	res = cli(t, "run", "--config", configPath("react.yaml"), "--llm", "scripted", "--suite", suitePath, "--task", "unrecorded")
	assert.Equal(t, exitUsage, res.code)
	assert.Contains(t, res.stderr, "task unrecorded of the "+suitePath+" suite has none")

	// A run of a task's replies may be a thread (its resume carries on
	// with the replies: TestTaskRepliesThreadResumesWhereTheRepliesLeftOff).
	res = cli(t, "run", "--config", configPath("react.yaml"), "--llm", "scripted", "--suite", suitePath, "--task", "spiders", "--thread", "s", "--store", filepath.Join(t.TempDir(), "threads.db"))
	assert.Equal(t, exitOK, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Contains(t, res.stdout, "\nAnswer: 24\n")

	res = cli(t, "run", "--config", configPath("react.yaml"), "--llm", "scripted", "How many legs do 3 spiders have?")
	assert.Equal(t, exitUsage, res.code)
	assert.Contains(t, res.stderr, "pass --suite FILE --task ID for a task with replies, or a script: --llm scripted:FILE")
}

func TestRunningOutOfRecordedRepliesFailsTheRunNamingTheTask(t *testing.T) {
	t.Parallel()
	suitePath := writeSuite(t, `{"id": "cut-short", "question": "How many legs do 3 spiders have?", "answer": "24", "replies": ["Thought: 8 legs each.\nAction: calculator\nAction Input: 3*8"]}`+"\n")

	res := cli(t, "run", "--config", configPath("react.yaml"), "--llm", "scripted", "--suite", suitePath, "--task", "cut-short")

	assert.Equal(t, exitFail, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Contains(t, res.stdout+res.stderr, `the task's replies are used up: task "cut-short" had 1 reply, and this run has used them all: call 2 has none`)
}

// TestTheJSONLTraceHoldsEachActionAndTheWholeObservation: the --trace file
// records, per step, the tool and the exact input the tool got (unwrapped
// from the quotes the model wrote), and the observation fed back to the
// model whole, however long, while the terminal stream clips it.
func TestTheJSONLTraceHoldsEachActionAndTheWholeObservation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var notes strings.Builder
	for i := 0; notes.Len() < 6000; i++ {
		notes.WriteString(strings.Repeat("The copper orchard keeps its ledgers in the old mine office. ", 2))
		notes.WriteString("Line " + strings.Repeat("x", i%7) + " ends here.\n")
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte(notes.String()), 0o600))
	pipelinePath := filepath.Join(dir, "react_files.yaml")
	require.NoError(t, os.WriteFile(pipelinePath, []byte(`name: react_files
tools:
  - {name: files, root: .}
nodes:
  - id: act
    type: react
    mode: text
    observation_limit: 100000
edges:
  - {from: START, to: act}
  - {from: act, to: END}
`), 0o600))
	suitePath := filepath.Join(dir, "suite.jsonl")
	require.NoError(t, os.WriteFile(suitePath, []byte(`{"id": "notes", "question": "What do the notes say?", "answer": "ledgers", "replies": [`+
		`"Thought: I will read the notes.\nAction: read_file\nAction Input: \"notes.txt\"", "Thought: They are about ledgers.\nFinal Answer: ledgers"]}`+"\n"), 0o600))
	tracePath := filepath.Join(dir, "trace.jsonl")
	cassette := filepath.Join(dir, "calls.jsonl")

	res := cli(t, "run", "--config", pipelinePath, "--llm", "scripted", "--suite", suitePath, "--task", "notes", "--trace", tracePath, "--record", cassette)

	require.Equal(t, exitOK, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	events := traceEvents(t, tracePath)
	actions := ofKind(events, trace.KindAction)
	require.Len(t, actions, 1)
	assert.Equal(t, "read_file", actions[0].Data["tool"])
	assert.Equal(t, "notes.txt", actions[0].Data["input"], "the input the tool got, without the quotes the model wrote")
	observations := ofKind(events, trace.KindObservation)
	require.Len(t, observations, 1)
	obs := observations[0].Text
	assert.Equal(t, notes.String(), obs, "the whole file, as read_file returned it")
	assert.Greater(t, len(obs), terminalMaxLen*5, "longer than any clip")

	// It is what the model was shown: the next request holds it whole.
	calls := readCassette(t, cassette)
	require.Len(t, calls, 2)
	assert.Contains(t, calls[1], strings.TrimSpace(obs))
	assert.NotContains(t, calls[0], "ledgers in the old mine office")

	assert.Contains(t, res.stdout, "more chars]", "the terminal clips it for display")
	assert.NotContains(t, res.stdout, notes.String())
}

// readCassette returns the text of each recorded request: its messages'
// parts, joined.
func readCassette(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []string
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		var entry struct {
			Request struct {
				Messages []struct {
					Parts []struct {
						Text    string `json:"text"`
						Content string `json:"content"`
					} `json:"parts"`
				} `json:"messages"`
			} `json:"request"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &entry))
		var text strings.Builder
		for _, m := range entry.Request.Messages {
			for _, p := range m.Parts {
				text.WriteString(p.Text + p.Content + "\n")
			}
		}
		out = append(out, text.String())
	}
	return out
}
