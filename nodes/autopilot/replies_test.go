package autopilot_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/planner-engine/planner/verify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// recorded is one task of recorded runs of cot (three samples) and react
// (a ReAct run with calculator calls).
type recorded struct {
	id, question string
	cot          []string // the final answers of cot's three samples; "" for an empty reply
	react        string   // react's final answer
	calc         string   // react's calculator call, if any
}

func (r recorded) task() suite.Task {
	var cot []scripted.Reply
	for _, a := range r.cot {
		text := ""
		if a != "" {
			text = "Let me work it out step by step.\nAnswer: " + a
		}
		cot = append(cot, scripted.Reply{Text: text})
	}
	var react []scripted.Reply
	if r.calc != "" {
		react = append(react, scripted.Reply{Text: "Thought: I should compute it.\nAction: calculator\nAction Input: " + r.calc})
	}
	react = append(react, scripted.Reply{Text: "Thought: I have what I need.\nFinal Answer: " + r.react})
	return suite.Task{Task: state.Task{ID: r.id, Question: r.question},
		ConfigReplies: map[string][]scripted.Reply{"cot": cot, "react": react}}
}

// cascadeRule is the answer the cascade rule implies from the recorded
// outcomes: cot's when a strict majority of its three samples give the
// same non-empty answer (after normalisation), else react's; and whether
// cot's passed.
func (r recorded) cascadeRule() (string, bool) {
	votes := map[string]int{}
	for _, a := range r.cot {
		if a != "" {
			votes[verify.Normalize(a)]++
		}
	}
	for _, a := range r.cot {
		if a != "" && 2*votes[verify.Normalize(a)] > len(r.cot) {
			return a, true
		}
	}
	return r.react, false
}

// countingModel counts calls per task and pipeline.
type countingModel struct {
	m     llms.Model
	mu    sync.Mutex
	calls map[string]int // "task/pipeline"
}

func (c *countingModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	meta := llm.CallMetaFrom(ctx)
	c.mu.Lock()
	c.calls[meta.TaskID+"/"+meta.Pipeline]++
	c.mu.Unlock()
	return c.m.GenerateContent(ctx, msgs, opts...)
}

func (c *countingModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, c, prompt, opts...)
}

func (c *countingModel) count(task, pipeline string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[task+"/"+pipeline]
}

// The cascade over recorded replies of two paradigms reproduces, per
// task, the answer the cascade rule implies from the recorded outcomes:
// cot's (the shipped configs/cot.yaml, three samples that must agree)
// when it passes, else react's (configs/react.yaml), whose replies are
// not consumed when cot passed.
func TestCascadeOverRecordedRepliesFollowsTheRule(t *testing.T) {
	tasks := []recorded{
		{id: "r1", question: "How many legs do 3 spiders have?", cot: []string{"24", "24", "24"}, react: "24", calc: "3*8"},
		{id: "r2", question: "What is 17 times 23?", cot: []string{"391", "381", "391"}, react: "391", calc: "17*23"},
		{id: "r3", question: "What is 1234 plus 5678?", cot: []string{"6812", "6912", "6712"}, react: "6912", calc: "1234+5678"},
		{id: "r4", question: "How many seconds are in a day?", cot: []string{"", "", "86400"}, react: "86400", calc: "24*60*60"},
		{id: "r5", question: "What is 99 squared?", cot: []string{"", "9801", "9801"}, react: "9800", calc: "99*99"},
		{id: "r6", question: "What is 2 to the power 10?", cot: []string{"1000", "1024", "2048"}, react: "1024", calc: "2**10"},
		{id: "r7", question: "How many days are in a leap year?", cot: []string{"366", "366", "365"}, react: "365"},
		{id: "r8", question: "What is 1000 minus 1?", cot: []string{"", "", ""}, react: "999"},
	}
	replies := map[string]scripted.TaskReplies{}
	for _, r := range tasks {
		replies[r.id] = r.task().TaskReplies()
	}
	tm, err := scripted.NewConfigTaskModel(replies)
	require.NoError(t, err)
	m := &countingModel{m: tm, calls: map[string]int{}}

	configs, err := filepath.Abs(filepath.Join("..", "..", "configs"))
	require.NoError(t, err)
	yaml := fmt.Sprintf(`name: cascade
llm: {provider: scripted}
nodes:
  - id: solve
    type: autopilot
    candidates:
      - {pipeline: %q, check: {agreement: 3}}
      - {pipeline: %q}
edges:
  - {from: START, to: solve}
  - {from: solve, to: END}
`, filepath.Join(configs, "cot.yaml"), filepath.Join(configs, "react.yaml"))
	p, err := build(t, yaml, m, buildOpts{})
	require.NoError(t, err)

	passed := 0
	for _, r := range tasks {
		want, cotPassed := r.cascadeRule()
		rec := &trace.Recorder{}
		res, err := p.Run(context.Background(), r.task().Task, trace.New(r.id, rec))
		require.NoError(t, err, r.id)
		assert.Equal(t, want, res.State.Answer, "%s: the answer the rule implies", r.id)
		assert.True(t, res.State.Complete, r.id)
		assert.Equal(t, 3, m.count(r.id, "cot"), "%s: cot's three samples play cot's recording", r.id)
		chosen, _ := res.State.Vars.Get("autopilot.candidate")
		if cotPassed {
			passed++
			assert.Equal(t, "cot", chosen, r.id)
			assert.Zero(t, m.count(r.id, "react"), "%s: react's replies are not consumed", r.id)
			continue
		}
		assert.Equal(t, "react", chosen, r.id)
		wantReact := 1
		if r.calc != "" {
			wantReact = 2
		}
		assert.Equal(t, wantReact, m.count(r.id, "react"), "%s: react plays its own recording", r.id)
		checks := decisions(rec, "check")
		require.Len(t, checks, 2, r.id)
		assert.Equal(t, "react", checks[0].Data["escalate_to"], r.id)
		if r.calc != "" {
			assert.True(t, hasObservation(rec, "act"), "%s: react called the calculator", r.id)
		}
	}
	assert.Equal(t, 4, passed, "the suite mixes passing and failing cot recordings")
}

// hasObservation reports whether a tool observation was traced by a node
// whose id starts with prefix (a nested run's node events carry their own
// ids).
func hasObservation(rec *trace.Recorder, prefix string) bool {
	for _, e := range rec.OfKind(trace.KindObservation) {
		if strings.HasPrefix(e.Node, prefix) {
			return true
		}
	}
	return false
}
