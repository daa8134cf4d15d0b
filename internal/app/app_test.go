package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/tools/builtin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The recording, replay, metering and middleware behind the App are tested
// in the public package (the module's root); these tests cover what the
// App adds: the simulator and the command-line wording.

const (
	cotConfig = "../../configs/cot.yaml"
	cotScript = "../../examples/scripts/cot_demo.yaml"
	cotTask   = "A farmer has 3 fields of 17 rows with 23 plants each. How many plants?"
)

func TestTheSimulatorPlaysTheGivenTasks(t *testing.T) {
	t.Parallel()
	tasks, err := suite.Demo()
	require.NoError(t, err)
	require.NotEmpty(t, tasks)
	// Chain of thought has no search: it answers demo-01's lookup only
	// when the sim knows the fact, which a memory prior of 1 declares.
	known := 1.0
	gold := *tasks[0].Gold
	gold.Memory = &known
	tasks[0].Gold = &gold
	task := tasks[0]
	a, err := New(WithTasks(tasks))
	require.NoError(t, err)
	p, err := a.Load(t.Context(), cotConfig, "sim", 0)
	require.NoError(t, err)

	res, err := p.Run(t.Context(), "", planner.WithTask(task.Task))

	require.NoError(t, err)
	assert.True(t, res.Complete)
	assert.Equal(t, task.Answer, res.Answer, "the perfect profile follows the gold solution")
}

func TestTheSimulatorIsRegisteredNextToTheDefaults(t *testing.T) {
	t.Parallel()
	a, err := New()
	require.NoError(t, err)
	assert.Equal(t, sim.Label, a.ModelLabel("sim"))
	for _, p := range []string{"sim", "scripted", "replay", "openai"} {
		assert.Contains(t, a.Models.Providers(), p)
	}
	assert.Equal(t, a.Engine.Providers(), a.Models.Providers())
}

func TestModelsRejectAnAbsurdReplyLimit(t *testing.T) {
	t.Parallel()
	a, err := New()
	require.NoError(t, err)
	_, err = a.Models.Model(t.Context(), config.LLM{Provider: "sim", MaxReplyBytes: 1 << 30}, "")
	require.ErrorIs(t, err, config.ErrInvalid)
	assert.Contains(t, err.Error(), "llm.max_reply_bytes")
}

func TestLoadWithoutAModelNamesTheFlag(t *testing.T) {
	t.Parallel()
	a, err := New()
	require.NoError(t, err)

	_, err = a.Load(t.Context(), cotConfig, "", 0)

	require.ErrorIs(t, err, ErrNoModel)
	assert.Contains(t, err.Error(), cotConfig+" has no llm block; pass --llm provider:model")
}

func TestRecordingGoesThroughTheApp(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.jsonl")
	a, err := New(WithRecording(path))
	require.NoError(t, err)
	p, err := a.Load(t.Context(), cotConfig, "scripted:"+cotScript, 0)
	require.NoError(t, err)
	assert.Empty(t, a.Recording())

	res, err := p.Run(t.Context(), cotTask)
	require.NoError(t, err)
	assert.Equal(t, "1173", res.Answer)
	assert.Equal(t, path, a.Recording())
	require.NoError(t, a.Close())
	require.NoError(t, a.Close(), "closing twice is harmless")

	_, err = New(WithRecording(filepath.Join(t.TempDir(), "absent", "run.jsonl")))
	require.ErrorIs(t, err, ErrRecording)
}

func TestBuiltinToolsListsEveryBuiltinTool(t *testing.T) {
	t.Parallel()
	a, err := New()
	require.NoError(t, err)
	reg, needSettings, err := a.BuiltinTools(t.Context())
	require.NoError(t, err)
	var names []string
	for _, in := range reg.Infos() {
		names = append(names, in.Name)
	}
	assert.Contains(t, names, "calculator")
	assert.Contains(t, names, "http_fetch")
	assert.Contains(t, names, "search_page", "the docstore's tools, on the demo corpus")
	want := []string{"files", "mcp", "sql"}
	if strings.TrimSpace(os.Getenv("SERPAPI_API_KEY")) == "" {
		want = []string{"files", "mcp", "serpapi", "sql"} // serpapi needs its key
	}
	assert.Equal(t, want, needSettings)
	assert.GreaterOrEqual(t, len(names), len(builtin.Names())-len(needSettings), "at least one tool per built-in that needs no settings")
}
