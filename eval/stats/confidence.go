package stats

import (
	"fmt"
	"math"
)

// csLambdaMax is the truncation c of the betting fractions λ_t of the
// predictable plug-in empirical-Bernstein confidence sequence; Waudby-Smith
// and Ramdas (2024) suggest 1/2 or 3/4. Any value in (0, 1) keeps the
// sequence valid; it only trades early against late width.
const csLambdaMax = 0.5

// ConfidenceSequence tracks an always-valid (1-alpha) confidence interval for
// the mean μ of bounded observations in [lo, hi], updated one observation at
// a time. "Always valid" means the coverage holds at every sample size
// simultaneously:
//
//	P( μ ∈ C_t for every t ≥ 1 ) ≥ 1 - alpha,
//
// so the interval may be inspected after every observation, and a decision
// taken the first time it excludes a value, without inflating the error rate
// (repeating a fixed-n test after every task does inflate it: its chance of
// ever excluding the true mean grows towards 1 with the number of looks).
//
// # Use for sequential comparisons
//
// To stop spending on configuration B once configuration A is shown to beat
// it, feed the paired per-task differences d_i = x_i - y_i of A's and B's
// scores in [0, 1] (success 1/0, or graded scores) into a sequence over
// [-1, 1]: NewConfidenceSequence(alpha, -1, 1), then Add(x_i - y_i) after
// each task. Above(0) reports that A's mean score is higher than B's, Below(0)
// that it is lower, each with error probability at most alpha over the whole
// run however often it is checked.
//
// # Construction
//
// This is the predictable plug-in empirical-Bernstein confidence sequence
// (PrPl-EB) of Waudby-Smith and Ramdas, "Estimating means of bounded random
// variables by betting", J. R. Stat. Soc. B 86(1), 2024 (arXiv:2010.09686),
// published online 2023, with the betting fractions λ_t they recommend for
// it, followed by the running intersection. (Their confseq package
// implements it as predmix_empbern_twosided_cs, centring v_t on the
// unregularised running mean; any predictable centre is equally valid.)
// Observations are first rescaled to X_t = (x_t-lo)/(hi-lo) in [0, 1]; with
//
//	μ̂_t  = (1/2 + Σ_{i≤t} X_i) / (t+1),                 μ̂_0 = 1/2
//	σ̂²_t = (1/4 + Σ_{i≤t} (X_i - μ̂_i)²) / (t+1),        σ̂²_0 = 1/4
//	λ_t  = min( sqrt( 2·log(2/α) / (σ̂²_{t-1} · t · log(1+t)) ), c ),   c = 1/2
//	v_t  = 4·(X_t - μ̂_{t-1})²
//	ψ(λ) = (-log(1-λ) - λ) / 4
//
// the interval at time t is
//
//	C_t = Σλ_iX_i / Σλ_i  ±  ( log(2/α) + Σ v_i·ψ(λ_i) ) / Σλ_i      (sums over i ≤ t)
//
// and Interval returns ∩_{s≤t} C_s ∩ [0, 1], mapped back to [lo, hi]. Why it
// is valid: λ_t and μ̂_{t-1} depend only on the past, and the inequality
// exp(λξ - ξ²(-log(1-λ)-λ)) ≤ 1 + λξ for ξ ≥ -1, λ ∈ [0, 1) (Fan, Grama and
// Liu, "Exponential inequalities for martingales with applications",
// Electron. J. Probab. 20, 2015) with ξ = X_t - μ̂_{t-1} makes
// ∏_{i≤t} exp(λ_i(X_i-μ) - v_iψ(λ_i)) a nonnegative supermartingale with
// initial value 1; by Ville's inequality it ever exceeds 2/α with
// probability at most α/2, which gives the lower bound, and the same
// argument for 1-X_t (same v_t and λ_t) gives the upper one. The width
// adapts to the observed variance: when most paired differences are 0 (both
// configurations agree) it shrinks much faster than a Hoeffding-type
// sequence.
//
// # Assumptions
//
// Every observation lies in [lo, hi], and each has the same conditional mean
// μ given the previous ones (true for i.i.d. observations, such as tasks run
// in a random order). If the mean drifts, for instance because tasks are
// ordered from easy to hard, the guarantee is void: shuffle the tasks. The
// running intersection can only narrow. If it would become empty, which
// happens only on the ≤ alpha event of non-coverage or when the assumptions
// fail, Conflict reports true from then on and the interval stays frozen at
// the single point halfway between the crossed bounds; treat a conflict as
// "the data do not fit a constant mean", not as a decision.
//
// The zero value is not usable; build one with NewConfidenceSequence. A
// ConfidenceSequence is not safe for concurrent use.
type ConfidenceSequence struct {
	lo, hi  float64
	logTerm float64 // log(2/α)

	n        int
	sum      float64 // Σ X_i (rescaled)
	sumSq    float64 // Σ (X_i - μ̂_i)²
	muPrev   float64 // μ̂_{t-1}
	varPrev  float64 // σ̂²_{t-1}
	sumLam   float64 // Σ λ_i
	sumLamX  float64 // Σ λ_i X_i
	sumVPsi  float64 // Σ v_i ψ(λ_i)
	cur      Interval
	conflict bool    // the running intersection would have been empty
	rawTotal float64 // Σ x_i, original scale, for Mean
}

// NewConfidenceSequence returns an empty (1-alpha) confidence sequence for
// the mean of observations in [lo, hi]. Before the first observation its
// interval is [lo, hi].
//
// It fails with ErrLevel when alpha is not in (0, 1), and with ErrRange when
// lo or hi is NaN or infinite or lo >= hi.
func NewConfidenceSequence(alpha, lo, hi float64) (*ConfidenceSequence, error) {
	if !(alpha > 0 && alpha < 1) {
		return nil, fmt.Errorf("confidence sequence: alpha = %v, want it in (0, 1), e.g. 0.05: %w", alpha, ErrLevel)
	}
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || lo >= hi {
		return nil, fmt.Errorf("confidence sequence: bounds [%v, %v], want finite lo < hi (use [-1, 1] for paired differences of [0, 1] scores): %w", lo, hi, ErrRange)
	}
	return &ConfidenceSequence{
		lo:      lo,
		hi:      hi,
		logTerm: math.Log(2 / alpha),
		muPrev:  0.5,
		varPrev: 0.25,
		cur:     Interval{Lo: lo, Hi: hi, Level: 1 - alpha},
	}, nil
}

// Add records the next observation x and updates the interval. It fails
// with ErrRange, and records nothing, when x is NaN or outside [lo, hi].
func (c *ConfidenceSequence) Add(x float64) error {
	if math.IsNaN(x) || x < c.lo || x > c.hi {
		return fmt.Errorf("confidence sequence: observation %d = %v outside [%v, %v]: %w", c.n+1, x, c.lo, c.hi, ErrRange)
	}
	width := c.hi - c.lo
	// Clamp guards against rounding pushing an in-range x just outside [0, 1].
	xs := math.Min(1, math.Max(0, (x-c.lo)/width))
	c.n++
	t := float64(c.n)

	lam := math.Min(math.Sqrt(2*c.logTerm/(c.varPrev*t*math.Log1p(t))), csLambdaMax)
	dev := xs - c.muPrev
	v := 4 * dev * dev
	psi := (-math.Log1p(-lam) - lam) / 4
	c.sumLam += lam
	c.sumLamX += lam * xs
	c.sumVPsi += v * psi
	c.rawTotal += x

	if !c.conflict {
		center := c.sumLamX / c.sumLam
		half := (c.logTerm + c.sumVPsi) / c.sumLam
		newLo := math.Max(c.lo+width*(center-half), c.cur.Lo)
		newHi := math.Min(c.lo+width*(center+half), c.cur.Hi)
		if newLo > newHi {
			c.conflict = true
			mid := newLo/2 + newHi/2
			newLo, newHi = mid, mid
		}
		c.cur.Lo, c.cur.Hi = newLo, newHi
	}

	// Plug-in estimates for the next step: μ̂_t and σ̂²_t.
	c.sum += xs
	mu := (0.5 + c.sum) / (t + 1)
	c.sumSq += (xs - mu) * (xs - mu)
	c.muPrev = mu
	c.varPrev = (0.25 + c.sumSq) / (t + 1)
	return nil
}

// Interval returns the current running intersection, a (1-alpha) interval
// for the mean in the original [lo, hi] scale with Level = 1-alpha. It only
// narrows as observations are added; before the first one it is [lo, hi].
func (c *ConfidenceSequence) Interval() Interval { return c.cur }

// Conflict reports whether the running intersection would have become
// empty: the observations are inconsistent with one constant mean (a drift,
// such as tasks sorted by difficulty, or the ≤ alpha chance of
// non-coverage). Once true it stays true and Interval no longer changes.
func (c *ConfidenceSequence) Conflict() bool { return c.conflict }

// N returns the number of observations added.
func (c *ConfidenceSequence) N() int { return c.n }

// Mean returns the plain sample mean of the observations added, in the
// original scale, or NaN before the first one. It is a point estimate for
// display; the interval is not centred on it.
func (c *ConfidenceSequence) Mean() float64 {
	if c.n == 0 {
		return math.NaN()
	}
	return c.rawTotal / float64(c.n)
}

// Above reports whether the whole interval lies strictly above v: the mean
// exceeds v, with error probability at most alpha over the whole sequence.
// For paired differences x-y, Above(0) means the first configuration wins.
func (c *ConfidenceSequence) Above(v float64) bool { return c.cur.Lo > v }

// Below reports whether the whole interval lies strictly below v: the mean
// is less than v, with error probability at most alpha over the whole
// sequence. For paired differences x-y, Below(0) means the second
// configuration wins.
func (c *ConfidenceSequence) Below(v float64) bool { return c.cur.Hi < v }
