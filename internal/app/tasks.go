package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/planner-engine/planner/eval/suite"
)

// DemoSuite is the name of the built-in demo suite (suite.Demo) where a
// suite is named on the command line; any other name is a suite file.
const DemoSuite = "demo"

// ErrNoSuchTask means a suite has no task of the requested id.
var ErrNoSuchTask = errors.New("no such task")

// ErrSimNeedsTask means the simulator was asked to play something that is
// not a task of a suite with a gold solution; the simulator plays nothing
// else.
var ErrSimNeedsTask = errors.New("the sim model plays only tasks of a suite with gold solutions")

// LoadSuite loads the suite named name: a built-in suite (DemoSuite or
// another of suite.BuiltinNames, such as "sorting"), or a suite file in
// any format suite.Load detects.
func LoadSuite(ctx context.Context, name string) ([]suite.Task, error) {
	if tasks, _, ok, err := suite.Builtin(name); ok {
		return tasks, err
	}
	return suite.Load(ctx, name)
}

// TaskQuery names the suite task a single run asks: by ID, or, without
// one, by its question.
type TaskQuery struct {
	// Suite is DemoSuite or a suite file; "" means the demo suite.
	Suite string
	// ID is the task's id; "" matches Question against the suite's
	// questions instead.
	ID string
	// Question is the question asked. Questions match when their words are
	// the same, ignoring case, punctuation and spacing.
	Question string
}

// suiteName returns the suite q names, the demo suite by default.
func (q TaskQuery) suiteName() string {
	if q.Suite == "" {
		return DemoSuite
	}
	return q.Suite
}

// FindTask returns the task q names, with its gold solution, and whether
// the suite has it. A query by ID that matches no task fails with
// ErrNoSuchTask, naming the suite's first and last ids; a query by
// question that matches none returns false. Errors loading the suite are
// returned as they are.
func FindTask(ctx context.Context, q TaskQuery) (suite.Task, bool, error) {
	tasks, err := LoadSuite(ctx, q.suiteName())
	if err != nil {
		return suite.Task{}, false, err
	}
	if q.ID != "" {
		for _, t := range tasks {
			if t.ID == q.ID {
				return t, true, nil
			}
		}
		return suite.Task{}, false, fmt.Errorf("%w %q in the %s suite (ids %s to %s)", ErrNoSuchTask, q.ID, q.suiteName(), tasks[0].ID, tasks[len(tasks)-1].ID)
	}
	want := questionKey(q.Question)
	if want == "" {
		return suite.Task{}, false, nil
	}
	for _, t := range tasks {
		if questionKey(t.Question) == want {
			return t, true, nil
		}
	}
	return suite.Task{}, false, nil
}

// SimTaskError explains, in one line, why the simulator cannot play a run
// and what to pass instead. It wraps ErrSimNeedsTask. found says whether
// the run's question is task t of q's suite.
func SimTaskError(q TaskQuery, t suite.Task, found bool) error {
	name := q.suiteName()
	switch {
	case found && t.Gold == nil:
		return fmt.Errorf("%w, and task %s of the %s suite has none; use a real model or --llm scripted:FILE", ErrSimNeedsTask, t.ID, name)
	case q.Suite != "":
		return fmt.Errorf("%w, and this question is no task of the %s suite; pass --task ID, or use --llm scripted:FILE", ErrSimNeedsTask, name)
	default:
		return fmt.Errorf("%w, and this question is no task of the demo suite; pass --suite demo --task ID (e.g. demo-07; the tasks are in corpus/demo_suite.jsonl), or --suite FILE --task ID, or use --llm scripted:FILE", ErrSimNeedsTask)
	}
}

// questionKey is q's words, lower-cased and joined by single spaces, for
// comparing questions.
func questionKey(q string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}), " ")
}
