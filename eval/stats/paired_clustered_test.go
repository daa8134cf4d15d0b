package stats_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/eval/stats"
)

func TestBootstrapPairedClustered(t *testing.T) {
	a := [][]float64{{1, 1, 0}, {0, 0}, {1, 1, 1, 1}, {1, 0}, {0.5}}
	b := [][]float64{{0, 0, 0}, {0, 1}, {1, 1, 1, 1}, {0, 0}, {0.5, 0.5}}
	p, err := stats.BootstrapPairedClustered(a, b, 0.9, 2000, 3)
	require.NoError(t, err)
	// By hand: task means A = 2/3, 0, 1, 1/2, 1/2 and B = 0, 1/2, 1, 0, 1/2,
	// differences 2/3, -1/2, 0, 1/2, 0: 2 wins, 2 ties, 1 loss, mean 2/15.
	assert.Equal(t, 5, p.N)
	assert.Equal(t, 2, p.Wins)
	assert.Equal(t, 2, p.Ties)
	assert.Equal(t, 1, p.Losses)
	assert.InDelta(t, 2.0/15, p.MeanDiff, 1e-15)
	assert.True(t, p.Diff.Contains(p.MeanDiff), "%+v", p.Diff)
	assert.Equal(t, 0.9, p.Diff.Level)
	// Resampling tasks: the interval lies within the range of task differences.
	assert.GreaterOrEqual(t, p.Diff.Lo, -0.5)
	assert.LessOrEqual(t, p.Diff.Hi, 2.0/3)

	// It is the paired bootstrap of the per-task means, draw for draw.
	flat, err := stats.PairedBootstrap([]float64{2.0 / 3, 0, 1, 0.5, 0.5}, []float64{0, 0.5, 1, 0, 0.5}, 0.9, 2000, 3)
	require.NoError(t, err)
	assert.Equal(t, flat, p)

	// Deterministic given the seed; swapping A and B mirrors the result.
	q, err := stats.BootstrapPairedClustered(a, b, 0.9, 2000, 3)
	require.NoError(t, err)
	assert.Equal(t, p, q)
	r, err := stats.BootstrapPairedClustered(b, a, 0.9, 2000, 3)
	require.NoError(t, err)
	assert.Equal(t, p.Wins, r.Losses)
	assert.InDelta(t, -p.MeanDiff, r.MeanDiff, 1e-15)
	assert.InDelta(t, -p.Diff.Hi, r.Diff.Lo, 1e-12)
	assert.InDelta(t, -p.Diff.Lo, r.Diff.Hi, 1e-12)

	// Every task has the same difference of means (1/4), whatever the repeat
	// counts: the interval collapses to that value.
	same, err := stats.BootstrapPairedClustered(
		[][]float64{{1, 0}, {1, 1, 0, 0}, {0.5}},
		[][]float64{{0.25}, {0.5, 0, 0.25, 0.25, 0.25}, {0.25, 0.25}},
		0.95, 500, 1)
	require.NoError(t, err)
	assert.Equal(t, 3, same.Wins)
	assert.InDelta(t, 0.25, same.MeanDiff, 1e-15)
	assert.InDelta(t, 0.25, same.Diff.Lo, 1e-15)
	assert.InDelta(t, 0.25, same.Diff.Hi, 1e-15)

	// One task: nothing to resample, a point at its difference (2/3 - 0).
	one, err := stats.BootstrapPairedClustered([][]float64{{1, 0, 1}}, [][]float64{{0, 0}}, 0.95, 100, 1)
	require.NoError(t, err)
	assert.Equal(t, 1, one.N)
	assert.InDelta(t, 2.0/3, one.Diff.Lo, 1e-15)
	assert.InDelta(t, 2.0/3, one.Diff.Hi, 1e-15)

	// Costs work the same way (values are not limited to [0, 1]).
	cost, err := stats.BootstrapPairedClustered([][]float64{{0.02, 0.04}, {0.10}}, [][]float64{{0.01}, {0.05, 0.07}}, 0.95, 200, 1)
	require.NoError(t, err)
	// By hand: differences 0.03-0.01 = 0.02 and 0.10-0.06 = 0.04, mean 0.03.
	assert.InDelta(t, 0.03, cost.MeanDiff, 1e-15)
	assert.True(t, cost.Diff.Lo >= 0.02-1e-15 && cost.Diff.Hi <= 0.04+1e-15, "%+v", cost.Diff)
}

func TestBootstrapPairedClusteredErrors(t *testing.T) {
	two := [][]float64{{1}, {0, 1}}
	_, err := stats.BootstrapPairedClustered(two, [][]float64{{1}}, 0.95, 100, 1)
	assert.ErrorIs(t, err, stats.ErrMismatch)
	_, err = stats.BootstrapPairedClustered(nil, nil, 0.95, 100, 1)
	assert.ErrorIs(t, err, stats.ErrEmpty)
	_, err = stats.BootstrapPairedClustered(two, [][]float64{{1}, {}}, 0.95, 100, 1)
	assert.ErrorIs(t, err, stats.ErrEmpty)
	assert.ErrorContains(t, err, "B: task 1 has no values")
	_, err = stats.BootstrapPairedClustered(two, two, 1, 100, 1)
	assert.ErrorIs(t, err, stats.ErrLevel)
	_, err = stats.BootstrapPairedClustered(two, two, 0.95, 0, 1)
	assert.ErrorIs(t, err, stats.ErrRange)
	_, err = stats.BootstrapPairedClustered([][]float64{{1}, {0, math.Inf(1)}}, two, 0.95, 100, 1)
	assert.ErrorIs(t, err, stats.ErrRange)
	assert.ErrorContains(t, err, "A: task 1")
}
