package compare_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/state"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// replayLoader is a loader whose "scripted" provider, without a script,
// plays each task's own replies, as the command line's does.
func replayLoader(t *testing.T, replies map[string][]scripted.Reply) *testLoader {
	t.Helper()
	m, err := scripted.NewTaskModel(replies)
	require.NoError(t, err)
	build := func(context.Context, config.LLM, string) (llms.Model, error) { return m, nil }
	return engineLoader(planner.WithProvider("scripted", scripted.TaskLabel, build, llm.AsKind(llm.KindScripted)))
}

// renamedReact writes configs/react.yaml under another name into dir, so
// that a comparison runs the same pipeline as two configs.
func renamedReact(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(configPath("react"))
	require.NoError(t, err)
	b = bytes.Replace(b, []byte("name: react\n"), []byte("name: "+name+"\n"), 1)
	path := filepath.Join(dir, name+".yaml")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return path
}

func texts(ts ...string) []scripted.Reply {
	out := make([]scripted.Reply, len(ts))
	for i, t := range ts {
		out[i] = scripted.Reply{Text: t}
	}
	return out
}

// TestRecordedRunsReplayAsARegressionSuite: with each task's own replies,
// every run of every config starts at its task's first reply, however the
// runs interleave, and reaches the recorded answer; the report says the
// numbers come from recorded replies; editing a task's replies (its
// digest) runs that task again and reuses the others.
func TestRecordedRunsReplayAsARegressionSuite(t *testing.T) {
	t.Parallel()
	replies := map[string][]scripted.Reply{
		"spiders": texts("Thought: Each spider has 8 legs.\nAction: calculator\nAction Input: 3*8",
			"Thought: 3 spiders have 24 legs.\nFinal Answer: 24"),
		"jupiter": texts("Thought: I need Jupiter's diameter.\nAction: search\nAction Input: Jupiter equatorial diameter",
			"Thought: It is 142984 km.\nFinal Answer: 142984"),
	}
	tasks := []state.Task{
		{ID: "spiders", Question: "How many legs do 3 spiders have?", Answer: "24"},
		{ID: "jupiter", Question: "What is the equatorial diameter of Jupiter, in kilometres?", Answer: "142984"},
	}
	dir := t.TempDir()
	configs := []string{renamedReact(t, dir, "react_a"), renamedReact(t, dir, "react_b"), renamedReact(t, dir, "react_c")}
	out := filepath.Join(dir, "out")
	opts := compare.Options{Configs: configs, LLM: config.LLM{Provider: "scripted"}, Concurrency: 6, OutDir: out,
		TaskDigests: map[string]string{"spiders": "d1", "jupiter": "d2"}}

	rep, err := compare.Run(t.Context(), replayLoader(t, replies), tasks, opts)

	require.NoError(t, err)
	assert.True(t, rep.Scripted)
	assert.True(t, rep.TaskReplies)
	assert.Equal(t, "scripted", rep.ModelSpec)
	assert.Equal(t, 6, rep.Ran)
	for _, c := range rep.Configs {
		assert.Equal(t, 2, c.Correct, "%s reproduces both recorded answers", c.Config)
		assert.Equal(t, 4, c.ModelCalls, c.Config)
	}
	assert.Contains(t, rep.Banner(), "replaying each task's own recorded replies")
	assert.Contains(t, rep.Banner(), "not how good any model is")
	js, err := json.Marshal(rep)
	require.NoError(t, err)
	assert.Contains(t, string(js), `"scripted":true,"task_replies":true`)
	assert.True(t, strings.HasPrefix(string(js), `{"banner":"SCRIPTED: `))

	rep, err = compare.Run(t.Context(), replayLoader(t, replies), tasks, opts)
	require.NoError(t, err)
	assert.Equal(t, 0, rep.Ran, "the same replies: every result is reused")

	opts.TaskDigests = map[string]string{"spiders": "d1", "jupiter": "edited"}
	rep, err = compare.Run(t.Context(), replayLoader(t, replies), tasks, opts)
	require.NoError(t, err)
	assert.Equal(t, 3, rep.Ran, "the edited task runs again under each config")
	assert.Equal(t, 3, rep.Reused)
	for _, c := range rep.Configs {
		assert.Equal(t, 2, c.Runs, "a report holds each task's current result only")
	}
}
