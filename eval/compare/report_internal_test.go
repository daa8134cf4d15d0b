package compare

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"
)

func TestScatterAxesSpanTheDataWithPadding(t *testing.T) {
	tests := []struct {
		name        string
		success     []float64
		tokens      []int
		log         bool
		yMin, yMax  [2]float64 // bounds on the axis ends
		xMin, xMax  [2]float64
		yTickInside bool
	}{
		{name: "close rates, tokens within a factor of ten", success: []float64{0.85, 0.9, 1}, tokens: []int{1200, 1500, 4000},
			yMin: [2]float64{0.8, 0.85}, yMax: [2]float64{1, 1.05}, xMin: [2]float64{900, 1200}, xMax: [2]float64{4000, 4400}},
		{name: "tokens over two decades get a log axis", success: []float64{0.2, 1}, tokens: []int{100, 9000}, log: true,
			yMin: [2]float64{0.1, 0.2}, yMax: [2]float64{1, 1.1}, xMin: [2]float64{70, 100}, xMax: [2]float64{9000, 13000}},
		{name: "all alike", success: []float64{1, 1}, tokens: []int{500, 500},
			yMin: [2]float64{0.85, 0.95}, yMax: [2]float64{1, 1.1}, xMin: [2]float64{0, 500}, xMax: [2]float64{500, 600}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := &Report{}
			for i, s := range tt.success {
				rep.Configs = append(rep.Configs, ConfigSummary{Config: string(rune('a' + i)), Runs: 1, SuccessRate: s, PromptTokens: tt.tokens[i]})
			}
			p, _, _, err := rep.scatterPlot()
			require.NoError(t, err)
			between := func(v float64, r [2]float64, what string) {
				assert.True(t, v > r[0]-1e-9 && v < r[1]+1e-9, "%s = %v, want within %v", what, v, r)
			}
			between(p.Y.Min, tt.yMin, "y min")
			between(p.Y.Max, tt.yMax, "y max")
			between(p.X.Min, tt.xMin, "x min")
			between(p.X.Max, tt.xMax, "x max")
			assert.Less(t, p.Y.Min, tt.success[0], "the lowest point is off the frame")
			_, isLog := p.X.Scale.(plot.LogScale)
			assert.Equal(t, tt.log, isLog)
			for _, tick := range p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max) {
				assert.True(t, tick.Value >= 0 && tick.Value <= 1, "no success tick outside 0..1: %v", tick.Value)
			}
			labelled := 0
			for _, tick := range p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max) {
				if tick.Label != "" {
					labelled++
				}
			}
			assert.GreaterOrEqual(t, labelled, 2, "the tokens axis has labels to read values by")
		})
	}
}

func TestEveryConfigGetsItsOwnMarkerAndColour(t *testing.T) {
	type pair struct {
		r, g, b, a uint32
		shape      any
	}
	seen := map[pair]int{}
	for i := range 80 {
		st := glyphStyle(i)
		r, g, b, a := st.Color.RGBA()
		p := pair{r, g, b, a, st.Shape}
		prev, dup := seen[p]
		assert.False(t, dup, "configs %d and %d share a marker and colour", prev, i)
		seen[p] = i
	}
	shapes, colours := map[any]bool{}, map[any]bool{}
	for i := range 8 {
		shapes[glyphStyle(i).Shape] = true
	}
	for i := range 10 {
		colours[glyphStyle(i).Color] = true
	}
	assert.Len(t, shapes, 8, "the first eight configs differ in shape")
	assert.Len(t, colours, 10, "the first ten configs differ in colour")
}
