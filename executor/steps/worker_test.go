package steps_test

import (
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/executor/steps"
	"github.com/planner-engine/planner/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlanningToolsOfferTheRegistryAndTheModelWorker(t *testing.T) {
	none, err := steps.NewPlanningTools(nil, "  ")
	require.NoError(t, err)
	assert.Zero(t, none.Len)
	assert.False(t, none.Set.Has("llm"))

	reg := newRegistry(t, years()) // the calculator and lookup
	plain, err := steps.NewPlanningTools(reg, "")
	require.NoError(t, err)
	assert.Equal(t, 2, plain.Len)
	assert.Equal(t, tools.PromptList(reg), plain.List)
	assert.True(t, plain.Set.Has("lookup"))
	assert.False(t, plain.Set.Has("llm"))

	worker, err := steps.NewPlanningTools(reg, " llm ")
	require.NoError(t, err)
	assert.Equal(t, 3, worker.Len)
	assert.True(t, worker.Set.Has("llm"))
	assert.True(t, worker.Set.Has("lookup"))
	assert.Equal(t, tools.PromptList(reg, steps.LLMToolInfo("llm")), worker.List)

	_, err = steps.NewPlanningTools(reg, "Lookup")
	require.ErrorIs(t, err, config.ErrSettings)
	var se *config.SettingError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "llm_tool", se.Key)
	assert.Contains(t, err.Error(), `"Lookup" is already the name of a registered tool`)
}

func TestMaxPlanStepsDefaultsZeroAndRejectsNegatives(t *testing.T) {
	n, err := steps.MaxPlanSteps(0)
	require.NoError(t, err)
	assert.Equal(t, 8, n)
	n, err = steps.MaxPlanSteps(3)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	_, err = steps.MaxPlanSteps(-1)
	var se *config.SettingError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "max_plan_steps", se.Key)
	assert.ErrorIs(t, err, config.ErrSettings)
}
