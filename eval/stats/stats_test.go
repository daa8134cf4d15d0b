package stats_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/eval/stats"
)

// Reference values below come from Python 3.11's standard library only
// (math.comb, math.sqrt, statistics.NormalDist().inv_cdf), written
// independently of the Go code. The helper definitions used were:
//
//	from math import comb, sqrt, ceil
//	from statistics import NormalDist
//	def wilson(s,n,level):
//	    z=NormalDist().inv_cdf(1-(1-level)/2); p=s/n; d=1+z*z/n
//	    c=(p+z*z/(2*n))/d; h=z/d*sqrt(p*(1-p)/n+z*z/(4*n*n)); return (c-h,c+h)
//	def mcn(b,c):
//	    n=b+c
//	    if n==0: return 1.0
//	    k=min(b,c); return min(1.0, 2*sum(comb(n,i) for i in range(k+1))/2**n)
//	def pak(n,c,k): return 1-comb(n-c,k)/comb(n,k)
//	def phk(n,c,k): return comb(c,k)/comb(n,k)
//	def ttd(p1,p2,a,pw):
//	    N=NormalDist(); za=N.inv_cdf(1-a/2); zb=N.inv_cdf(pw); pb=(p1+p2)/2
//	    x=za*sqrt(2*pb*(1-pb))+zb*sqrt(p1*(1-p1)+p2*(1-p2)); return ceil(x*x/(p1-p2)**2)

func TestWilson(t *testing.T) {
	cases := []struct {
		s, n   int
		level  float64
		lo, hi float64
	}{
		// python3: wilson(7,10,.95)
		{7, 10, 0.95, 0.39677814746114537, 0.8922087325936989},
		// python3: wilson(0,10,.95) -> (2.8e-17, 0.2775...); Lo is exactly 0 by definition.
		{0, 10, 0.95, 0, 0.27753279986288915},
		// python3: wilson(10,10,.95) — all successes, Hi = 1.
		{10, 10, 0.95, 0.7224672001371109, 1},
		// python3: wilson(1,1,.95) — one task.
		{1, 1, 0.95, 0.20654931437723745, 1},
		// python3: wilson(0,1,.95) — one task, failed.
		{0, 1, 0.95, 0, 0.7934506856227626},
		// python3: wilson(50,100,.90)
		{50, 100, 0.90, 0.41884779611252954, 0.5811522038874705},
		// python3: wilson(3,40,.99)
		{3, 40, 0.99, 0.019163255329385162, 0.25176897615206156},
	}
	for _, tc := range cases {
		iv, err := stats.Wilson(tc.s, tc.n, tc.level)
		require.NoError(t, err)
		assert.InDelta(t, tc.lo, iv.Lo, 1e-12, "lo %d/%d", tc.s, tc.n)
		assert.InDelta(t, tc.hi, iv.Hi, 1e-12, "hi %d/%d", tc.s, tc.n)
		assert.Equal(t, tc.level, iv.Level)
		assert.True(t, iv.Contains(float64(tc.s)/float64(tc.n)))
	}

	// Edge bounds are exact, not merely close.
	iv, err := stats.Wilson(10, 10, 0.95)
	require.NoError(t, err)
	assert.Equal(t, 1.0, iv.Hi)
	iv, err = stats.Wilson(0, 10, 0.95)
	require.NoError(t, err)
	assert.Equal(t, 0.0, iv.Lo)

	// By hand: with p̂ = 1/2 the interval is symmetric about 1/2.
	iv, err = stats.Wilson(20, 40, 0.95)
	require.NoError(t, err)
	assert.InDelta(t, 1.0, iv.Lo+iv.Hi, 1e-15)
}

func TestWilsonErrors(t *testing.T) {
	_, err := stats.Wilson(0, 0, 0.95)
	assert.ErrorIs(t, err, stats.ErrEmpty)
	_, err = stats.Wilson(11, 10, 0.95)
	assert.ErrorIs(t, err, stats.ErrRange)
	_, err = stats.Wilson(-1, 10, 0.95)
	assert.ErrorIs(t, err, stats.ErrRange)
	for _, lv := range []float64{0, 1, -0.5, 95} {
		_, err = stats.Wilson(5, 10, lv)
		assert.ErrorIs(t, err, stats.ErrLevel, "level %v", lv)
	}
}

func TestMcNemarExact(t *testing.T) {
	cases := []struct {
		b, c int
		p    float64
	}{
		{0, 0, 1},                          // no discordant pairs: p = 1 by definition
		{1, 0, 1},                          // by hand: 2·(1/2) = 1
		{0, 1, 1},                          // by hand: 2·(1/2) = 1
		{5, 0, 0.0625},                     // by hand: 2·(1/32)
		{3, 3, 1},                          // by hand: 2·P[X≤3; 6] = 2·42/64 > 1 -> 1
		{2, 8, 0.109375},                   // python3: mcn(2,8) = 2·56/1024
		{10, 4, 0.1795654296875},           // python3: mcn(10,4)
		{1, 9, 0.021484375},                // python3: mcn(1,9) = 2·11/1024
		{40, 60, 0.05688793364098079},      // python3: mcn(40,60)
		{450, 550, 0.0017305360849763176},  // python3: mcn(450,550)
		{1000, 1100, 0.030720707864242296}, // python3: mcn(1000,1100) (2^2100 underflows a float64)
	}
	for _, tc := range cases {
		p, err := stats.McNemarExact(tc.b, tc.c)
		require.NoError(t, err)
		assert.InEpsilon(t, tc.p, p, 1e-10, "b=%d c=%d", tc.b, tc.c)
		// The test is symmetric in b and c.
		q, err := stats.McNemarExact(tc.c, tc.b)
		require.NoError(t, err)
		assert.InEpsilon(t, p, q, 1e-12)
	}
	_, err := stats.McNemarExact(-1, 3)
	assert.ErrorIs(t, err, stats.ErrRange)
	_, err = stats.McNemarExact(3, -1)
	assert.ErrorIs(t, err, stats.ErrRange)
}

func TestPassAtKAndPassHatK(t *testing.T) {
	cases := []struct {
		n, c, k   int
		atK, hatK float64
	}{
		{10, 0, 1, 0, 0},                                       // c = 0: both 0 (python3: pak(10,0,1), phk(10,0,1))
		{1, 0, 1, 0, 0},                                        // one sample, wrong
		{1, 1, 1, 1, 1},                                        // one sample, right
		{10, 10, 5, 1, 1},                                      // c = n: both 1
		{10, 10, 10, 1, 1},                                     // c = n = k
		{10, 3, 1, 0.3, 0.3},                                   // k = 1: both equal c/n (by hand)
		{10, 3, 5, 0.9166666666666666, 0},                      // by hand: 1 - C(7,5)/C(10,5) = 1 - 21/252; c < k -> pass^k 0
		{10, 3, 8, 1, 0},                                       // n-c = 7 < k = 8: pass@k = 1
		{5, 2, 4, 1, 0},                                        // n-c = 3 < k = 4: pass@k = 1
		{20, 5, 10, 0.9837461300309598, 0},                     // python3: pak(20,5,10)
		{200, 13, 50, 0.979277922955739, 0},                    // python3: pak(200,13,50)
		{100, 1, 10, 0.09999999999999998, 0},                   // python3: pak(100,1,10) (= k/n by hand)
		{10, 7, 3, 0.9916666666666667, 0.2916666666666667},     // python3: pak(10,7,3) = 1-1/120, phk(10,7,3) = 35/120
		{20, 15, 5, 0.9999355005159959, 0.19369195046439627},   // python3: pak(20,15,5), phk(20,15,5)
		{100, 90, 10, 0.9999999999999423, 0.33047621108672515}, // python3: pak(100,90,10), phk(100,90,10)
	}
	for _, tc := range cases {
		a, err := stats.PassAtK(tc.n, tc.c, tc.k)
		require.NoError(t, err)
		assert.InDelta(t, tc.atK, a, 1e-12, "pass@k n=%d c=%d k=%d", tc.n, tc.c, tc.k)
		h, err := stats.PassHatK(tc.n, tc.c, tc.k)
		require.NoError(t, err)
		assert.InDelta(t, tc.hatK, h, 1e-12, "pass^k n=%d c=%d k=%d", tc.n, tc.c, tc.k)
		assert.LessOrEqual(t, h, a+1e-15, "pass^k ≤ pass@k")
	}

	bad := [][3]int{{0, 0, 1}, {10, -1, 1}, {10, 11, 1}, {10, 3, 0}, {10, 3, 11}}
	for _, b := range bad {
		_, err := stats.PassAtK(b[0], b[1], b[2])
		assert.ErrorIs(t, err, stats.ErrRange, "pass@k %v", b)
		_, err = stats.PassHatK(b[0], b[1], b[2])
		assert.ErrorIs(t, err, stats.ErrRange, "pass^k %v", b)
	}
}

func TestTasksToDetect(t *testing.T) {
	cases := []struct {
		p1, p2, alpha, power float64
		n                    int
	}{
		{0.5, 0.6, 0.05, 0.8, 388},  // python3: ttd(.5,.6,.05,.8) (raw 387.34)
		{0.6, 0.5, 0.05, 0.8, 388},  // symmetric in p1, p2
		{0.7, 0.8, 0.05, 0.8, 294},  // python3: ttd(.7,.8,.05,.8) (raw 293.15)
		{0.3, 0.5, 0.01, 0.9, 177},  // python3: ttd(.3,.5,.01,.9) (raw 176.06)
		{0.9, 0.95, 0.05, 0.8, 435}, // python3: ttd(.9,.95,.05,.8) (raw 434.43)
		{0.0, 1.0, 0.05, 0.8, 2},    // python3: ttd(0,1,.05,.8) (raw 1.92 = 1.96²/2)
		{0.5, 0.6, 0.05, 0.5, 191},  // python3: ttd(.5,.6,.05,.5) (raw 190.15)
	}
	for _, tc := range cases {
		n, err := stats.TasksToDetect(tc.p1, tc.p2, tc.alpha, tc.power)
		require.NoError(t, err)
		assert.Equal(t, tc.n, n, "%+v", tc)
	}

	_, err := stats.TasksToDetect(0.5, 0.5, 0.05, 0.8)
	assert.ErrorIs(t, err, stats.ErrNoEffect)
	for _, a := range [][4]float64{
		{-0.1, 0.5, 0.05, 0.8}, {0.5, 1.1, 0.05, 0.8}, {0.4, 0.5, 0, 0.8},
		{0.4, 0.5, 1, 0.8}, {0.4, 0.5, 0.05, 1}, {0.4, 0.5, 0.05, 0.3},
	} {
		_, err := stats.TasksToDetect(a[0], a[1], a[2], a[3])
		assert.ErrorIs(t, err, stats.ErrRange, "%v", a)
	}
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

var sample = []float64{0.2, 0.9, 0.4, 1, 0, 0.65, 0.3, 0.8, 0.55, 0.1, 0.7, 0.45}

func TestBootstrapMean(t *testing.T) {
	a, err := stats.BootstrapMean(sample, 0.95, 2000, 42)
	require.NoError(t, err)
	b, err := stats.BootstrapMean(sample, 0.95, 2000, 42)
	require.NoError(t, err)
	assert.Equal(t, a, b, "same seed, same interval")
	c, err := stats.BootstrapMean(sample, 0.95, 2000, 43)
	require.NoError(t, err)
	assert.NotEqual(t, a, c, "different seed, different draws")

	m := mean(sample)
	assert.True(t, a.Contains(m), "interval %+v contains mean %v", a, m)
	assert.Less(t, a.Lo, a.Hi)
	assert.Equal(t, 0.95, a.Level)
	// Sanity against the normal approximation mean ± 1.96·σ/√n, with
	// σ/√n = 0.08808501522624271 (python3: statistics.pstdev(sample)/sqrt(12)):
	// the bootstrap width is within 20% of it.
	assert.InEpsilon(t, 2*1.96*0.08808501522624271, a.Width(), 0.2)

	// A lower level gives a nested, narrower interval from the same draws.
	n, err := stats.BootstrapMean(sample, 0.5, 2000, 42)
	require.NoError(t, err)
	assert.True(t, a.Lo <= n.Lo && n.Hi <= a.Hi)

	// All-equal values collapse the interval to that value.
	for _, v := range []float64{1, 0, 0.7} {
		iv, err := stats.BootstrapMean([]float64{v, v, v, v, v}, 0.95, 500, 1)
		require.NoError(t, err)
		assert.InDelta(t, v, iv.Lo, 1e-15)
		assert.InDelta(t, v, iv.Hi, 1e-15)
	}
	// One item: nothing to resample.
	iv, err := stats.BootstrapMean([]float64{0.25}, 0.95, 100, 1)
	require.NoError(t, err)
	assert.Equal(t, stats.Interval{Lo: 0.25, Hi: 0.25, Level: 0.95}, iv)

	// By hand: for xs = {0, 1} the resampled mean is 0, 1/2, 1 with
	// probabilities 1/4, 1/2, 1/4, so its 0.3 and 0.7 quantiles are both 1/2.
	iv, err = stats.BootstrapMean([]float64{0, 1}, 0.4, 20000, 7)
	require.NoError(t, err)
	assert.Equal(t, 0.5, iv.Lo)
	assert.Equal(t, 0.5, iv.Hi)
	// ... and its 2.5% and 97.5% quantiles are 0 and 1.
	iv, err = stats.BootstrapMean([]float64{0, 1}, 0.95, 20000, 7)
	require.NoError(t, err)
	assert.Equal(t, 0.0, iv.Lo)
	assert.Equal(t, 1.0, iv.Hi)
}

func TestBootstrapErrors(t *testing.T) {
	_, err := stats.BootstrapMean(nil, 0.95, 100, 1)
	assert.ErrorIs(t, err, stats.ErrEmpty)
	_, err = stats.BootstrapMean(sample, 1, 100, 1)
	assert.ErrorIs(t, err, stats.ErrLevel)
	_, err = stats.BootstrapMean(sample, 0.95, 0, 1)
	assert.ErrorIs(t, err, stats.ErrRange)
	nan := []float64{1, 0}
	nan[1] = nan[1] / nan[1] // NaN without a constant expression
	_, err = stats.BootstrapMean(nan, 0.95, 100, 1)
	assert.ErrorIs(t, err, stats.ErrRange)

	_, err = stats.BootstrapMeanClustered(nil, 0.95, 100, 1)
	assert.ErrorIs(t, err, stats.ErrEmpty)
	_, err = stats.BootstrapMeanClustered([][]float64{{1}, {}}, 0.95, 100, 1)
	assert.ErrorIs(t, err, stats.ErrEmpty)
	_, err = stats.BootstrapMeanClustered([][]float64{{1}, nan}, 0.95, 100, 1)
	assert.ErrorIs(t, err, stats.ErrRange)

	_, err = stats.PairedBootstrap([]float64{1, 0}, []float64{1}, 0.95, 100, 1)
	assert.ErrorIs(t, err, stats.ErrMismatch)
	assert.False(t, errors.Is(err, stats.ErrEmpty))
	_, err = stats.PairedBootstrap(nil, nil, 0.95, 100, 1)
	assert.ErrorIs(t, err, stats.ErrEmpty)
	_, err = stats.PairedBootstrap([]float64{1}, []float64{0}, 0, 100, 1)
	assert.ErrorIs(t, err, stats.ErrLevel)
	_, err = stats.PairedBootstrap([]float64{1, 0}, nan, 0.95, 100, 1)
	assert.ErrorIs(t, err, stats.ErrRange)
}

func TestBootstrapMeanClustered(t *testing.T) {
	// Singleton groups consume the generator exactly as BootstrapMean does,
	// so the intervals are identical.
	groups := make([][]float64, len(sample))
	for i, x := range sample {
		groups[i] = []float64{x}
	}
	flat, err := stats.BootstrapMean(sample, 0.95, 1000, 9)
	require.NoError(t, err)
	cl, err := stats.BootstrapMeanClustered(groups, 0.95, 1000, 9)
	require.NoError(t, err)
	assert.Equal(t, flat, cl)

	// Three repeats per task, perfectly correlated within a task: the
	// clustered interval equals the per-task one, and the naive interval
	// over all 36 values (pretending repeats are independent) is narrower.
	var rep [][]float64
	var all []float64
	for _, x := range sample {
		rep = append(rep, []float64{x, x, x})
		all = append(all, x, x, x)
	}
	cr, err := stats.BootstrapMeanClustered(rep, 0.95, 1000, 9)
	require.NoError(t, err)
	assert.InDelta(t, flat.Lo, cr.Lo, 1e-12)
	assert.InDelta(t, flat.Hi, cr.Hi, 1e-12)
	naive, err := stats.BootstrapMean(all, 0.95, 1000, 9)
	require.NoError(t, err)
	assert.Less(t, naive.Width(), cr.Width())

	// Unequal group sizes: the statistic is the pooled mean, so it is
	// contained, and determinism holds.
	uneq := [][]float64{{1, 1, 0}, {0}, {1, 0, 1, 1}, {0, 0}, {1}, {0.5, 0.5}}
	pooled := 7.0 / 13 // by hand: 7 of 13 values
	u1, err := stats.BootstrapMeanClustered(uneq, 0.9, 3000, 5)
	require.NoError(t, err)
	u2, err := stats.BootstrapMeanClustered(uneq, 0.9, 3000, 5)
	require.NoError(t, err)
	assert.Equal(t, u1, u2)
	assert.True(t, u1.Contains(pooled), "%+v contains %v", u1, pooled)

	// All-equal values collapse; one group is a point.
	iv, err := stats.BootstrapMeanClustered([][]float64{{0.5, 0.5}, {0.5}}, 0.95, 200, 3)
	require.NoError(t, err)
	assert.InDelta(t, 0.5, iv.Lo, 1e-15)
	assert.InDelta(t, 0.5, iv.Hi, 1e-15)
	iv, err = stats.BootstrapMeanClustered([][]float64{{1, 0, 0, 0}}, 0.95, 200, 3)
	require.NoError(t, err)
	assert.InDelta(t, 0.25, iv.Lo, 1e-15)
	assert.InDelta(t, 0.25, iv.Hi, 1e-15)
}

func TestPairedBootstrap(t *testing.T) {
	a := []float64{1, 1, 0, 1, 1, 0, 1, 1, 0.5, 1}
	b := []float64{0, 1, 0, 1, 0, 1, 0, 1, 0.5, 0}
	p, err := stats.PairedBootstrap(a, b, 0.95, 2000, 11)
	require.NoError(t, err)
	// By hand: diffs 1,0,0,0,1,-1,1,0,0,1 -> 4 wins, 5 ties, 1 loss, mean 0.3.
	assert.Equal(t, 10, p.N)
	assert.Equal(t, 4, p.Wins)
	assert.Equal(t, 5, p.Ties)
	assert.Equal(t, 1, p.Losses)
	assert.InDelta(t, 0.3, p.MeanDiff, 1e-15)
	assert.True(t, p.Diff.Contains(p.MeanDiff))

	q, err := stats.PairedBootstrap(a, b, 0.95, 2000, 11)
	require.NoError(t, err)
	assert.Equal(t, p, q, "same seed, same result")

	// Swapping A and B mirrors everything.
	r, err := stats.PairedBootstrap(b, a, 0.95, 2000, 11)
	require.NoError(t, err)
	assert.Equal(t, p.Wins, r.Losses)
	assert.Equal(t, p.Losses, r.Wins)
	assert.InDelta(t, -p.MeanDiff, r.MeanDiff, 1e-15)
	assert.InDelta(t, -p.Diff.Hi, r.Diff.Lo, 1e-12)
	assert.InDelta(t, -p.Diff.Lo, r.Diff.Hi, 1e-12)

	// Identical configurations: all ties, interval collapses to 0.
	z, err := stats.PairedBootstrap(a, a, 0.95, 500, 1)
	require.NoError(t, err)
	assert.Equal(t, 10, z.Ties)
	assert.Equal(t, stats.Interval{Lo: 0, Hi: 0, Level: 0.95}, z.Diff)
}
