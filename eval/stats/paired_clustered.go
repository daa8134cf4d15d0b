package stats

import "fmt"

// BootstrapPairedClustered compares configurations A and B run on the same
// tasks with repeats: a[i] holds A's values on task i (one per repeat) and
// b[i] B's, for example 1/0 outcomes, scores or costs. The two sides may have
// different numbers of repeats, and so may different tasks.
//
// Each task is reduced to its paired difference of repeat means,
//
//	d_i = mean(a[i]) - mean(b[i]),
//
// and the result is as for PairedBootstrap on those per-task means: wins,
// ties and losses of A count tasks by comparing the two means, MeanDiff is
// (1/n)·Σ d_i (every task weighs the same, whatever its number of repeats),
// and Diff is the percentile bootstrap interval of MeanDiff that resamples
// tasks with replacement, keeping both sides of a task and all its repeats
// together. Resampling the task, the top level of the hierarchy, carries the
// correlation between repeats of one task and between A and B on one task
// into the interval; resampling repeats individually would understate the
// uncertainty (Davison and Hinkley, "Bootstrap Methods and their
// Application", 1997, §3.8; Field and Welsh, "Bootstrapping clustered data",
// J. R. Stat. Soc. B 69(3), 2007). The within-task noise still enters through
// the spread of the task means. Quantiles, seeding and determinism are as in
// BootstrapMean: the same inputs and seed give the same result, and equal to
// PairedBootstrap of the per-task means with that seed.
//
// With the same number of repeats on every task and side, MeanDiff equals the
// difference of the pooled means. It differs from BootstrapMeanClustered,
// which pools values and so weighs a group by its size.
//
// It fails with ErrMismatch when len(a) != len(b), ErrEmpty for no tasks or
// a task with no values on one side, ErrLevel for a bad level, and ErrRange
// for resamples < 1 or a NaN/Inf value.
func BootstrapPairedClustered(a, b [][]float64, level float64, resamples int, seed uint64) (Paired, error) {
	if len(a) != len(b) {
		return Paired{}, fmt.Errorf("bootstrap paired clustered: %d tasks for A, %d for B; pass the same tasks in the same order: %w", len(a), len(b), ErrMismatch)
	}
	if err := checkBootstrap(len(a), level, resamples); err != nil {
		return Paired{}, fmt.Errorf("bootstrap paired clustered: %w", err)
	}
	ma, err := groupMeans(a)
	if err != nil {
		return Paired{}, fmt.Errorf("bootstrap paired clustered: A: %w", err)
	}
	mb, err := groupMeans(b)
	if err != nil {
		return Paired{}, fmt.Errorf("bootstrap paired clustered: B: %w", err)
	}
	res, err := PairedBootstrap(ma, mb, level, resamples, seed)
	if err != nil {
		return Paired{}, fmt.Errorf("bootstrap paired clustered: %w", err)
	}
	return res, nil
}

// groupMeans returns the mean of each group, failing with ErrEmpty for an
// empty group and ErrRange for a NaN/Inf value.
func groupMeans(groups [][]float64) ([]float64, error) {
	means := make([]float64, len(groups))
	for i, vs := range groups {
		if len(vs) == 0 {
			return nil, fmt.Errorf("task %d has no values: %w", i, ErrEmpty)
		}
		if err := checkFinite(vs); err != nil {
			return nil, fmt.Errorf("task %d: %w", i, err)
		}
		sum := 0.0
		for _, v := range vs {
			sum += v
		}
		means[i] = sum / float64(len(vs))
	}
	return means, nil
}
