// Package stats provides the small set of statistics needed to compare agent
// configurations honestly on a task suite: confidence intervals for success
// rates and means (Wilson, percentile bootstrap, task-clustered bootstrap),
// paired comparisons (paired bootstrap, its task-clustered form for repeated
// runs, exact McNemar test), an always-valid confidence sequence for
// sequential stopping, the pass@k and pass^k estimators, and a sample-size
// rule of thumb.
//
// Every function is pure and deterministic: resampling takes an explicit seed
// and uses math/rand/v2's PCG generator, so the same inputs and seed always
// give the same result. Invalid inputs are reported with errors that wrap one
// of the sentinel values below (test with errors.Is).
//
// The normal quantile and the binomial tail come from gonum's stat/distuv;
// the bootstrap resampling and the confidence sequence, which gonum lacks,
// are implemented here.
//
// For sequential comparisons, ConfidenceSequence gives an interval for a
// mean that is valid at every sample size at once, so it may be checked
// after every task ("stop once a configuration is shown beaten") without
// inflating the error rate.
package stats

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Sentinel errors. Returned errors wrap one of these with %w.
var (
	// ErrEmpty reports that there is no data (no trials, no items, no groups,
	// or an empty group).
	ErrEmpty = errors.New("stats: no data")
	// ErrMismatch reports paired slices of different lengths.
	ErrMismatch = errors.New("stats: paired inputs differ in length")
	// ErrLevel reports a confidence level outside the open interval (0, 1).
	ErrLevel = errors.New("stats: confidence level must be in (0, 1)")
	// ErrRange reports an argument outside its domain: a negative count,
	// successes greater than trials, k outside [1, n], fewer than one
	// resample, a probability outside its range, or a NaN/Inf value.
	ErrRange = errors.New("stats: argument out of range")
	// ErrNoEffect reports a sample-size request for two equal rates, which
	// no finite number of tasks can distinguish.
	ErrNoEffect = errors.New("stats: rates are equal; no effect to detect")
)

// Interval is a two-sided confidence interval [Lo, Hi] at confidence Level
// (for example 0.95).
type Interval struct {
	// Lo is the lower bound.
	Lo float64
	// Hi is the upper bound.
	Hi float64
	// Level is the nominal coverage, in (0, 1).
	Level float64
}

// Contains reports whether x lies in the closed interval [Lo, Hi].
func (iv Interval) Contains(x float64) bool { return iv.Lo <= x && x <= iv.Hi }

// Width returns Hi - Lo.
func (iv Interval) Width() float64 { return iv.Hi - iv.Lo }

// checkLevel validates a confidence level.
func checkLevel(level float64) error {
	if !(level > 0 && level < 1) {
		return fmt.Errorf("level %v: %w", level, ErrLevel)
	}
	return nil
}

// normalQuantile returns the p-quantile of the standard normal distribution,
// z with Φ(z) = p, for p in (0, 1), from gonum's distuv.UnitNormal. Callers
// validate p first: distuv panics for p outside [0, 1].
func normalQuantile(p float64) float64 {
	return distuv.UnitNormal.Quantile(p)
}

// twoSidedZ returns z_{1-(1-level)/2}, the critical value of a two-sided
// interval at the given confidence level.
func twoSidedZ(level float64) float64 {
	return normalQuantile(1 - (1-level)/2)
}

// Wilson returns the Wilson score interval (without continuity correction)
// for a binomial success rate with the given successes out of n trials:
//
//	center = (p̂ + z²/(2n)) / (1 + z²/n)
//	half   = z/(1 + z²/n) · sqrt(p̂(1-p̂)/n + z²/(4n²))
//
// where p̂ = successes/n and z = Φ⁻¹(1-(1-level)/2). The bounds are clamped
// to [0, 1]; Hi is exactly 1 when successes == n and Lo exactly 0 when
// successes == 0. It fails with ErrEmpty when n == 0, ErrRange when
// successes is outside [0, n], and ErrLevel for a bad level.
func Wilson(successes, n int, level float64) (Interval, error) {
	if err := checkLevel(level); err != nil {
		return Interval{}, fmt.Errorf("wilson: %w", err)
	}
	if n == 0 {
		return Interval{}, fmt.Errorf("wilson: n = 0: %w", ErrEmpty)
	}
	if n < 0 || successes < 0 || successes > n {
		return Interval{}, fmt.Errorf("wilson: successes %d of n %d: %w", successes, n, ErrRange)
	}
	z := twoSidedZ(level)
	nf := float64(n)
	p := float64(successes) / nf
	z2 := z * z
	denom := 1 + z2/nf
	center := (p + z2/(2*nf)) / denom
	half := z / denom * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	iv := Interval{Lo: math.Max(0, center-half), Hi: math.Min(1, center+half), Level: level}
	if successes == 0 {
		iv.Lo = 0
	}
	if successes == n {
		iv.Hi = 1
	}
	return iv, nil
}

// McNemarExact returns the two-sided p-value of the exact McNemar test for
// paired binary outcomes, given the discordant counts b (A right, B wrong)
// and c (A wrong, B right):
//
//	p = min(1, 2 · P[X ≤ min(b, c)]),  X ~ Binomial(b+c, 1/2)
//
// and p = 1 when b+c == 0 (no discordant pairs, no evidence either way).
// Concordant pairs do not enter the test. It fails with ErrRange when b or c
// is negative.
func McNemarExact(b, c int) (float64, error) {
	if b < 0 || c < 0 {
		return 0, fmt.Errorf("mcnemar: b = %d, c = %d: %w", b, c, ErrRange)
	}
	n := b + c
	if n == 0 {
		return 1, nil
	}
	return math.Min(1, 2*binomCDFHalf(min(b, c), n)), nil
}

// binomCDFHalf returns P[X ≤ k] for X ~ Binomial(n, 1/2), 0 ≤ k ≤ n, from
// gonum's distuv.Binomial, which evaluates it as the regularized incomplete
// beta function I_{1/2}(n-k, k+1): no binomial coefficients or powers of 2
// are formed, so it neither underflows nor overflows for large n.
func binomCDFHalf(k, n int) float64 {
	return distuv.Binomial{N: float64(n), P: 0.5}.CDF(float64(k))
}

// PassAtK returns the unbiased pass@k estimator of Chen et al. (2021),
// "Evaluating Large Language Models Trained on Code": given n samples of
// which c are correct, the probability that at least one of k samples drawn
// without replacement is correct,
//
//	pass@k = 1 - C(n-c, k)/C(n, k) = 1 - ∏_{i=n-c+1}^{n} (1 - k/i),
//
// evaluated as the product (no large binomial coefficients). It is 1 when
// n-c < k. It fails with ErrRange unless n ≥ 1, 0 ≤ c ≤ n and 1 ≤ k ≤ n.
func PassAtK(n, c, k int) (float64, error) {
	if err := checkNCK(n, c, k); err != nil {
		return 0, fmt.Errorf("pass@k: %w", err)
	}
	if n-c < k {
		return 1, nil
	}
	prod := 1.0
	for i := n - c + 1; i <= n; i++ {
		prod *= 1 - float64(k)/float64(i)
	}
	return 1 - prod, nil
}

// PassHatK returns the pass^k estimator of Yao et al. (2024), "τ-bench":
// given n trials of which c succeeded, the probability that k trials drawn
// without replacement all succeed,
//
//	pass^k = C(c, k)/C(n, k) = ∏_{i=0}^{k-1} (c-i)/(n-i),
//
// which is 0 when c < k. It measures reliability (all k attempts succeed)
// where pass@k measures coverage (any succeeds). It fails with ErrRange
// unless n ≥ 1, 0 ≤ c ≤ n and 1 ≤ k ≤ n.
func PassHatK(n, c, k int) (float64, error) {
	if err := checkNCK(n, c, k); err != nil {
		return 0, fmt.Errorf("pass^k: %w", err)
	}
	if c < k {
		return 0, nil
	}
	prod := 1.0
	for i := 0; i < k; i++ {
		prod *= float64(c-i) / float64(n-i)
	}
	return prod, nil
}

// checkNCK validates the arguments of PassAtK and PassHatK.
func checkNCK(n, c, k int) error {
	if n < 1 || c < 0 || c > n || k < 1 || k > n {
		return fmt.Errorf("n = %d, c = %d, k = %d: %w", n, c, k, ErrRange)
	}
	return nil
}

// TasksToDetect returns the number of tasks needed to detect a difference
// between success rates p1 and p2 with a two-sided test at significance
// alpha and the given power. It uses the normal-approximation sample size
// for comparing two independent proportions (Fleiss, Statistical Methods for
// Rates and Proportions, without continuity correction):
//
//	n = ( z_{1-α/2}·sqrt(2·p̄(1-p̄)) + z_{1-β}·sqrt(p1(1-p1) + p2(1-p2)) )² / (p1-p2)²
//
// with p̄ = (p1+p2)/2 and β = 1 - power, rounded up. n is the number of
// tasks each configuration runs. When both configurations run the same tasks
// and their outcomes are positively correlated (the usual case), a paired
// test such as McNemarExact needs fewer, so this is a conservative budget.
// It fails with ErrRange for p1 or p2 outside [0, 1], alpha outside (0, 1)
// or power outside [0.5, 1), and with ErrNoEffect when p1 == p2.
func TasksToDetect(p1, p2, alpha, power float64) (int, error) {
	if !(p1 >= 0 && p1 <= 1 && p2 >= 0 && p2 <= 1) {
		return 0, fmt.Errorf("tasks to detect: p1 = %v, p2 = %v: %w", p1, p2, ErrRange)
	}
	if !(alpha > 0 && alpha < 1 && power >= 0.5 && power < 1) {
		return 0, fmt.Errorf("tasks to detect: alpha = %v, power = %v: %w", alpha, power, ErrRange)
	}
	if p1 == p2 {
		return 0, fmt.Errorf("tasks to detect: p1 = p2 = %v: %w", p1, ErrNoEffect)
	}
	zA := normalQuantile(1 - alpha/2)
	zB := normalQuantile(power)
	pbar := (p1 + p2) / 2
	num := zA*math.Sqrt(2*pbar*(1-pbar)) + zB*math.Sqrt(p1*(1-p1)+p2*(1-p2))
	d := p1 - p2
	return int(math.Ceil(num * num / (d * d))), nil
}
