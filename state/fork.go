package state

import (
	"maps"
	"slices"

	"github.com/planner-engine/planner/plan"
)

// Fork returns a deep copy of s for one branch of a parallel fan-out: the
// branch reads everything s holds and writes only its copy, so nothing it
// does reaches s or a sibling branch except through its join's merge.
//
// Usage is not copied: the copy's Usage starts at zero and stays there,
// because the copy keeps s's hooks (SetHooks), which count every model
// and tool call into the state they were made for (the run's) and check
// the run's budgets against it; the run's usage and budgets are therefore
// shared by all its branches. A nil s forks to nil.
func (s *State) Fork() *State {
	if s == nil {
		return nil
	}
	c := &State{
		Task:         s.Task,
		Plan:         clonePlan(s.Plan),
		Scratchpad:   slices.Clone(s.Scratchpad),
		Reflections:  slices.Clone(s.Reflections),
		Trials:       slices.Clone(s.Trials),
		Candidates:   slices.Clone(s.Candidates),
		SubQuestions: slices.Clone(s.SubQuestions),
		ThoughtPath:  slices.Clone(s.ThoughtPath),
		Notes:        maps.Clone(s.Notes),
		Replans:      s.Replans,
		Answer:       s.Answer,
		Done:         s.Done,
		Complete:     s.Complete,
		Reason:       s.Reason,
		Failure:      s.Failure,
		Incidents:    slices.Clone(s.Incidents),
		hooks:        s.hooks,
	}
	c.Task.Tags = slices.Clone(s.Task.Tags)
	if c.Notes == nil {
		c.Notes = map[string]string{}
	}
	if t := s.SelfConsistency; t != nil {
		c.SelfConsistency = &Tally{Samples: t.Samples, Failed: t.Failed, Votes: slices.Clone(t.Votes)}
	}
	c.Vars.copyFrom(&s.Vars)
	return c
}

func clonePlan(steps []plan.Step) []plan.Step {
	out := slices.Clone(steps)
	for i := range out {
		out[i].DependsOn = slices.Clone(out[i].DependsOn)
	}
	return out
}

// copyFrom replaces v's vars with a copy of src's; v must not be in use
// yet (it is a fresh state's).
func (v *Vars) copyFrom(src *Vars) {
	src.mu.Lock()
	m, version := maps.Clone(src.m), src.version
	src.mu.Unlock()
	v.mu.Lock()
	v.m, v.version = m, version
	v.mu.Unlock()
}
