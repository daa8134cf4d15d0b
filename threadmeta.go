package planner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/state"
)

// ThreadMeta is what a durable thread records of the run that started it,
// so that `planner resume` or `planner serve` can load the same pipeline
// and model and start it again: the format both write into a thread's
// journal.Thread.Meta. Empty fields were not given (the pipeline's own
// llm block, the default limits).
type ThreadMeta struct {
	// Config is the pipeline file's path.
	Config string `json:"config"`
	// LLM is the model spec that overrode the pipeline's llm block.
	LLM string `json:"llm,omitempty"`
	// Suite and Task name the suite task the run played, if any.
	Suite string `json:"suite,omitempty"`
	Task  string `json:"task,omitempty"`
	// Question is the run's question; Reference its reference answer.
	Question  string `json:"question,omitempty"`
	Reference string `json:"reference,omitempty"`
	// MaxSteps and Timeout override the pipeline's limits.
	MaxSteps int           `json:"max_steps,omitempty"`
	Timeout  time.Duration `json:"timeout,omitempty"`
	// Audit is the audit log file the run records its tool calls in
	// (run --audit); "" for audit.db beside the thread store.
	Audit string `json:"audit,omitempty"`
	// Turn numbers the thread's turn in its conversation: 0 or 1 for a
	// first question, n for the follow-up that FollowUp made the thread
	// NAME.turnN of.
	Turn int `json:"turn,omitempty"`
	// History are the earlier turns a follow-up sees (the task's
	// state.Task.History), oldest first.
	History state.History `json:"history,omitempty"`
}

// ErrTurnNotDone: a follow-up on a conversation whose latest turn has not
// ended with an answer (it runs, waits, was interrupted or failed).
var ErrTurnNotDone = errors.New("the conversation's latest turn is not done")

// TurnName is the thread name of turn n (2 and up) of the conversation
// that thread name starts: NAME.turnN.
func TurnName(name string, n int) string { return name + ".turn" + strconv.Itoa(n) }

// LatestTurn returns the latest turn of the conversation that thread name
// holds: name itself, or the last of name.turn2, name.turn3, ... that
// exist. journal.ErrNotFound when name does not exist.
func LatestTurn(ctx context.Context, store journal.Store, name string) (journal.Thread, error) {
	th, err := store.Thread(ctx, name)
	if err != nil {
		return journal.Thread{}, err
	}
	var meta ThreadMeta
	_ = json.Unmarshal(th.Meta, &meta) // a thread started through the Go API may have none
	turn := max(meta.Turn, 1)
	for {
		next, err := store.Thread(ctx, TurnName(name, turn+1))
		if errors.Is(err, journal.ErrNotFound) {
			return th, nil
		}
		if err != nil {
			return journal.Thread{}, err
		}
		th, turn = next, turn+1
	}
}

// FollowUp adds a turn to the conversation that thread name holds: it
// creates the thread NAME.turnN after the latest turn, with the same
// pipeline and run settings, whose task is question with the earlier
// turns' questions and answers as its history (templates read them as
// {{.History}}; the shipped prompts show them briefly). Run it with
// Pipeline.Resume. The earlier turns are not run again: each turn is its
// own thread, resumed and forked on its own. ErrTurnNotDone when the
// latest turn has no answer yet; journal.ErrNotFound when name does not
// exist.
func FollowUp(ctx context.Context, store journal.Store, name, question string) (journal.Thread, error) {
	if question == "" {
		return journal.Thread{}, ErrEmptyQuestion
	}
	last, err := LatestTurn(ctx, store, name)
	if err != nil {
		return journal.Thread{}, err
	}
	if status := journal.LiveStatus(ctx, store, last); status != journal.StatusDone {
		return journal.Thread{}, fmt.Errorf("%w: thread %q is %s: resume it (planner resume %s) before asking a follow-up",
			ErrTurnNotDone, last.Name, status, last.Name)
	}
	var meta ThreadMeta
	if len(last.Meta) > 0 {
		if err := json.Unmarshal(last.Meta, &meta); err != nil {
			return journal.Thread{}, fmt.Errorf("thread %q: its run settings: %w", last.Name, err)
		}
	}
	var prev state.Task
	if len(last.Task) > 0 {
		if err := json.Unmarshal(last.Task, &prev); err != nil {
			return journal.Thread{}, fmt.Errorf("thread %q: its task: %w", last.Name, err)
		}
	}
	if prev.Question == "" {
		prev.Question = meta.Question
	}
	history := append(append(state.History{}, prev.History...), state.Turn{Question: prev.Question, Answer: last.Answer})
	turn := max(meta.Turn, 1) + 1
	task := state.Task{Question: question, History: history}
	meta.Question, meta.Suite, meta.Task, meta.Reference = question, "", "", ""
	meta.Turn, meta.History = turn, history
	metaJSON, err := json.Marshal(meta)
	if err != nil {
		return journal.Thread{}, err
	}
	taskJSON, err := json.Marshal(task)
	if err != nil {
		return journal.Thread{}, err
	}
	th := journal.Thread{Name: TurnName(name, turn), Pipeline: last.Pipeline, Task: taskJSON, Meta: metaJSON, Status: journal.StatusInterrupted}
	if err := store.Create(ctx, th); err != nil {
		return journal.Thread{}, fmt.Errorf("follow-up on thread %q: %w", name, err)
	}
	return store.Thread(ctx, th.Name)
}
