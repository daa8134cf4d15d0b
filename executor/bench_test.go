package executor_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/planner-engine/planner/corpus"
	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/llm/usage"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/search"
	"github.com/tmc/langchaingo/llms"
)

// curveMeter measures prompts with the tokenizer and keeps each call's
// prompt tokens in order.
type curveMeter struct {
	est     *usage.Estimator
	prompts []int
}

func (m *curveMeter) Measure(msgs []llms.MessageContent, resp *llms.ContentResponse) (int, int, bool) {
	p := m.est.EstimateMessages(msgs)
	m.prompts = append(m.prompts, p)
	return p, m.est.EstimateResponse(resp), true
}

// benchEntities are 20 distinct demo-corpus look-ups, one per step.
var benchEntities = []string{"Jupiter", "Saturn", "Uranus", "Neptune", "Mars", "Venus", "Mercury", "Earth", "Pluto", "Ceres",
	"Titan", "Europa", "Ganymede", "Callisto", "Io", "Triton", "Charon", "Iapetus", "Voyager 1", "Voyager 2"}

// BenchmarkPromptTokensPerStep runs a 20-step search run over the demo
// corpus (about 1,000-character observations) and reports the prompt
// tokens of the calls at steps 1, 5, 10, 15 and 20 and of the whole run,
// with the default compaction (keep_steps 3, compaction block) and
// without it.
func BenchmarkPromptTokensPerStep(b *testing.B) {
	est, err := usage.NewEstimator()
	if err != nil {
		b.Fatal(err)
	}
	st, err := search.New(context.Background(), search.FromFS(corpus.Demo()))
	if err != nil {
		b.Fatal(err)
	}
	reg, err := tools.NewRegistry([]tools.Tool{st})
	if err != nil {
		b.Fatal(err)
	}
	replies := make([]string, 0, len(benchEntities)+1)
	for i, e := range benchEntities {
		replies = append(replies, fmt.Sprintf("Thought: Step %d: I still need facts about %s.\nAction: search\nAction Input: %s", i+1, e, e))
	}
	replies = append(replies, "Thought: I have looked everything up.\nFinal Answer: done")
	for _, keep := range []int{3, 0} {
		name := fmt.Sprintf("keep_steps=%d", keep)
		b.Run(name, func(b *testing.B) {
			var curve []int
			for b.Loop() {
				meter := &curveMeter{est: est}
				l, err := executor.NewLoop(nodekind.Env{Model: llm.Model{LLM: scripted.Texts(replies...), Meter: meter}, Tools: reg},
					executor.ReActConfig{MaxIterations: len(replies), KeepSteps: &keep})
				if err != nil {
					b.Fatal(err)
				}
				out, err := l.Run(context.Background(), hookedState(state.Task{}), executor.Input{Task: "Collect facts about 20 bodies."})
				if err != nil || !out.Complete {
					b.Fatalf("run did not complete: %v %+v", err, out)
				}
				curve = meter.prompts
			}
			total := 0
			for _, p := range curve {
				total += p
			}
			for _, s := range []int{1, 5, 10, 15, 20} {
				b.ReportMetric(float64(curve[s-1]), fmt.Sprintf("tok@step%d", s))
			}
			b.ReportMetric(float64(total), "prompt-tok/run")
		})
	}
}
