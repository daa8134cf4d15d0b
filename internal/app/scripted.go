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
// their own for any config, in order: tasks the per-task mode cannot
// play. A task with replies for some configs only is not among them; a
// run of another config fails with scripted.ErrNoTaskReplies, naming the
// configs that have some.
func WithoutReplies(tasks []suite.Task) []string {
	var ids []string
	for _, t := range tasks {
		if !t.HasReplies() {
			ids = append(ids, t.ID)
		}
	}
	return ids
}

// ReplyDigests returns, by task id, a digest of the replies each task
// holds for every config (suite.Task.Replies), for the tasks that have
// some: what a comparison in the per-task mode depends on besides the
// task itself (compare.Options.TaskDigests), so that editing a task's
// replies runs it again. It leaves out the replies of single configs
// (suite.Task.ConfigReplies); ConfigReplyDigests has both.
func ReplyDigests(tasks []suite.Task) (map[string]string, error) {
	out := map[string]string{}
	for _, t := range tasks {
		if len(t.Replies) == 0 {
			continue
		}
		d, err := replyDigest(t.Replies)
		if err != nil {
			return nil, fmt.Errorf("digesting the replies of task %s: %w", t.ID, err)
		}
		out[t.ID] = d
	}
	return out, nil
}

// ConfigReplyDigests returns the digests of the tasks' replies that a
// comparison in the per-task mode (--llm scripted) resumes by:
// byTask, by task id, the digest of the replies every config plays
// (suite.Task.Replies; ReplyDigests), for compare.Options.TaskDigests; and
// byConfig, by config (pipeline) name and then task id, the digest of the
// replies recorded for that config (suite.Task.ConfigReplies), for
// compare.Options.ConfigTaskDigests, which a comparison uses in place of
// byTask's for that config. Editing the replies a config plays for a task
// runs that config on that task again, and no other. byConfig is nil when
// no task has replies of single configs.
func ConfigReplyDigests(tasks []suite.Task) (byTask map[string]string, byConfig map[string]map[string]string, err error) {
	if byTask, err = ReplyDigests(tasks); err != nil {
		return nil, nil, err
	}
	for _, t := range tasks {
		for config, rs := range t.ConfigReplies {
			if len(rs) == 0 {
				continue
			}
			d, err := replyDigest(rs)
			if err != nil {
				return nil, nil, fmt.Errorf("digesting the replies of task %s for config %s: %w", t.ID, config, err)
			}
			if byConfig == nil {
				byConfig = map[string]map[string]string{}
			}
			if byConfig[config] == nil {
				byConfig[config] = map[string]string{}
			}
			byConfig[config][t.ID] = d
		}
	}
	return byTask, byConfig, nil
}

// replyDigest is a short digest of replies' JSON.
func replyDigest(replies []scripted.Reply) (string, error) {
	b, err := json.Marshal(replies)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8]), nil
}

// withScripted registers the scripted provider over the engine's own: with
// a script (scripted:FILE) it is the engine's scripted model; without one
// it plays each of tasks' own replies (scripted.TaskModel), each run those
// of its config where the task has replies by config, one model shared by
// every pipeline the App builds, so that all the model calls of a run
// take their task's replies from one position. It fails when a task's
// replies are malformed.
func withScripted(tasks []suite.Task) (planner.Option, error) {
	replies := map[string]scripted.TaskReplies{}
	for _, t := range tasks {
		if t.HasReplies() {
			replies[t.ID] = t.TaskReplies()
		}
	}
	perTask, err := scripted.NewConfigTaskModel(replies)
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

// ConfigRepliesError says why --llm scripted without a file cannot play
// task t, a task of q's suite, with the config (pipeline) named config,
// and what to pass instead; nil when t has replies for config (its own, or
// every config's). It wraps ErrNoReplies.
func ConfigRepliesError(q TaskQuery, t suite.Task, config string) error {
	if rs, _ := t.TaskReplies().For(config); len(rs) > 0 {
		return nil
	}
	have := t.TaskReplies().ConfigNames()
	if len(have) == 0 {
		return TaskRepliesError(q, t, true)
	}
	return fmt.Errorf("%w: without a file, the scripted model plays the \"replies\" the suite task being run has for its config, and task %s of the %s suite has none for config %s, only for %s; "+
		"run one of those configs, give the task replies for %s (or for every config, under \"*\"), or pass a script: --llm scripted:FILE",
		ErrNoReplies, t.ID, q.suiteName(), config, strings.Join(have, ", "), config)
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
