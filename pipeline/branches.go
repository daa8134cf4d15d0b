package pipeline

import (
	"errors"
	"fmt"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/graph"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
)

// ErrBranchWrite means a node on a parallel branch writes a var that the
// branch's join does not take: the write could never leave the branch.
var ErrBranchWrite = errors.New("branch writes a var its join does not take")

// ErrQuorum means a join waits for more branches than its fan-out has.
var ErrQuorum = errors.New("join waits for more branches than there are")

// branchJoin is what Build asks of a join node (the `join` kind) to check
// its fan-out.
type branchJoin interface {
	// Needs returns how many of n branches must succeed.
	Needs(n int) int
	// TakesVar returns the var each branch contributes, "" for its answer.
	TakesVar() string
}

// VarWriter is implemented by node kinds that write vars named in their
// settings other than by `output: var:NAME` (which Build reads itself):
// WritesVars returns their names, so that a write on a parallel branch
// that its join does not take is reported at load time.
type VarWriter interface {
	WritesVars() []string
}

// checkBranches checks each fan-out of g against its join: a quorum no
// larger than the branches, and no branch node writing a var the join
// does not take (`output: var:NAME`, or VarWriter). Every problem is a
// *config.Error at the line to change; several come joined.
func checkBranches(p *config.Pipeline, g *graph.Compiled[*state.State], built map[string]nodekind.Node) error {
	var errs []error
	for _, f := range g.FanOuts() {
		j, ok := built[f.Join].(branchJoin)
		if !ok {
			continue
		}
		ji := nodeIndex(p, f.Join)
		if need := j.Needs(len(f.Branches)); need > len(f.Branches) {
			errs = append(errs, p.Errorf(fmt.Sprintf("nodes[%d].wait", ji), ErrQuorum, "join %q waits for %d branches, but the fan-out from %s has %d",
				f.Join, need, f.From, len(f.Branches)))
		}
		takes := j.TakesVar()
		for _, nodes := range f.Branches {
			for _, id := range nodes {
				i := nodeIndex(p, id)
				if i < 0 {
					continue
				}
				for _, name := range varsWritten(p.Nodes[i], built[id]) {
					if name == takes {
						continue
					}
					taken := "its answer"
					if takes != "" {
						taken = "var:" + takes
					}
					key := fmt.Sprintf("nodes[%d].output", i)
					if p.Line(key) == 0 {
						key = fmt.Sprintf("nodes[%d]", i)
					}
					errs = append(errs, p.Errorf(key, ErrBranchWrite,
						"node %q writes var:%s on the branch from %q, but the join %q takes %s from each branch: nothing else a branch writes leaves it (write what the join takes, or set the join's from: var:%s)",
						id, name, nodes[0], f.Join, taken, name))
				}
			}
		}
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

// varsWritten returns the vars node n declares it writes.
func varsWritten(n config.Node, built nodekind.Node) []string {
	var out []string
	if o, ok := n.Settings["output"].(string); ok {
		if name, ok := strings.CutPrefix(o, "var:"); ok {
			out = append(out, name)
		}
	}
	if w, ok := built.(VarWriter); ok {
		out = append(out, w.WritesVars()...)
	}
	return out
}
