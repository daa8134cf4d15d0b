package nodes_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/nodes"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

func TestParseValueReadsTheLastVerdictTolerantly(t *testing.T) {
	cases := []struct {
		reply string
		want  float64
	}{
		{"Sure.", nodes.ValueSure},
		{"likely", nodes.ValueLikely},
		{"This is impossible, 3 is left", nodes.ValueImpossible},
		{"I am not sure", nodes.ValueLikely},
		{"unlikely", nodes.ValueUnlikely},
		{"At first it looked impossible, but 4 * 6 = 24.\nsure", nodes.ValueSure},
		{"Score: 8/10", 1.6},
		{"10", 2},
		{"no idea", nodes.ValueLikely},
		{"", nodes.ValueLikely},
	}
	for _, tc := range cases {
		t.Run(tc.reply, func(t *testing.T) {
			assert.InDelta(t, tc.want, nodes.ParseValue(tc.reply), 1e-9)
		})
	}
}

func TestLeafAnswerNeedsAnExplicitMarker(t *testing.T) {
	a, ok := nodes.LeafAnswer("Answer: 42")
	assert.True(t, ok)
	assert.Equal(t, "42", a)
	a, ok = nodes.LeafAnswer(`so it is \boxed{7}`)
	assert.True(t, ok)
	assert.Equal(t, "7", a)
	_, ok = nodes.LeafAnswer("6 * 7 = 42 (left: 42)")
	assert.False(t, ok, "a plain step is not an answer")
}

// dfsScript is a tree whose most promising branch (alpha, "sure") dead-ends
// and whose second branch (beta, "likely") reaches the answer.
func dfsScript(t *testing.T) (*llmtest.Recorder, *scripted.Model) {
	t.Helper()
	return script(t, false,
		scripted.Reply{Role: "propose", Contains: "Steps so far:\nalpha\n", Text: "1. alpha dead end", Times: 5},
		scripted.Reply{Role: "propose", Contains: "Steps so far:\nbeta\n", Text: "1. Answer: 42", Times: 5},
		scripted.Reply{Role: "propose", Text: "1. alpha\n2. beta", Times: 5},
		scripted.Reply{Role: "evaluate", Contains: "Candidate next step: alpha dead end", Text: "impossible", Times: 5},
		scripted.Reply{Role: "evaluate", Contains: "Candidate next step: alpha", Text: "sure", Times: 5},
		scripted.Reply{Role: "evaluate", Text: "likely", Times: 5},
	)
}

func TestToTDFSBacktracksFromADeadEnd(t *testing.T) {
	rec, m := dfsScript(t)
	st, tr, err := runNode(t, nodes.NewToT, "tot", map[string]any{"search": "dfs", "depth": 3}, rec, state.Task{Question: "What is six times seven?"})
	require.NoError(t, err)
	assert.Equal(t, "42", st.Answer)
	assert.True(t, st.Complete)
	assert.Equal(t, []string{"beta", "Answer: 42"}, st.ThoughtPath)

	var expanded []string
	for _, r := range requests(rec, "propose") {
		path := ""
		if _, after, ok := strings.Cut(r.prompt, "Steps so far:\n"); ok {
			path, _, _ = strings.Cut(after, "\n")
		}
		expanded = append(expanded, path)
	}
	assert.Equal(t, []string{"", "alpha", "beta"}, expanded, "best child first, then backtrack to the next")
	var backtracks []string
	for _, e := range tr.OfKind(trace.KindInfo) {
		if e.Data["backtrack"] == true {
			backtracks = append(backtracks, e.Text)
		}
	}
	assert.Equal(t, []string{"backtrack: alpha"}, backtracks)
	u := st.Usage.Snapshot()
	assert.Equal(t, m.Calls(), u.ModelCalls, "every call's usage is counted")
	assert.Len(t, tr.OfKind(trace.KindLLMCall), m.Calls())
}

func TestToTDFSDoesNotExploreChildrenBelowTheThreshold(t *testing.T) {
	rec, _ := dfsScript(t)
	st, _, err := runNode(t, nodes.NewToT, "tot", map[string]any{"search": "dfs", "threshold": 5}, rec, state.Task{Question: "q"})
	require.NoError(t, err)
	assert.False(t, st.Complete)
	assert.Len(t, requests(rec, "propose"), 2, "only alpha (sure) is expanded; beta (likely) is below the threshold")
	assert.Equal(t, state.FailureBudget, st.Failure)
}

func TestToTDFSStopsAtItsStateBudget(t *testing.T) {
	rec, _ := dfsScript(t)
	st, _, err := runNode(t, nodes.NewToT, "tot", map[string]any{"search": "dfs", "max_states": 2}, rec, state.Task{Question: "q"})
	require.NoError(t, err)
	assert.Len(t, requests(rec, "propose"), 2)
	assert.False(t, st.Complete)
	assert.Contains(t, st.Reason, "max_states budget of 2")
}

// game24Script proposes one wrong final expression next to a path that
// reaches a right one, and values every step "sure".
func game24Script(t *testing.T) *llmtest.Recorder {
	t.Helper()
	rec, _ := script(t, false,
		scripted.Reply{Role: "propose", Contains: "4 * 6 = 24 (left: 24)\n", Text: "1. Answer: 1 + 2 + 3 * 4\n2. Answer: 1 * 2 * 3 * 4", Times: 5},
		scripted.Reply{Role: "propose", Contains: "2 * 3 = 6 (left: 4 6)\n", Text: "1. 4 * 6 = 24 (left: 24)", Times: 5},
		scripted.Reply{Role: "propose", Contains: "1 * 2 = 2 (left: 2 3 4)\n", Text: "1. 2 * 3 = 6 (left: 4 6)", Times: 5},
		scripted.Reply{Role: "propose", Text: "1. Answer: 1 + 2 + 3 + 4\n2. 1 * 2 = 2 (left: 2 3 4)", Times: 5},
		scripted.Reply{Role: "evaluate", Text: "sure", Times: 50},
	)
	return rec
}

func TestToTVerifiesGame24AnswersAndKeepsSearching(t *testing.T) {
	task := state.Task{Question: "Use 1 2 3 4 and + - * / to obtain 24, using each number exactly once."}
	cases := []struct {
		name     string
		settings map[string]any
		want     string
		rejected int
	}{
		{"bfs with the verifier", map[string]any{"verify": "game24", "depth": 4, "beam": 2}, "1 * 2 * 3 * 4", 2},
		{"dfs with the verifier", map[string]any{"verify": "game24", "depth": 4, "search": "dfs"}, "1 * 2 * 3 * 4", 2},
		{"bfs without a verifier trusts the evaluator", map[string]any{"depth": 4, "beam": 2}, "1 + 2 + 3 + 4", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := game24Script(t)
			st, tr, err := runNode(t, nodes.NewToT, "tot", tc.settings, rec, task)
			require.NoError(t, err)
			assert.Equal(t, tc.want, st.Answer)
			assert.True(t, st.Complete)
			rejected := 0
			for _, e := range tr.OfKind(trace.KindCandidate) {
				if v, ok := e.Data["verdict"].(string); ok && strings.Contains(v, "does not equal 24") {
					rejected++
					assert.Equal(t, true, e.Data["pruned"], "a rejected answer is pruned")
				}
			}
			assert.Equal(t, tc.rejected, rejected)
			if tc.settings["verify"] != nil {
				for _, r := range requests(rec, "evaluate") {
					assert.NotContains(t, r.prompt, "Candidate next step: Answer:", "verified leaves need no evaluator call")
				}
			}
			// Every candidate points at its parent state.
			for i, c := range st.Candidates {
				if c.Depth == 1 {
					assert.Equal(t, -1, c.Parent, "candidate %d", i)
					continue
				}
				require.GreaterOrEqual(t, c.Parent, 0)
				require.Less(t, c.Parent, i)
				assert.Equal(t, c.Depth-1, st.Candidates[c.Parent].Depth)
			}
		})
	}
}

func TestToTGame24VerifierNeedsPuzzleNumbers(t *testing.T) {
	rec := game24Script(t)
	_, _, err := runNode(t, nodes.NewToT, "tot", map[string]any{"verify": "game24"}, rec, state.Task{Question: "Who discovered Pluto?"})
	require.Error(t, err)
	assert.ErrorIs(t, err, nodes.ErrNotGame24)
	assert.Empty(t, requests(rec, ""), "no call is made")
}

func TestToTRejectsBadSettings(t *testing.T) {
	cases := []struct {
		settings map[string]any
		key      string
	}{
		{map[string]any{"search": "astar"}, "search"},
		{map[string]any{"verify": "sudoku"}, "verify"},
		{map[string]any{"proposals": -1}, "proposals"},
		{map[string]any{"propose_prompt": "{{.Extra.K"}, "propose_prompt"},
		{map[string]any{"width": 3}, "width"},
	}
	for _, tc := range cases {
		t.Run(tc.key, func(t *testing.T) {
			_, err := nodes.NewToT(nodekind.Env{}, nodekind.Spec{ID: "tot", Type: "tot", Settings: tc.settings})
			requireSettingError(t, err, tc.key)
		})
	}
}

func TestToTDropsBranchesWhoseCallsFailButNotTheSearch(t *testing.T) {
	rec, _ := script(t, false,
		scripted.Reply{Role: "propose", Contains: "Steps so far:\nbroken\n", Error: "upstream 500", Times: 5},
		scripted.Reply{Role: "propose", Contains: "Steps so far:\nfine\n", Text: "1. Answer: 42", Times: 5},
		scripted.Reply{Role: "propose", Text: "1. broken\n2. fine", Times: 5},
		scripted.Reply{Role: "evaluate", Contains: "Candidate next step: broken", Text: "sure", Times: 5},
		scripted.Reply{Role: "evaluate", Text: "likely", Times: 5},
	)
	st, _, err := runNode(t, nodes.NewToT, "tot", map[string]any{"beam": 2}, rec, state.Task{Question: "q"})
	require.NoError(t, err)
	assert.Equal(t, "42", st.Answer)

	rec, _ = script(t, false, scripted.Reply{Role: "propose", Error: "upstream 500", Times: 5})
	_, _, err = runNode(t, nodes.NewToT, "tot", nil, rec, state.Task{Question: "q"})
	require.Error(t, err, "a level whose every call failed fails the search")
	assert.ErrorIs(t, err, llm.ErrModel)
}

// totReplies answers every ToT call: k numbered proposals that depend on
// the path, or a "likely" value. No proposal is an answer, so the search
// runs its full depth. Behind an llmtest.Latency, it is a model with a
// fixed latency.
func totReplies(k int) llmtest.Func {
	return func(ctx context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
		text := "likely"
		if llm.CallMetaFrom(ctx).Role == "propose" {
			var b strings.Builder
			for i := 1; i <= k; i++ {
				fmt.Fprintf(&b, "%d. step %d after %d earlier lines\n", i, i, len(msgs))
			}
			text = b.String()
		}
		return llmtest.TextResponse(text), nil
	}
}

// BenchmarkToTConcurrency runs BFS with b=5, k=5, d=3 against a model with
// a fixed 50 ms latency. Each level makes one concurrent round of proposals
// and one of valuations, so a search should take about d × 2 × 50 ms =
// 300 ms (ideal-ms), not the 3.3 s (serial-ms) its 66 calls (1 + 5 + 5
// proposals, 5 + 25 + 25 valuations) would take one at a time.
func BenchmarkToTConcurrency(b *testing.B) {
	const (
		beam, k, depth = 5, 5, 3
		latency        = 50 * time.Millisecond
	)
	model := &llmtest.Latency{Delay: latency, Model: totReplies(k)}
	built, err := nodes.NewToT(nodekind.Env{Model: llm.Model{LLM: model}}, nodekind.Spec{ID: "tot", Type: "tot",
		Settings: map[string]any{"beam": beam, "proposals": k, "depth": depth}})
	require.NoError(b, err)
	var wall time.Duration
	calls := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st := hookedState(state.Task{Question: "benchmark"})
		began := time.Now()
		if _, err := built.Node.Run(context.Background(), st); err != nil {
			b.Fatal(err)
		}
		wall += time.Since(began)
		calls += st.Usage.Snapshot().ModelCalls
	}
	b.StopTimer()
	perRun := float64(wall.Milliseconds()) / float64(b.N)
	ideal := float64(depth * 2 * latency.Milliseconds())
	b.ReportMetric(perRun, "wall-ms/op")
	b.ReportMetric(ideal, "ideal-ms")
	b.ReportMetric(perRun/ideal, "wall/ideal")
	b.ReportMetric(float64(calls)/float64(b.N), "calls/op")
	b.ReportMetric(float64(calls)/float64(b.N)*float64(latency.Milliseconds()), "serial-ms")
}
