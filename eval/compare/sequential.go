package compare

import (
	"math/rand/v2"
	"sync"

	"github.com/planner-engine/planner/eval/stats"
)

// Stopped says why a comparison stopped running a config (Options.
// StopWhenDecided): its always-valid interval of the success difference
// from the baseline lay below zero.
type Stopped struct {
	// Pairs counts the paired runs (same task and repeat, both scored)
	// the decision rests on.
	Pairs int `json:"pairs"`
	// Diff is the always-valid interval of the config's mean success
	// minus the baseline's when the decision was taken
	// (stats.ConfidenceSequence), at level 1 - Options.StopAlpha.
	Diff stats.Interval `json:"diff"`
	// Skipped counts the config's runs not made because of it: not
	// stored, not in any figure; running the comparison again without
	// Options.StopWhenDecided runs them.
	Skipped int `json:"skipped"`
}

// pairKey is a run's place in a comparison: its task and repeat.
type pairKey struct {
	task string
	rep  int
}

// decider follows, for every entry but the baseline, an always-valid
// confidence sequence of its success minus the baseline's, over the runs
// both made of the same task and repeat (both scored), and says which
// entries are shown beaten. It is safe for concurrent use.
type decider struct {
	mu      sync.Mutex
	base    int
	alpha   float64
	seqs    []*stats.ConfidenceSequence // by entry; nil for the baseline
	results []map[pairKey]float64       // by entry: success 1/0 of its scored runs
	stopped []*Stopped                  // by entry; nil while it runs
}

// newDecider returns a decider for n entries against entry base, at level
// 1 - alpha.
func newDecider(n, base int, alpha float64) (*decider, error) {
	d := &decider{base: base, alpha: alpha, seqs: make([]*stats.ConfidenceSequence, n), results: make([]map[pairKey]float64, n), stopped: make([]*Stopped, n)}
	for i := range n {
		d.results[i] = map[pairKey]float64{}
		if i == base {
			continue
		}
		cs, err := stats.NewConfidenceSequence(alpha, -1, 1)
		if err != nil {
			return nil, err
		}
		d.seqs[i] = cs
	}
	return d, nil
}

// add records a run of entry e and feeds the pairs it completes to the
// sequences.
func (d *decider) add(e int, r Record) {
	if !r.Scored {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	k := pairKey{r.TaskID, r.Repeat}
	x := b2f(Succeeded(r))
	d.results[e][k] = x
	if e != d.base {
		if y, ok := d.results[d.base][k]; ok {
			d.feed(e, x-y)
		}
		return
	}
	for i := range d.seqs {
		if i != d.base {
			if y, ok := d.results[i][k]; ok {
				d.feed(i, y-x)
			}
		}
	}
}

// feed adds the paired difference diff to entry i's sequence and stops
// the entry once the sequence lies below zero (not on a conflict, which
// says the differences do not share one mean).
func (d *decider) feed(i int, diff float64) {
	cs := d.seqs[i]
	if d.stopped[i] != nil || cs.Add(diff) != nil {
		return
	}
	if cs.Below(0) && !cs.Conflict() {
		d.stopped[i] = &Stopped{Pairs: cs.N(), Diff: cs.Interval()}
	}
}

// skip reports whether entry e is stopped, counting a skipped run when it
// is.
func (d *decider) skip(e int) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped[e] == nil {
		return false
	}
	d.stopped[e].Skipped++
	return true
}

// result returns what stopped entry e, or nil.
func (d *decider) result(e int) *Stopped {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if s := d.stopped[e]; s != nil {
		cp := *s
		return &cp
	}
	return nil
}

// shuffled returns the indexes of n tasks in an order drawn from seed,
// the same for the same seed: a confidence sequence assumes the runs it
// is fed share one mean, which a suite ordered from easy to hard breaks.
func shuffled(n int, seed uint64) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	r := rand.New(rand.NewPCG(seed, 0x5eed5eed))
	r.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
	return order
}
