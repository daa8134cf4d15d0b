package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/tmc/langchaingo/llms"
)

// providerScripted is the scripted model's provider name.
const providerScripted = scripted.Provider

// ScriptedLabel describes the scripted provider in outputs: a script's
// replies (scripted:FILE) or, without a file, each suite task's own
// replies. Outputs of a run in the per-task mode use scripted.TaskLabel.
const ScriptedLabel = "scripted: offline replies from a script (scripted:FILE) or from each suite task's own replies (scripted), not a real model"

// ErrNoReplies means --llm scripted without a file was asked to play
// tasks none of which carries replies of its own.
var ErrNoReplies = errors.New("no scripted replies to play")

// ParseSpec is llm.ParseSpec that also reads "scripted" alone: the
// scripted model in its per-task mode, which plays each suite task's own
// replies (see WithTasks and PlaysTaskReplies).
func ParseSpec(spec string) (config.LLM, error) {
	if strings.EqualFold(strings.TrimSpace(spec), providerScripted) {
		return config.LLM{Provider: providerScripted}, nil
	}
	return llm.ParseSpec(spec)
}

// PlaysTaskReplies reports whether cfg selects the scripted model's
// per-task mode: the scripted provider without a script, which plays the
// replies of the suite task being run (scripted.TaskModel).
func PlaysTaskReplies(cfg config.LLM) bool { return scripted.PlaysTaskReplies(cfg) }

// WithoutReplies returns the ids of the tasks that carry no replies of
// their own, in order: tasks the per-task mode cannot play.
func WithoutReplies(tasks []suite.Task) []string {
	var ids []string
	for _, t := range tasks {
		if len(t.Replies) == 0 {
			ids = append(ids, t.ID)
		}
	}
	return ids
}

// ReplyDigests returns, by task id, a digest of each task's replies, for
// the tasks that have some: what a comparison in the per-task mode
// depends on besides the task itself (compare.Options.TaskDigests), so
// that editing a task's replies runs it again.
func ReplyDigests(tasks []suite.Task) (map[string]string, error) {
	out := map[string]string{}
	for _, t := range tasks {
		if len(t.Replies) == 0 {
			continue
		}
		b, err := json.Marshal(t.Replies)
		if err != nil {
			return nil, fmt.Errorf("digesting the replies of task %s: %w", t.ID, err)
		}
		sum := sha256.Sum256(b)
		out[t.ID] = hex.EncodeToString(sum[:8])
	}
	return out, nil
}

// withScripted registers the scripted provider over the engine's own: with
// a script (scripted:FILE) it is the engine's scripted model; without one
// it plays each of tasks' own replies (scripted.TaskModel), one model
// shared by every pipeline the App builds, so that all the model calls of
// a run take their task's replies from one position. It fails when a
// task's replies are malformed.
func withScripted(tasks []suite.Task) (planner.Option, error) {
	replies := map[string][]scripted.Reply{}
	for _, t := range tasks {
		if len(t.Replies) > 0 {
			replies[t.ID] = t.Replies
		}
	}
	perTask, err := scripted.NewTaskModel(replies)
	if err != nil {
		return nil, err
	}
	build := func(ctx context.Context, cfg config.LLM, baseDir string) (llms.Model, error) {
		if !PlaysTaskReplies(cfg) {
			return scripted.Build(ctx, cfg, baseDir)
		}
		if perTask.Tasks() == 0 {
			return nil, fmt.Errorf("%w: without a file, the scripted model plays each suite task's own \"replies\", and no task given has any; "+
				"run tasks of a suite that carry replies (--suite FILE, and --task ID for planner run), or pass a script: --llm scripted:FILE", ErrNoReplies)
		}
		return perTask, nil
	}
	return planner.WithOfflineProvider(providerScripted, ScriptedLabel, build, llm.AsKind(llm.KindScripted)), nil
}

// TaskRepliesError explains, in one line, why --llm scripted without a
// file cannot play a run and what to pass instead: the run is no task of
// q's suite, or its task t has no replies. found says whether the run's
// question is task t. It wraps ErrNoReplies.
func TaskRepliesError(q TaskQuery, t suite.Task, found bool) error {
	const how = "without a file, the scripted model plays the \"replies\" of the suite task being run"
	switch {
	case found:
		return fmt.Errorf("%w: %s, and task %s of the %s suite has none; give it replies, or pass a script: --llm scripted:FILE", ErrNoReplies, how, t.ID, q.suiteName())
	case q.Suite != "":
		return fmt.Errorf("%w: %s, and this question is no task of the %s suite; pass --task ID, or a script: --llm scripted:FILE", ErrNoReplies, how, q.suiteName())
	default:
		return fmt.Errorf("%w: %s; pass --suite FILE --task ID for a task with replies, or a script: --llm scripted:FILE", ErrNoReplies, how)
	}
}
