package scripted

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
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
	// the call names no task at all.
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

// TaskModel is the scripted model in per-task mode: every task of a suite
// carries its own replies, such as the raw outputs of a recorded run, and
// each run of a task is served its task's replies in order, from the
// first, whatever its prompts say (a reply's node, role, contains and
// regex are ignored; times and error are honoured, and stop words cut
// replies as a real API would). A call's task is the one its call
// metadata names (llm.CallMeta.TaskID, which the engine sets from the
// task being run).
//
// Where a run is in its task's replies is kept in the run's
// tools.RunState, the per-run state a pipeline attaches to each run's
// context: concurrent runs of the same task, with one config or several,
// each start at their task's first reply and never share a position, and
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
	replies map[string][]Reply
	mu      sync.Mutex
	loose   map[string]*cursor // by task id: the positions of calls outside any run
}

var _ llms.Model = (*TaskModel)(nil)

// NewTaskModel returns a model that plays replies, keyed by task id. The
// replies are copied; a malformed one (negative times, tool call
// arguments that are not JSON) fails with an error naming its task and
// position, wrapping ErrBadReply.
func NewTaskModel(replies map[string][]Reply) (*TaskModel, error) {
	m := &TaskModel{replies: make(map[string][]Reply, len(replies)), loose: map[string]*cursor{}}
	for id, rs := range replies {
		own := make([]Reply, len(rs))
		for i, r := range rs {
			r.ToolCalls = append([]ToolCall(nil), r.ToolCalls...)
			if err := checkTaskReply(&r); err != nil {
				return nil, fmt.Errorf("%w %d of task %q: %w", ErrBadReply, i+1, id, err)
			}
			own[i] = r
		}
		m.replies[id] = own
	}
	return m, nil
}

// Tasks returns how many tasks have replies.
func (m *TaskModel) Tasks() int { return len(m.replies) }

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
}

// cursorFor returns the position of the run of ctx in task's replies.
func (m *TaskModel) cursorFor(ctx context.Context, task string) *cursor {
	if tools.RunStateFrom(ctx) != nil {
		return tools.State(ctx, cursorKey{model: m, task: task}, func() *cursor { return &cursor{} })
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.loose[task]
	if c == nil {
		c = &cursor{}
		m.loose[task] = c
	}
	return c
}

// Call implements llms.Model's simple text interface.
func (m *TaskModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// GenerateContent serves the next reply of the calling run's task. It
// fails with ErrNoTaskReplies when the call names no task or its task has
// no replies, and with ErrRepliesUsedUp, naming the task and how many
// replies it had, when the run has used them all.
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
	replies, ok := m.replies[caller.TaskID]
	if !ok || len(replies) == 0 {
		return nil, fmt.Errorf("%w: task %q has none (give it \"replies\" in the suite, or use scripted:FILE)", ErrNoTaskReplies, caller.TaskID)
	}
	c := m.cursorFor(ctx, caller.TaskID)
	c.resume(ctx, caller.TaskID, replies)
	reply, idx, call, ok := c.take(replies)
	if !ok {
		return nil, fmt.Errorf("%w: task %q had %s, and this run has used them all: call %d has none; %s", ErrRepliesUsedUp, caller.TaskID,
			textutil.Count(len(replies), "reply", "replies")+servedCalls(replies), call, describe(caller, llm.MessagesText(msgs, "")))
	}
	if reply.Error != "" {
		return nil, fmt.Errorf("%w: %s", ErrScriptedFailure, reply.Error)
	}
	return respond(ctx, reply, opts, false, map[string]any{InfoTask: caller.TaskID, InfoReply: idx + 1})
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
