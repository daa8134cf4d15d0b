package scripted

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/internal/textutil"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/middleware"
	"github.com/planner-engine/planner/tools"
	"github.com/tmc/langchaingo/llms"
)

// Errors of the per-task mode (TaskModel). Both match
// middleware.ErrPermanent: the call would fail again, so it is not retried.
var (
	// ErrNoTaskReplies means a call's task has no replies of its own, or
	// none for the config (pipeline) making the call, or the call names no
	// task at all.
	ErrNoTaskReplies = middleware.Permanent("scripted model: no replies for this task")
	// ErrRepliesUsedUp means a run has used every reply of its task and
	// calls the model again.
	ErrRepliesUsedUp = middleware.Permanent("scripted model: the task's replies are used up")
	// ErrBadReply means a reply of a task's own replies (ParseReplies,
	// NewTaskModel) is malformed.
	ErrBadReply = errors.New("bad scripted reply")
)

// Provider is the scripted model's provider name in an llm block.
const Provider = "scripted"

// PlaysTaskReplies reports whether cfg selects the per-task mode: the
// scripted provider without a script, which plays the replies of the
// suite task being run (TaskModel).
func PlaysTaskReplies(cfg config.LLM) bool {
	return cfg.Provider == Provider && cfg.Script == "" && cfg.Model == ""
}

// TaskLabel describes the per-task mode in outputs.
const TaskLabel = "scripted: each suite task's own recorded replies, played in order, not a real model"

// ParseReplies reads the replies of one task from their JSON elements,
// in order: each is an object with a Reply's fields (a field Reply does
// not have is an error; node, role, contains and regex may be present
// and are ignored in per-task mode), or a string, which is a reply of
// that text, such as a model's raw output. An empty string is an empty
// reply. Errors name the reply by its 1-based position and wrap
// ErrBadReply.
func ParseReplies(raw []json.RawMessage) ([]Reply, error) {
	out := make([]Reply, len(raw))
	for i, b := range raw {
		r, err := parseReply(b)
		if err == nil {
			err = checkTaskReply(&r)
		}
		if err != nil {
			return nil, fmt.Errorf("%w %d of %d: %w", ErrBadReply, i+1, len(raw), err)
		}
		out[i] = r
	}
	return out, nil
}

// parseReply decodes one reply: a string is its text, an object its
// fields, strictly.
func parseReply(b json.RawMessage) (Reply, error) {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var text string
		if err := json.Unmarshal(b, &text); err != nil {
			return Reply{}, err
		}
		return Reply{Text: text}, nil
	}
	if len(b) == 0 || b[0] != '{' {
		return Reply{}, errors.New("want a JSON object with the reply's fields (text, tool_calls, ...) or a string, the reply's text")
	}
	var r Reply
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Reply{}, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Reply{}, errors.New("text after the reply's JSON object")
	}
	return r, nil
}

// checkTaskReply validates a reply for the per-task mode and prepares its
// tool calls. Unlike a script's reply it may be empty (a model that
// returned nothing), and its matching fields are not checked, as the mode
// ignores them.
func checkTaskReply(r *Reply) error {
	if r.Times < 0 {
		return errors.New("times must be positive")
	}
	return r.prepareToolCalls()
}

// AnyConfig is the key of a task's replies, in a suite's per-config
// "replies" object, that every config not named by a key of its own plays.
const AnyConfig = "*"

// TaskReplies are one task's recorded replies: those every config plays
// and those recorded for single configs, such as the runs of several
// paradigms on the same task. A run of the config (pipeline) named C plays
// Configs[C] when Configs has C, else All.
type TaskReplies struct {
	// All are the replies of every config that Configs does not name (a
	// suite's list of replies, or the AnyConfig key of its object); nil
	// when only the configs Configs names have replies.
	All []Reply
	// Configs are the replies recorded for single configs, by pipeline
	// name (the config's name:). Nil when every config plays All.
	Configs map[string][]Reply
}

// For returns the replies a run of the config (pipeline) named config
// plays, and which of t's keys holds them: config itself, or "" for All.
// It returns nil when t has none for config.
func (t TaskReplies) For(config string) (replies []Reply, key string) {
	if rs, ok := t.Configs[config]; ok && len(rs) > 0 {
		return rs, config
	}
	return t.All, ""
}

// Empty reports whether t holds no reply for any config.
func (t TaskReplies) Empty() bool {
	if len(t.All) > 0 {
		return false
	}
	for _, rs := range t.Configs {
		if len(rs) > 0 {
			return false
		}
	}
	return true
}

// ConfigNames returns, sorted, the names of the configs that have replies
// of their own, followed by AnyConfig when every other config has some.
func (t TaskReplies) ConfigNames() []string {
	var names []string
	for name, rs := range t.Configs {
		if len(rs) > 0 {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	if len(t.All) > 0 {
		names = append(names, AnyConfig)
	}
	return names
}

// TaskModel is the scripted model in per-task mode: every task of a suite
// carries its own replies, such as the raw outputs of a recorded run, and
// each run of a task is served its task's replies in order, from the
// first, whatever its prompts say (a reply's node, role, contains and
// regex are ignored; times and error are honoured, and stop words cut
// replies as a real API would). A call's task is the one its call
// metadata names (llm.CallMeta.TaskID, which the engine sets from the
// task being run).
//
// A task's replies may differ by config (TaskReplies, NewConfigTaskModel):
// a run then plays those recorded for its own config, the pipeline its
// call metadata names (llm.CallMeta.Pipeline, which the engine sets from
// the pipeline being run), or those of every config when its config has
// none of its own. So recorded runs of several paradigms on the same
// tasks replay side by side.
//
// Where a run is in its task's replies is kept in the run's
// tools.RunState, the per-run state a pipeline attaches to each run's
// context: concurrent runs of the same task, with one config or several,
// each start at their replies' first and never share a position, and
// the position is dropped with the run. A call whose context holds no
// RunState (a model called outside a pipeline run) continues one position
// per task that the TaskModel itself keeps.
//
// A run resumed from a journal (a thread), in this process or another,
// replays its recorded model calls without calling the model, and its
// RunState is new: on its first live call the run's position moves past
// the replies its journaled calls were served (each response names its
// task and reply: GenerationInfo InfoTask and InfoReply), so it carries on
// with the next reply instead of starting over.
//
// A TaskModel is safe for concurrent use.
type TaskModel struct {
	replies map[string]TaskReplies
	mu      sync.Mutex
	loose   map[looseKey]*cursor // the positions of calls outside any run
}

// looseKey names the replies a call outside any run takes its position in:
// a task's, for one config or for all ("").
type looseKey struct{ task, config string }

var _ llms.Model = (*TaskModel)(nil)

// NewTaskModel returns a model that plays replies, keyed by task id, to
// every config's runs of the task. The replies are copied; a malformed one
// (negative times, tool call arguments that are not JSON) fails with an
// error naming its task and position, wrapping ErrBadReply.
func NewTaskModel(replies map[string][]Reply) (*TaskModel, error) {
	all := make(map[string]TaskReplies, len(replies))
	for id, rs := range replies {
		all[id] = TaskReplies{All: rs}
	}
	return NewConfigTaskModel(all)
}

// NewConfigTaskModel returns a model that plays replies, keyed by task id,
// each run of a task the replies of its config (TaskReplies.For). The
// replies are copied; a malformed one (negative times, tool call
// arguments that are not JSON) fails with an error naming its task, its
// config (when it is one config's) and its position, wrapping ErrBadReply.
func NewConfigTaskModel(replies map[string]TaskReplies) (*TaskModel, error) {
	m := &TaskModel{replies: make(map[string]TaskReplies, len(replies)), loose: map[looseKey]*cursor{}}
	for id, tr := range replies {
		var own TaskReplies
		var err error
		if own.All, err = copyTaskReplies(tr.All, id, ""); err != nil {
			return nil, err
		}
		if tr.Configs != nil {
			own.Configs = make(map[string][]Reply, len(tr.Configs))
		}
		for config, rs := range tr.Configs {
			if own.Configs[config], err = copyTaskReplies(rs, id, config); err != nil {
				return nil, err
			}
		}
		m.replies[id] = own
	}
	return m, nil
}

// copyTaskReplies copies and checks the replies of task id, for config
// ("" for every config).
func copyTaskReplies(rs []Reply, id, config string) ([]Reply, error) {
	if rs == nil {
		return nil, nil
	}
	own := make([]Reply, len(rs))
	for i, r := range rs {
		r.ToolCalls = append([]ToolCall(nil), r.ToolCalls...)
		if err := checkTaskReply(&r); err != nil {
			if config != "" {
				return nil, fmt.Errorf("%w %d of task %q for config %q: %w", ErrBadReply, i+1, id, config, err)
			}
			return nil, fmt.Errorf("%w %d of task %q: %w", ErrBadReply, i+1, id, err)
		}
		own[i] = r
	}
	return own, nil
}

// Tasks returns how many tasks have replies, for one config or more.
func (m *TaskModel) Tasks() int {
	n := 0
	for _, tr := range m.replies {
		if !tr.Empty() {
			n++
		}
	}
	return n
}

// cursor is a run's position in its task's replies.
type cursor struct {
	mu    sync.Mutex
	next  int // index of the reply the next call gets
	used  int // calls the reply at next has served already
	calls int // calls served
	// synced is the journal session resume last read.
	synced *journal.Run
}

// take returns the reply for the next call, its index in replies and the
// call's 1-based number; ok is false when replies are used up.
func (c *cursor) take(replies []Reply) (r Reply, idx, call int, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.next < len(replies) && c.used >= max(replies[c.next].Times, 1) {
		c.next++
		c.used = 0
	}
	if c.next >= len(replies) {
		return Reply{}, -1, c.calls + 1, false
	}
	c.used++
	c.calls++
	return replies[c.next], c.next, c.calls, true
}

// cursorKey is the key of a run's cursor in its tools.RunState.
type cursorKey struct {
	model *TaskModel
	task  string
	// config is the key of the task's replies the run plays: its config's
	// name, or "" for the replies of every config.
	config string
}

// cursorFor returns the position of the run of ctx in task's replies for
// config ("" for those of every config).
func (m *TaskModel) cursorFor(ctx context.Context, task, config string) *cursor {
	if tools.RunStateFrom(ctx) != nil {
		return tools.State(ctx, cursorKey{model: m, task: task, config: config}, func() *cursor { return &cursor{} })
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := looseKey{task: task, config: config}
	c := m.loose[k]
	if c == nil {
		c = &cursor{}
		m.loose[k] = c
	}
	return c
}

// Call implements llms.Model's simple text interface.
func (m *TaskModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// GenerateContent serves the next reply of the calling run's task, for
// the run's config. It fails with ErrNoTaskReplies when the call names no
// task or its task has no replies for the run's config (naming the task,
// the config and the configs that have some), and with ErrRepliesUsedUp,
// naming the task and how many replies it had, when the run has used them
// all.
func (m *TaskModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	opts := callOptions(options)
	caller := llm.CallMetaFrom(ctx)
	if caller.TaskID == "" {
		return nil, fmt.Errorf("%w: the call names no task; without a script the scripted model plays the replies of the suite task being run, "+
			"found by its id (run a task of a suite, or give a script: scripted:FILE); %s", ErrNoTaskReplies, describe(caller, llm.MessagesText(msgs, "")))
	}
	tr := m.replies[caller.TaskID]
	replies, key := tr.For(caller.Pipeline)
	if len(replies) == 0 {
		return nil, noReplies(caller, tr)
	}
	c := m.cursorFor(ctx, caller.TaskID, key)
	c.resume(ctx, caller.TaskID, replies)
	reply, idx, call, ok := c.take(replies)
	if !ok {
		return nil, fmt.Errorf("%w: task %q had %s%s, and this run has used them all: call %d has none; %s", ErrRepliesUsedUp, caller.TaskID,
			textutil.Count(len(replies), "reply", "replies")+servedCalls(replies), forConfig(key), call, describe(caller, llm.MessagesText(msgs, "")))
	}
	if reply.Error != "" {
		return nil, fmt.Errorf("%w: %s", ErrScriptedFailure, reply.Error)
	}
	return respond(ctx, reply, opts, false, map[string]any{InfoTask: caller.TaskID, InfoReply: idx + 1})
}

// noReplies is the ErrNoTaskReplies error of a call whose task, tr's, has
// no replies for the calling run's config.
func noReplies(caller llm.CallMeta, tr TaskReplies) error {
	have := tr.ConfigNames()
	switch {
	case len(have) == 0:
		return fmt.Errorf("%w: task %q has none (give it \"replies\" in the suite, or use scripted:FILE)", ErrNoTaskReplies, caller.TaskID)
	case caller.Pipeline == "":
		return fmt.Errorf("%w: task %q has replies only for the configs %s, and the call names no config (pipeline); "+
			"run the task with one of those configs, give the task replies for every config (a list, or the key %q), or use scripted:FILE",
			ErrNoTaskReplies, caller.TaskID, strings.Join(have, ", "), AnyConfig)
	default:
		return fmt.Errorf("%w: task %q has none for config %q, only for the configs %s; "+
			"record replies for %q under its name in the task's \"replies\" object (or under %q for every config), or use scripted:FILE",
			ErrNoTaskReplies, caller.TaskID, caller.Pipeline, strings.Join(have, ", "), caller.Pipeline, AnyConfig)
	}
}

// forConfig says whose replies key names, for messages: "" for every
// config's.
func forConfig(key string) string {
	if key == "" {
		return ""
	}
	return fmt.Sprintf(" for config %q", key)
}

// servedCalls says how many calls replies serve when a times setting makes
// that differ from their number, else "".
func servedCalls(replies []Reply) string {
	n := 0
	for _, r := range replies {
		if n > math.MaxInt-max(r.Times, 1) {
			return " (for more calls than can be counted, with times)"
		}
		n += max(r.Times, 1)
	}
	if n == len(replies) {
		return ""
	}
	return fmt.Sprintf(" (for %d calls, with times)", n)
}
