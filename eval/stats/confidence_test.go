package stats_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/eval/stats"
)

// Reference values for ConfidenceSequence come from this Python 3 function
// (standard library only), written from the formulas of Waudby-Smith and
// Ramdas independently of the Go code: it works in the rescaled [0, 1]
// space and maps the running intersection back at the end.
//
//	from math import log, sqrt
//	def cs(xs, a, lo, hi, c=0.5):
//	    L=log(2/a); w=hi-lo; m=.5; s2=.25; S=Q=sl=slx=sv=0.0; l,h=0.0,1.0; out=[]
//	    for t,x in enumerate(xs,1):
//	        x=(x-lo)/w; lam=min(sqrt(2*L/(s2*t*log(1+t))),c)
//	        sv+=4*(x-m)**2*(-log(1-lam)-lam)/4; sl+=lam; slx+=lam*x
//	        l=max(l,slx/sl-(L+sv)/sl); h=min(h,slx/sl+(L+sv)/sl)
//	        S+=x; m=(.5+S)/(t+1); Q+=(x-m)**2; s2=(.25+Q)/(t+1)
//	        out.append((lo+w*l, lo+w*h))
//	    return out
//
//	d=[1,0,1,1,-1,0,1,1,0,1]
//	sc=[0.2,0.9,0.4,1,0,0.65,0.3,0.8,0.55,0.1,0.7,0.45]

func addAll(t *testing.T, cs *stats.ConfidenceSequence, xs []float64) {
	t.Helper()
	for _, x := range xs {
		require.NoError(t, cs.Add(x))
	}
}

func repeat(xs []float64, k int) []float64 {
	var out []float64
	for range k {
		out = append(out, xs...)
	}
	return out
}

func TestConfidenceSequenceReference(t *testing.T) {
	d := []float64{1, 0, 1, 1, -1, 0, 1, 1, 0, 1}
	sc := []float64{0.2, 0.9, 0.4, 1, 0, 0.65, 0.3, 0.8, 0.55, 0.1, 0.7, 0.45}
	type point struct {
		n      int
		lo, hi float64
	}
	cases := []struct {
		name          string
		xs            []float64
		alpha, lo, hi float64
		want          []point
	}{
		{
			// python3: r=cs(d*6,.05,-1,1); r[19], r[39], r[59]
			name: "paired differences", xs: repeat(d, 6), alpha: 0.05, lo: -1, hi: 1,
			want: []point{
				{1, -1, 1}, // too little data: the trivial interval
				{20, -0.3429004333971859, 1.0},
				{40, 0.03357968961143065, 0.9641942621513062},
				{60, 0.15949154219757666, 0.8369313203616069},
			},
		},
		{
			// python3: r=cs(sc*5,.1,0,1); r[11], r[29], r[59]
			name: "graded scores", xs: repeat(sc, 5), alpha: 0.1, lo: 0, hi: 1,
			want: []point{
				{12, 0, 1},
				{30, 0.26469682295637775, 0.7519698437102891},
				{60, 0.3654201552312053, 0.642913178102128},
			},
		},
		{
			// python3: cs([1]*40,.05,0,1)[-1]
			name: "all successes", xs: repeat([]float64{1}, 40), alpha: 0.05, lo: 0, hi: 1,
			want: []point{{40, 0.8116442078783774, 1}},
		},
		{
			// python3: cs([0]*30,.05,-1,1)[-1] — all ties: symmetric about 0.
			name: "all ties", xs: repeat([]float64{0}, 30), alpha: 0.05, lo: -1, hi: 1,
			want: []point{{30, -0.49185059388185814, 0.49185059388185826}},
		},
		{
			// python3: cs([0.5]*50,.05,0,1)[-1]
			name: "constant", xs: repeat([]float64{0.5}, 50), alpha: 0.05, lo: 0, hi: 1,
			want: []point{{50, 0.35244482183544257, 0.6475551781645574}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := stats.NewConfidenceSequence(tc.alpha, tc.lo, tc.hi)
			require.NoError(t, err)
			at := map[int]point{}
			for _, p := range tc.want {
				at[p.n] = p
			}
			for i, x := range tc.xs {
				require.NoError(t, cs.Add(x))
				if p, ok := at[i+1]; ok {
					iv := cs.Interval()
					assert.InDelta(t, p.lo, iv.Lo, 1e-12, "lo at n=%d", p.n)
					assert.InDelta(t, p.hi, iv.Hi, 1e-12, "hi at n=%d", p.n)
					assert.Equal(t, 1-tc.alpha, iv.Level)
					assert.Equal(t, p.n, cs.N())
				}
			}
		})
	}
}

func TestConfidenceSequenceNarrowsAndDecides(t *testing.T) {
	// A large true difference: x ~ Bernoulli(0.8), y ~ Bernoulli(0.3), so
	// E[x-y] = 0.5. The sequence decides for x well before 60 tasks.
	r := rand.New(rand.NewPCG(2026, 1))
	cs, err := stats.NewConfidenceSequence(0.05, -1, 1)
	require.NoError(t, err)
	prev := cs.Interval()
	assert.Equal(t, stats.Interval{Lo: -1, Hi: 1, Level: 0.95}, prev, "before any data")
	assert.True(t, math.IsNaN(cs.Mean()))
	decidedAt := 0
	sum := 0.0
	for n := 1; n <= 60; n++ {
		d := bernoulli(r, 0.8) - bernoulli(r, 0.3)
		sum += d
		require.NoError(t, cs.Add(d))
		iv := cs.Interval()
		assert.True(t, prev.Lo <= iv.Lo && iv.Hi <= prev.Hi, "n=%d: %+v not inside %+v", n, iv, prev)
		prev = iv
		if decidedAt == 0 && cs.Above(0) {
			decidedAt = n
		}
		assert.False(t, cs.Below(0))
	}
	assert.NotZero(t, decidedAt, "difference 0.5 not decided by n=60: %+v", cs.Interval())
	assert.True(t, cs.Above(0))
	assert.InDelta(t, sum/60, cs.Mean(), 1e-12)
	assert.True(t, cs.Interval().Contains(0.5))

	// The mirror image decides the other way at the same step.
	// python3: next(i+1 for i,v in enumerate(cs([1]*100,.05,-1,1)) if v[0]>0) == 16
	up, err := stats.NewConfidenceSequence(0.05, -1, 1)
	require.NoError(t, err)
	down, err := stats.NewConfidenceSequence(0.05, -1, 1)
	require.NoError(t, err)
	for n := 1; n <= 16; n++ {
		assert.False(t, up.Above(0), "n=%d", n)
		require.NoError(t, up.Add(1))
		require.NoError(t, down.Add(-1))
	}
	assert.True(t, up.Above(0))
	assert.True(t, down.Below(0))
	assert.InDelta(t, -up.Interval().Lo, down.Interval().Hi, 1e-12)
}

func bernoulli(r *rand.Rand, p float64) float64 {
	if r.Float64() < p {
		return 1
	}
	return 0
}

// TestConfidenceSequenceCoverage checks the property that matters: with
// true mean 0, the chance that the interval ever excludes 0, checked after
// every one of 200 tasks, is at most alpha. As a control, the same
// sequences checked with a fixed-n 95% normal interval after every task
// exclude 0 far more often than 5%, which shows the simulation can detect
// the inflation that the confidence sequence avoids.
func TestConfidenceSequenceCoverage(t *testing.T) {
	const (
		sequences = 500
		length    = 200
		alpha     = 0.05
	)
	scenarios := []struct {
		name string
		draw func(r *rand.Rand) float64 // a paired difference with mean 0
	}{
		{"independent coin flips", func(r *rand.Rand) float64 {
			return bernoulli(r, 0.5) - bernoulli(r, 0.5)
		}},
		{"correlated, mostly ties", func(r *rand.Rand) float64 {
			x := bernoulli(r, 0.7)
			if r.Float64() < 0.8 {
				return 0 // both configurations agree on this task
			}
			return x - bernoulli(r, 0.7)
		}},
		{"graded scores", func(r *rand.Rand) float64 {
			return r.Float64() - r.Float64()
		}},
	}
	for i, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(100+i), 7))
			csMiss, naiveMiss := 0, 0
			for range sequences {
				cs, err := stats.NewConfidenceSequence(alpha, -1, 1)
				require.NoError(t, err)
				csOut, naiveOut := false, false
				sum, sumSq := 0.0, 0.0
				for n := 1; n <= length; n++ {
					d := sc.draw(r)
					require.NoError(t, cs.Add(d))
					if !cs.Interval().Contains(0) {
						csOut = true
					}
					sum += d
					sumSq += d * d
					if n >= 10 { // naive: mean ± 1.96·s/√n, looked at after every task
						nf := float64(n)
						m := sum / nf
						v := (sumSq - nf*m*m) / (nf - 1)
						if math.Abs(m) > 1.959963984540054*math.Sqrt(v/nf) {
							naiveOut = true
						}
					}
				}
				if csOut {
					csMiss++
				}
				if naiveOut {
					naiveMiss++
				}
			}
			csRate := float64(csMiss) / sequences
			naiveRate := float64(naiveMiss) / sequences
			t.Logf("ever excluded 0: confidence sequence %.3f, repeated fixed-n test %.3f", csRate, naiveRate)
			assert.LessOrEqual(t, csRate, alpha+0.015)
			assert.Greater(t, naiveRate, 2*alpha, "control: repeated fixed-n looks should inflate the error")
		})
	}
}

func TestConfidenceSequenceErrors(t *testing.T) {
	for _, a := range []float64{0, 1, -0.1, 1.5, math.NaN()} {
		_, err := stats.NewConfidenceSequence(a, 0, 1)
		assert.ErrorIs(t, err, stats.ErrLevel, "alpha %v", a)
	}
	for _, b := range [][2]float64{{1, 1}, {1, 0}, {math.NaN(), 1}, {0, math.Inf(1)}, {math.Inf(-1), 0}} {
		_, err := stats.NewConfidenceSequence(0.05, b[0], b[1])
		assert.ErrorIs(t, err, stats.ErrRange, "bounds %v", b)
	}

	cs, err := stats.NewConfidenceSequence(0.05, -1, 1)
	require.NoError(t, err)
	addAll(t, cs, []float64{1, 0, -1, 1})
	before := cs.Interval()
	for _, x := range []float64{1.5, -1.0001, math.NaN(), math.Inf(1)} {
		err := cs.Add(x)
		assert.ErrorIs(t, err, stats.ErrRange, "x = %v", x)
		assert.ErrorContains(t, err, "observation 5")
	}
	assert.Equal(t, 4, cs.N(), "rejected observations are not recorded")
	assert.Equal(t, before, cs.Interval())
	assert.InDelta(t, 0.25, cs.Mean(), 1e-15)

	// The bounds themselves are valid observations.
	require.NoError(t, cs.Add(-1))
	require.NoError(t, cs.Add(1))
	assert.Equal(t, 6, cs.N())
}

func TestConfidenceSequenceConflict(t *testing.T) {
	// A drifting mean (300 failures, then successes) breaks the constant-mean
	// assumption; the running intersection empties at n = 331 and the
	// interval freezes at the midpoint of the crossed bounds.
	// python3 (cs above, stopping at the first l > h): t = 331,
	// l = 0.02538459783206571, h = 0.02512098240264485, mid = 0.025252790117355282
	cs, err := stats.NewConfidenceSequence(0.05, 0, 1)
	require.NoError(t, err)
	addAll(t, cs, repeat([]float64{0}, 300))
	assert.False(t, cs.Conflict())
	assert.True(t, cs.Below(0.5))
	for n := 301; n <= 330; n++ {
		require.NoError(t, cs.Add(1))
		assert.False(t, cs.Conflict(), "n=%d", n)
	}
	require.NoError(t, cs.Add(1))
	require.True(t, cs.Conflict())
	frozen := cs.Interval()
	assert.InDelta(t, 0.025252790117355282, frozen.Lo, 1e-12)
	assert.Equal(t, frozen.Lo, frozen.Hi)
	addAll(t, cs, repeat([]float64{1}, 50))
	assert.True(t, cs.Conflict())
	assert.Equal(t, frozen, cs.Interval())
	assert.Equal(t, 381, cs.N())
}
