package builtin

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/code"
)

func TestBuildCodeTakesDefaults(t *testing.T) {
	ts, err := buildCode(context.Background(), nil, "")
	require.NoError(t, err)
	require.Len(t, ts, 1)
	assert.Equal(t, "code", ts[0].Name())
	tool, ok := ts[0].(*code.Tool)
	require.True(t, ok)
	assert.Equal(t, code.New(code.Config{}).Config(), tool.Config())
	meta := tools.MetaOf(ts[0])
	assert.True(t, meta.ReadOnly)
	assert.Equal(t, code.DefaultTimeout+2*time.Second, meta.Timeout)

	out, err := ts[0].Call(context.Background(), "```python\nprint(sum(range(10)))\n```")
	require.NoError(t, err)
	assert.Equal(t, "45", out)
}

func TestBuildCodeReadsSettings(t *testing.T) {
	ts, err := buildCode(context.Background(), map[string]any{
		"max_steps": 1000, "timeout": "2s", "max_output": "64", "max_source": 4096,
		"max_depth": 50, "max_value_size": 1 << 20, "max_memory": 64 << 20,
	}, "")
	require.NoError(t, err)
	cfg := ts[0].(*code.Tool).Config()
	assert.Equal(t, code.Config{MaxSteps: 1000, Timeout: 2 * time.Second, MaxOutput: 64, MaxSource: 4096,
		MaxDepth: 50, MaxValueSize: 1 << 20, MaxMemory: 64 << 20}, cfg)

	_, err = ts[0].Call(context.Background(), "while True:\n    pass")
	require.ErrorIs(t, err, code.ErrStepLimit)
	assert.Contains(t, err.Error(), "1,000 steps")
}

func TestBuildCodeRejectsBadSettings(t *testing.T) {
	cases := []struct {
		settings map[string]any
		key      string
	}{
		{map[string]any{"max_step": 10}, "max_step"},
		{map[string]any{"timeout": "soon"}, "timeout"},
		{map[string]any{"timeout": 5}, "timeout"},
		{map[string]any{"timeout": "-1s"}, "timeout"},
		{map[string]any{"max_output": -1}, "max_output"},
		{map[string]any{"max_memory": -5}, "max_memory"},
		{map[string]any{"max_steps": "many"}, "max_steps"},
	}
	for _, tc := range cases {
		t.Run(tc.key, func(t *testing.T) {
			_, err := buildCode(context.Background(), tc.settings, "")
			require.ErrorIs(t, err, config.ErrSettings)
			var se *config.SettingError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tc.key, se.Key)
		})
	}
}
