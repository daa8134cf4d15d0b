package executor

import "strings"

// varValueLimit caps each value the state block shows, in characters; the
// vars tool's get returns a value whole.
const varValueLimit = 200

// noVars is the state block after every var was deleted.
const noVars = "(none)\n"

// headState reads the run's working memory for the task message: the
// whole state block (none when no var is set) and its version. It runs
// as the run begins and again when a summary re-renders the task message.
func (r *run) headState() {
	if !r.l.s.showVars {
		return
	}
	r.headVars, r.varsVer, _ = r.st.Vars.Changed(0, varValueLimit)
}

// noteVars attaches the state block to step s when a tool call of the
// step (or anything else since the last block shown) changed the vars, so
// the model sees the new state right after the observation that caused
// it. Earlier messages keep the block they had: the prompt stays
// append-only and a replayed run renders the same messages.
func (r *run) noteVars(s *step) {
	if !r.l.s.showVars {
		return
	}
	block, ver, changed := r.st.Vars.Changed(r.varsVer, varValueLimit)
	if !changed {
		return
	}
	if block == "" {
		block = noVars
	}
	s.vars, r.varsVer = block, ver
}

// varsBlock is the state block as shown: a heading and one line per var.
func (r *run) varsBlock(block string) string {
	return r.l.lb.vars + "\n" + strings.TrimRight(block, "\n")
}

// stateNote is what follows step s's last observation: a blank line and
// the state block, when the step changed the vars; else empty.
func (r *run) stateNote(s *step) string {
	if s.vars == "" {
		return ""
	}
	return "\n\n" + r.varsBlock(s.vars)
}
