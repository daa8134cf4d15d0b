package pipeline

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/tools"
)

// ErrUnknownVar means a template or expression reads a var that nothing
// in the pipeline writes: no node, no input of a nested pipeline.
var ErrUnknownVar = errors.New("reads a var nothing writes")

// VarReader is implemented by node kinds whose settings read vars other
// than through a prompt template (expressions): ReadsVars returns their
// names, which Build checks against the vars the pipeline writes.
type VarReader interface {
	ReadsVars() []string
}

// planStepVar is the name of the vars an execute node writes, one per
// plan step (E1, E2, ...).
var planStepVar = regexp.MustCompile(`^E\d+$`)

// varsTool is the tool through which a model writes vars of any name.
const varsTool = "vars"

// checkVars checks that every var a node's templates or expressions read
// is one the pipeline writes: a node's output (var:NAME, vars:PREFIX),
// a VarWriter's, an input of a nested pipeline (inputs), or a plan step's
// result (E1, ...) when an execute node runs. It checks nothing when the
// model can write vars itself (the vars tool). It does not check the
// order: a var read before the node that writes it ran reads "".
func checkVars(p *config.Pipeline, built map[string]nodekind.Node, prompts []nodePrompts, inputs []string, reg *tools.Registry) error {
	if _, ok := reg.Resolve(varsTool); ok {
		return nil
	}
	written := slices.Clone(inputs)
	var prefixes []string
	steps := false
	for _, n := range p.Nodes {
		written = append(written, varsWritten(n, built[n.ID])...)
		if o, ok := n.Settings["output"].(string); ok && (o == "vars" || strings.HasPrefix(o, "vars:")) {
			prefixes = append(prefixes, strings.TrimPrefix(strings.TrimPrefix(o, "vars"), ":"))
			if prefixes[len(prefixes)-1] == "" {
				prefixes[len(prefixes)-1] = n.ID
			}
		}
		if n.Type == "execute" {
			steps = true
		}
	}
	known := func(name string) bool {
		if slices.Contains(written, name) || steps && planStepVar.MatchString(name) {
			return true
		}
		return slices.ContainsFunc(prefixes, func(pre string) bool { return strings.HasPrefix(name, pre+".") })
	}
	have := func() string {
		w := slices.Clone(written)
		for _, pre := range prefixes {
			w = append(w, pre+".*")
		}
		slices.Sort(w)
		w = slices.Compact(w)
		if len(w) == 0 {
			return "none"
		}
		return strings.Join(w, ", ")
	}
	var errs []error
	for i, n := range p.Nodes {
		seen := map[string]bool{}
		report := func(key, where, name string) {
			if seen[name] {
				return
			}
			seen[name] = true
			errs = append(errs, p.Errorf(key, ErrUnknownVar, "node %q (%s): %s reads var %q, which nothing in this pipeline writes (vars written: %s); write it with output: var:%s, a set node, or pass it to the nested pipeline",
				n.ID, n.Type, where, name, have(), name))
		}
		for _, t := range prompts[i].templates {
			for _, name := range t.Vars() {
				if !known(name) {
					report(fmt.Sprintf("nodes[%d].%s", i, t.Setting()), fmt.Sprintf("setting %q", t.Setting()), name)
				}
			}
		}
		if r, ok := built[n.ID].(VarReader); ok {
			for _, name := range r.ReadsVars() {
				if !known(name) {
					report(fmt.Sprintf("nodes[%d]", i), "an expression", name)
				}
			}
		}
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}
