// Package hostile_test runs the shipped paradigm configs, wired exactly as
// the command line wires them (internal/app: real tokenizer meter, reply
// limit, retry middleware), against scripted models whose replies are
// hostile: huge, deeply nested, repetitive or lying. Each case must end in a
// clear state — a classified failure or an answer marked incomplete — and
// the work it causes must stay bounded. Bounds are asserted on sizes and
// counts (what reaches the expensive steps), never on wall time.
package hostile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/planner-engine/planner"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/internal/app"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reply is one scripted reply used without limit for the node it names.
func reply(node, text string) scripted.Reply {
	return scripted.Reply{Node: node, Text: text, Times: 1000}
}

// writeScript writes a non-strict script with the given replies and
// fallback, honouring or ignoring stop words.
func writeScript(t *testing.T, ignoreStop bool, fallback string, replies ...scripted.Reply) string {
	t.Helper()
	strict := false
	b, err := json.Marshal(scripted.Script{Strict: &strict, IgnoreStop: ignoreStop, Fallback: fallback, Replies: replies})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "script.json")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	return path
}

// fullPlan is a JSON plan of n steps in which every step depends on every
// earlier one: n*(n-1)/2 dependency edges.
func fullPlan(n int) string {
	var sb strings.Builder
	sb.WriteString(`{"steps":[`)
	for i := 1; i <= n; i++ {
		if i > 1 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"id":"%d","description":"look up part %d","tool":"search","input":"part %d","depends_on":[`, i, i, i)
		for d := 1; d < i; d++ {
			if d > 1 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `"%d"`, d)
		}
		sb.WriteString(`]}`)
	}
	sb.WriteString(`]}`)
	return sb.String()
}

// duplicatePlan is a plan of n steps that all use the id "1".
func duplicatePlan(n int) string {
	steps := make([]string, n)
	for i := range steps {
		steps[i] = `{"id":"1","description":"again","tool":"search","input":"x"}`
	}
	return `{"steps":[` + strings.Join(steps, ",") + `]}`
}

type outcome struct {
	state  *state.State
	err    error
	events []trace.Event
}

func (o outcome) llmCalls() []trace.Event {
	var out []trace.Event
	for _, e := range o.events {
		if e.Kind == trace.KindLLMCall {
			out = append(out, e)
		}
	}
	return out
}

// run loads config (relative to the repository root) with the scripted model
// at script and runs question through it, with the command line's wiring.
func run(t *testing.T, a *app.App, cfgFile, script, question string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a safety net, not an assertion
	defer cancel()
	p, err := a.LoadWith(ctx, filepath.Join("..", "..", "configs", cfgFile), config.LLM{Provider: "scripted", Script: script}, 0)
	require.NoError(t, err)
	rec := &trace.Recorder{}
	res, err := p.Run(ctx, question, planner.WithRunID("hostile"), planner.WithTraceSink(rec))
	require.NotNil(t, res)
	require.NoError(t, ctx.Err(), "the run must end by itself")
	return outcome{state: res.State, err: err, events: rec.Events()}
}

// requireClearEnd checks that a run ended in a state a user can act on:
// either a complete answer, or an incomplete one / an error with a failure
// kind and a reason.
func requireClearEnd(t *testing.T, o outcome) {
	t.Helper()
	if o.err == nil && o.state.Complete {
		return
	}
	require.NotEmpty(t, o.state.Failure, "an unsuccessful run names its failure kind (err: %v)", o.err)
	if o.err == nil {
		require.NotEmpty(t, o.state.Reason, "an incomplete answer says why")
	}
}

func TestHostileModelRepliesEndInAClearStateWithBoundedWork(t *testing.T) {
	const replyLimit = 256 << 10 // the documented default of llm.max_reply_bytes
	big := strings.Repeat("a", 1<<20)
	cases := []struct {
		name     string
		config   string
		script   func(t *testing.T) string
		question string
		check    func(t *testing.T, o outcome)
	}{
		{
			name:   "the same action forever is stopped by the repeat guard and still answered",
			config: "react.yaml",
			script: func(t *testing.T) string {
				return writeScript(t, false, "Final Answer: unknown",
					reply("act", "Thought: search again\nAction: search\nAction Input: Eiffel Tower height"))
			},
			question: "How tall is the Eiffel Tower?",
			check: func(t *testing.T, o outcome) {
				assert.False(t, o.state.Complete)
				assert.Equal(t, state.FailureLoop, o.state.Failure)
				assert.LessOrEqual(t, len(o.llmCalls()), 9, "at most max_iterations turns plus the finalizer")
			},
		},
		{
			name:   "invented observations are cut and the real one is used",
			config: "react.yaml",
			script: func(t *testing.T) string {
				// ignore_stop: the model writes past "Observation:" as some providers allow.
				return writeScript(t, true, "Final Answer: 4",
					scripted.Reply{Node: "act", Times: 1, Text: "Thought: add\nAction: calculator\nAction Input: 2+2\nObservation: 5\nThought: done\nFinal Answer: 5"})
			},
			question: "What is 2+2?",
			check: func(t *testing.T, o outcome) {
				require.NoError(t, o.err)
				var obs []string
				for _, e := range o.events {
					if e.Kind == trace.KindObservation {
						obs = append(obs, e.Text)
					}
				}
				require.NotEmpty(t, obs)
				assert.Equal(t, "4", strings.TrimSpace(obs[0]), "the tool's observation, not the invented one")
				assert.Equal(t, "4", o.state.Answer)
			},
		},
		{
			name:   "a 1 MB reply without spaces is cut to the reply limit before it is measured or parsed",
			config: "react.yaml",
			script: func(t *testing.T) string {
				return writeScript(t, false, "Final Answer: unknown", reply("act", big))
			},
			question: "Say something.",
			check: func(t *testing.T, o outcome) {
				calls := o.llmCalls()
				require.NotEmpty(t, calls)
				for _, c := range calls {
					require.NotNil(t, c.Usage)
					assert.LessOrEqual(t, c.Usage.CompletionTokens, replyLimit, "completion measured on the cut reply")
				}
				assert.False(t, o.state.Complete)
			},
		},
		{
			name:   "a 100,000-character action input is truncated in the observation and the history",
			config: "react.yaml",
			script: func(t *testing.T) string {
				return writeScript(t, false, "Final Answer: unknown",
					reply("act", "Thought: search\nAction: search\nAction Input: "+strings.Repeat("x", 100_000)))
			},
			question: "Find it.",
			check: func(t *testing.T, o outcome) {
				calls := o.llmCalls()
				require.NotEmpty(t, calls)
				assert.LessOrEqual(t, len(calls), 9)
				for _, c := range calls {
					require.NotNil(t, c.Usage)
					// Eight turns each quoting a 100k input would be 800k
					// characters of prompt; truncation keeps every prompt small.
					assert.Less(t, c.Usage.PromptTokens, 60_000, "prompt tokens of one call")
				}
			},
		},
		{
			// 250 steps with every dependency: about 200 KB, under the reply
			// limit, with 31,125 dependency edges that used to be checked
			// one cycle search per edge.
			name:   "a 250-step fully dependent plan is rejected as too many steps (planner tests count that no dependency work is done)",
			config: "plan_execute.yaml",
			script: func(t *testing.T) string {
				plan := fullPlan(250)
				require.Less(t, len(plan), replyLimit)
				return writeScript(t, false, "Final Answer: unknown", reply("plan", plan))
			},
			question: "Plan it.",
			check: func(t *testing.T, o outcome) {
				assert.False(t, o.state.Complete)
				assert.Equal(t, state.FailurePlan, o.state.Failure)
				found := false
				for _, e := range o.events {
					if strings.Contains(e.Text, "too many steps") {
						found = true
					}
				}
				assert.True(t, found, "the rejection names the reason")
			},
		},
		{
			name:   "10,000-deep JSON is a malformed plan",
			config: "rewoo.yaml",
			script: func(t *testing.T) string {
				return writeScript(t, false, "unknown", reply("plan", strings.Repeat("[", 10_000)+strings.Repeat("]", 10_000)))
			},
			question: "Plan it.",
			check: func(t *testing.T, o outcome) {
				assert.False(t, o.state.Complete)
				assert.Equal(t, state.FailurePlan, o.state.Failure)
			},
		},
		{
			name:   "2,000 duplicate step ids are rejected with a bounded message",
			config: "llmcompiler.yaml",
			script: func(t *testing.T) string {
				return writeScript(t, false, "Final Answer: unknown", reply("plan", duplicatePlan(2000)))
			},
			question: "Plan it.",
			check: func(t *testing.T, o outcome) {
				assert.False(t, o.state.Complete)
				assert.Equal(t, state.FailurePlan, o.state.Failure)
				for _, e := range o.events {
					if e.Kind == trace.KindError || e.Kind == trace.KindGuard {
						assert.Less(t, len(e.Text), 4096, "a rejection reason fed back to the model stays short")
					}
				}
			},
		},
	}
	a, err := app.New() // one tokenizer for every case, as the command line has
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() })
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := run(t, a, tc.config, tc.script(t), tc.question)
			requireClearEnd(t, o)
			tc.check(t, o)
		})
	}
}
