package server

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/state"
)

// DefaultSuite is the suite of runs that name a task but no suite: the
// built-in demo suite.
const DefaultSuite = "demo"

// runTask returns the task a run request asks, and records the suite
// task it is in meta (Suite, Task, Reference):
//   - a Task is looked up by id in the Suite (default DefaultSuite); a
//     Question given too replaces the task's question;
//   - a Question with a Suite, or with a simulated model, is matched
//     against the suite's questions (questionKey), as `planner run` does:
//     a match runs as that task;
//   - no Question and no Task is refused, naming the suite's task ids.
//
// A simulated model (llm.KindSimulated) plays only suite tasks with a gold
// solution: anything else is refused here, with ErrSimNeedsTask, before
// a thread is created, since such a run could only fail (and its resume
// too). meta.LLM and meta.Config must be set.
func (s *Server) runTask(ctx context.Context, req *RunRequest, meta *threadMeta) (state.Task, error) {
	field := func(name string, err error) error { return withDetails(err, map[string]string{"field": name}) }
	simulated := s.runModel(*meta).Kind == string(llm.KindSimulated)
	question := strings.TrimSpace(req.Question)
	task := state.Task{Question: req.Question}
	if req.Task == "" && req.Suite == "" && !simulated && question != "" {
		return task, nil // a plain question: no suite to look at
	}
	name := cmp.Or(req.Suite, DefaultSuite)
	tasks, _, err := s.cfg.Tasks(ctx, name)
	if err != nil {
		return task, field("suite", err)
	}
	var (
		t     suiteTask
		found bool
	)
	switch {
	case req.Task != "":
		i := slices.IndexFunc(tasks, func(t suiteTask) bool { return t.ID == req.Task })
		if i < 0 {
			return task, field("task", fmt.Errorf("%w: suite %q has no task %q%s", ErrBadRequest, name, req.Task, idRange(tasks)))
		}
		t, found = tasks[i], true
	case question == "":
		return task, field("question", fmt.Errorf("%w: question is required: type a question, or name a task of the %s suite in task%s",
			ErrBadRequest, name, idRange(tasks)))
	default:
		want := questionKey(req.Question)
		i := slices.IndexFunc(tasks, func(t suiteTask) bool { return questionKey(t.Question) == want })
		if i >= 0 {
			t, found = tasks[i], true
		}
	}
	if simulated {
		switch {
		case found && t.Gold == nil:
			return task, field("task", fmt.Errorf("%w: %w, and task %s of the %s suite has none: pick another task of the suite, or use another model",
				ErrBadRequest, ErrSimNeedsTask, t.ID, name))
		case !found:
			return task, field("question", fmt.Errorf("%w: %w, and this question is no task of the %s suite: leave the question empty and pick a task of the suite%s, or use another model",
				ErrBadRequest, ErrSimNeedsTask, name, idRange(tasks)))
		}
	}
	if !found {
		return task, nil
	}
	task = state.Task{ID: t.ID, Question: t.Question, Answer: t.Answer, Tags: t.Tags}
	if question != "" {
		task.Question = req.Question
	}
	meta.Suite, meta.Task, meta.Reference = name, t.ID, t.Answer
	if p, err := s.localPath(name); err == nil && name != DefaultSuite {
		meta.Suite = p
	}
	return task, nil
}

// idRange says which ids a suite's tasks have: " (ids A to B)", or ""
// for an empty suite.
func idRange(tasks []suiteTask) string {
	switch len(tasks) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf(" (id %s)", tasks[0].ID)
	}
	return fmt.Sprintf(" (ids %s to %s)", tasks[0].ID, tasks[len(tasks)-1].ID)
}

// questionKey is q's words, lower-cased and joined by single spaces: two
// questions are the same task when their keys are equal (as `planner
// run` matches a question against a suite).
func questionKey(q string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}), " ")
}
