package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// pcgStream is the fixed second word of the PCG state; the caller's seed is
// the first. Changing it would change every bootstrap result.
const pcgStream = 0x9e3779b97f4a7c15

// Paired summarises a paired comparison of configurations A and B scored on
// the same items (tasks): per-item differences a[i] - b[i].
type Paired struct {
	// N is the number of items.
	N int
	// Wins counts items with a[i] > b[i].
	Wins int
	// Ties counts items with a[i] == b[i].
	Ties int
	// Losses counts items with a[i] < b[i].
	Losses int
	// MeanDiff is the mean of a[i] - b[i].
	MeanDiff float64
	// Diff is the percentile bootstrap interval of MeanDiff, resampling items.
	Diff Interval
}

// BootstrapMean returns the percentile bootstrap confidence interval of the
// mean of xs: it draws resamples samples of len(xs) values with replacement,
// takes each sample's mean, and returns the (1-level)/2 and 1-(1-level)/2
// quantiles of those means (linear interpolation between order statistics,
// as R's type 7). The generator is math/rand/v2's PCG seeded with
// (seed, pcgStream), so equal inputs and seed give equal intervals.
//
// It fails with ErrEmpty for no values, ErrLevel for a bad level, and
// ErrRange for resamples < 1 or a NaN/Inf value.
func BootstrapMean(xs []float64, level float64, resamples int, seed uint64) (Interval, error) {
	if err := checkBootstrap(len(xs), level, resamples); err != nil {
		return Interval{}, fmt.Errorf("bootstrap mean: %w", err)
	}
	if err := checkFinite(xs); err != nil {
		return Interval{}, fmt.Errorf("bootstrap mean: %w", err)
	}
	n := len(xs)
	return percentileBootstrap(level, resamples, seed, func(r *rand.Rand) float64 {
		sum := 0.0
		for range n {
			sum += xs[r.IntN(n)]
		}
		return sum / float64(n)
	}), nil
}

// BootstrapMeanClustered returns a percentile bootstrap confidence interval
// of the mean when values come in clusters, such as repeated runs of the same
// task. Each resample draws len(groups) groups with replacement, keeping each
// group's values together, and its statistic is the mean of all values in
// the drawn groups (so groups weigh by their size, as in the pooled mean).
// Resampling whole groups accounts for repeats of one task being correlated;
// resampling individual values would understate the uncertainty.
// Quantiles, seeding and determinism are as in BootstrapMean.
//
// It fails with ErrEmpty for no groups or an empty group, ErrLevel for a bad
// level, and ErrRange for resamples < 1 or a NaN/Inf value.
func BootstrapMeanClustered(groups [][]float64, level float64, resamples int, seed uint64) (Interval, error) {
	if err := checkBootstrap(len(groups), level, resamples); err != nil {
		return Interval{}, fmt.Errorf("bootstrap clustered: %w", err)
	}
	sums := make([]float64, len(groups))
	for g, vs := range groups {
		if len(vs) == 0 {
			return Interval{}, fmt.Errorf("bootstrap clustered: group %d: %w", g, ErrEmpty)
		}
		if err := checkFinite(vs); err != nil {
			return Interval{}, fmt.Errorf("bootstrap clustered: group %d: %w", g, err)
		}
		for _, v := range vs {
			sums[g] += v
		}
	}
	n := len(groups)
	return percentileBootstrap(level, resamples, seed, func(r *rand.Rand) float64 {
		sum, count := 0.0, 0
		for range n {
			g := r.IntN(n)
			sum += sums[g]
			count += len(groups[g])
		}
		return sum / float64(count)
	}), nil
}

// PairedBootstrap compares configurations A and B scored on the same items:
// a[i] and b[i] are the scores of item i (for example 1/0 for pass/fail, or
// a per-task mean over repeats). It counts wins, ties and losses of A, and
// returns the mean difference a[i]-b[i] with its percentile bootstrap
// interval, resampling items (BootstrapMean of the differences, same seed
// semantics). An interval that excludes 0 indicates a difference at the
// 1-level significance level.
//
// It fails with ErrMismatch when len(a) != len(b), ErrEmpty for no items,
// ErrLevel for a bad level, and ErrRange for resamples < 1 or NaN/Inf values.
func PairedBootstrap(a, b []float64, level float64, resamples int, seed uint64) (Paired, error) {
	if len(a) != len(b) {
		return Paired{}, fmt.Errorf("paired bootstrap: len(a) = %d, len(b) = %d: %w", len(a), len(b), ErrMismatch)
	}
	if err := checkBootstrap(len(a), level, resamples); err != nil {
		return Paired{}, fmt.Errorf("paired bootstrap: %w", err)
	}
	if err := checkFinite(a); err != nil {
		return Paired{}, fmt.Errorf("paired bootstrap: a: %w", err)
	}
	if err := checkFinite(b); err != nil {
		return Paired{}, fmt.Errorf("paired bootstrap: b: %w", err)
	}
	res := Paired{N: len(a)}
	diffs := make([]float64, len(a))
	sum := 0.0
	for i := range a {
		switch {
		case a[i] > b[i]:
			res.Wins++
		case a[i] < b[i]:
			res.Losses++
		default:
			res.Ties++
		}
		diffs[i] = a[i] - b[i]
		sum += diffs[i]
	}
	res.MeanDiff = sum / float64(len(a))
	iv, err := BootstrapMean(diffs, level, resamples, seed)
	if err != nil {
		return Paired{}, fmt.Errorf("paired bootstrap: %w", err)
	}
	res.Diff = iv
	return res, nil
}

// checkBootstrap validates the arguments shared by the bootstrap functions.
func checkBootstrap(n int, level float64, resamples int) error {
	if n == 0 {
		return ErrEmpty
	}
	if err := checkLevel(level); err != nil {
		return err
	}
	if resamples < 1 {
		return fmt.Errorf("resamples = %d: %w", resamples, ErrRange)
	}
	return nil
}

// checkFinite reports the first NaN or Inf value in xs.
func checkFinite(xs []float64) error {
	for i, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("value %d is %v: %w", i, x, ErrRange)
		}
	}
	return nil
}

// percentileBootstrap evaluates stat on resamples draws from a PCG generator
// seeded with (seed, pcgStream) and returns the percentile interval.
func percentileBootstrap(level float64, resamples int, seed uint64, stat func(*rand.Rand) float64) Interval {
	r := rand.New(rand.NewPCG(seed, pcgStream))
	stats := make([]float64, resamples)
	for i := range stats {
		stats[i] = stat(r)
	}
	slices.Sort(stats)
	tail := (1 - level) / 2
	return Interval{Lo: quantileSorted(stats, tail), Hi: quantileSorted(stats, 1-tail), Level: level}
}

// quantileSorted returns the q-quantile of sorted xs by linear interpolation
// between order statistics (R type 7): h = (len-1)·q.
func quantileSorted(xs []float64, q float64) float64 {
	h := float64(len(xs)-1) * q
	lo := int(math.Floor(h))
	if lo >= len(xs)-1 {
		return xs[len(xs)-1]
	}
	return xs[lo] + (h-float64(lo))*(xs[lo+1]-xs[lo])
}
