package stats

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNormalQuantile(t *testing.T) {
	// python3 -c "from statistics import NormalDist; print(repr(NormalDist().inv_cdf(p)))"
	ref := map[float64]float64{
		0.975: 1.9599639845400536,
		0.95:  1.6448536269514715,
		0.995: 2.5758293035489,
		0.5:   0,
		0.9:   1.2815515655446008,
		0.8:   0.8416212335729144,
		0.025: -1.9599639845400538,
	}
	for p, z := range ref {
		got := normalQuantile(p)
		assert.InDelta(t, z, got, 1e-12, "p=%v", p)
		// Round trip through Φ(z) = erfc(-z/√2)/2.
		assert.InDelta(t, p, math.Erfc(-got/math.Sqrt2)/2, 1e-14, "p=%v", p)
	}
}

func TestBinomCDFHalf(t *testing.T) {
	// python3 -c "from math import comb; print(repr(sum(comb(n,i) for i in range(k+1))/2**n))"
	cases := []struct {
		k, n int
		want float64
	}{
		{0, 1, 0.5},
		{0, 10, 1.0 / 1024},
		{2, 10, 56.0 / 1024},
		{5, 10, 638.0 / 1024}, // k > n/2 goes through the complement
		{9, 10, 1023.0 / 1024},
		{10, 10, 1},
		{450, 1000, 0.0017305360849763176 / 2},
		{1000, 2100, 0.030720707864242296 / 2},
	}
	for _, tc := range cases {
		assert.InEpsilon(t, tc.want, binomCDFHalf(tc.k, tc.n), 1e-10, "k=%d n=%d", tc.k, tc.n)
	}
}

func TestQuantileSorted(t *testing.T) {
	// By hand, R type 7: h = (len-1)·q.
	xs := []float64{1, 2, 4, 8}
	assert.Equal(t, 1.0, quantileSorted(xs, 0))
	assert.Equal(t, 8.0, quantileSorted(xs, 1))
	assert.Equal(t, 3.0, quantileSorted(xs, 0.5))          // h = 1.5: 2 + 0.5·(4-2)
	assert.InDelta(t, 1.3, quantileSorted(xs, 0.1), 1e-15) // h = 0.3
	assert.Equal(t, 5.0, quantileSorted([]float64{5}, 0.975))
}
