package usage_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/planner-engine/planner/llm/usage"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// historySteps is the number of ReAct steps of the benchmark histories.
const historySteps = 20

// reactObservation returns a search observation of about 1,000 bytes for
// step i, distinct per step and per run.
func reactObservation(run, i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[search] Body %d-%d: ", run, i)
	for b.Len() < 1000 {
		fmt.Fprintf(&b, "It orbits the Sun every %d.%d years, has a mean radius of %d km and %d known moons; its atmosphere is mostly hydrogen (%d%%) and helium. ", i+run, i, 1000*i+run, i, 70+i%20)
	}
	return b.String()
}

// reactChatHistories returns the message lists of the calls of one 20-step
// chat-style ReAct run: a system prompt and task, then per step the model's
// thought and action and the tool's observation, each call resending the
// whole history.
func reactChatHistories(run int) [][]llms.MessageContent {
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, "You are a careful research agent. Answer the question by interleaving Thought, Action and Observation steps. "+
			"Use the search tool to look facts up; never guess. When you know the answer, reply with Final Answer: followed by the answer."),
		llms.TextParts(llms.ChatMessageTypeHuman, fmt.Sprintf("Question %d: collect facts about 20 bodies of the solar system.", run)),
	}
	calls := make([][]llms.MessageContent, 0, historySteps+1)
	calls = append(calls, msgs)
	for i := 1; i <= historySteps; i++ {
		msgs = append(msgs[:len(msgs):len(msgs)],
			llms.TextParts(llms.ChatMessageTypeAI, fmt.Sprintf("Thought: Step %d: I still need facts about body %d of run %d.\nAction: search\nAction Input: body %d", i, i, run, i)),
			llms.TextParts(llms.ChatMessageTypeHuman, "Observation: "+reactObservation(run, i)))
		calls = append(calls, msgs)
	}
	return calls
}

// reactCompletionPrompts returns the prompts of the calls of one 20-step
// completion-style ReAct run: one growing text of numbered steps.
func reactCompletionPrompts(run int) []string {
	var b strings.Builder
	fmt.Fprintf(&b, "Solve a question answering task with interleaving Thought, Action, Observation steps.\nQuestion %d: collect facts about 20 bodies.\n", run)
	ends := []int{b.Len()}
	for i := 1; i <= historySteps; i++ {
		fmt.Fprintf(&b, "Thought %d: I still need facts about body %d.\nAction %d: Search[body %d]\nObservation %d: %s\n", i, i, i, i, i, reactObservation(run, i))
		ends = append(ends, b.Len())
	}
	all := b.String()
	prompts := make([]string, len(ends))
	for i, end := range ends {
		prompts[i] = all[:end]
	}
	return prompts
}

// benchRuns is how many distinct runs BenchmarkReActHistory prepares and
// cycles through, and benchCacheSize the size of its estimator's cache:
// the runs' texts overflow the cache, so that a run's text is never served
// by an earlier op's cache entries and only repeats within a run can hit, as
// for distinct concurrent runs.
const (
	benchRuns      = 512
	benchCacheSize = 4096
)

// BenchmarkReActHistory counts the prompts of whole 20-step ReAct runs, one
// run per op: chat-style message lists and completion-style growing
// prompts, sequentially and under RunParallel. It uses only the exported
// API so that it also runs against earlier versions.
func BenchmarkReActHistory(b *testing.B) {
	est, err := usage.NewEstimator(usage.WithCacheSize(benchCacheSize))
	require.NoError(b, err)
	chat := make([][][]llms.MessageContent, benchRuns)
	completion := make([][]string, benchRuns)
	for r := range benchRuns {
		chat[r] = reactChatHistories(r)
		completion[r] = reactCompletionPrompts(r)
	}
	countChat := func(op int64) int {
		n := 0
		for _, msgs := range chat[op%benchRuns] {
			n += est.EstimateMessages(msgs)
		}
		return n
	}
	countCompletion := func(op int64) int {
		n := 0
		for _, p := range completion[op%benchRuns] {
			n += est.Count(p)
		}
		return n
	}
	for _, c := range []struct {
		name  string
		count func(op int64) int
	}{{"chat", countChat}, {"completion", countCompletion}} {
		var next atomic.Int64 // shared by the sub-benchmarks so that runs keep cycling
		b.Run(c.name+"/sequential", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.count(next.Add(1))
			}
		})
		b.Run(c.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					c.count(next.Add(1))
				}
			})
		})
	}
}
