package planner_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// LoadConfig builds a pipeline its caller read and decoded itself (here
// with an environment of its own) as Load builds the file: relative paths
// from the file's folder, the same options and errors.
func TestLoadConfigBuildsADecodedPipeline(t *testing.T) {
	e := sharedEngine(t)
	raw, err := os.ReadFile(cotConfig)
	require.NoError(t, err)
	path, err := filepath.Abs(cotConfig)
	require.NoError(t, err)
	cfg, err := config.Parse(path, raw, func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	script, err := filepath.Abs(cotScript)
	require.NoError(t, err)
	p, err := e.LoadConfig(context.Background(), cfg, planner.WithLLM("scripted:"+script), planner.WithMaxSteps(3))
	require.NoError(t, err)
	defer p.Close()
	res, err := p.Run(context.Background(), cotTask)
	require.NoError(t, err)
	assert.True(t, res.Complete)
	assert.Equal(t, "cot", p.Name())

	cfg, err = config.Parse(path, raw, func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	_, err = e.LoadConfig(context.Background(), cfg) // configs/cot.yaml has no llm block
	assert.ErrorIs(t, err, planner.ErrNoModel, "no model named: as Load")
	_, err = e.LoadConfig(context.Background(), nil)
	assert.ErrorIs(t, err, planner.ErrInvalidConfig)

	cfg, err = config.Parse(path, raw, func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	v, err := e.ValidateConfig(context.Background(), cfg)
	require.NoError(t, err)
	defer v.Close()
	assert.NotEmpty(t, v.Graph().Nodes())
	_, err = e.ValidateConfig(context.Background(), nil)
	assert.ErrorIs(t, err, planner.ErrInvalidConfig)
}
