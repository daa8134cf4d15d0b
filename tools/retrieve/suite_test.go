package retrieve_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/retrieve"
	"github.com/planner-engine/planner/tools/retrieve/retrievetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recallFloor is the share of gold tool calls whose tool BM25 must show
// at k = 12 (the default max_tools), a little under the 77.4% measured,
// so that a regression fails. The goal is 98%: BM25 meets it on
// no first call whose task shares no word with its tool's text ("Should
// I take an umbrella in Dublin today?" and the weather tool); see
// docs/tool-retrieval.md and the executor's suite test for the figures
// with first_call "all".
const recallFloor = 0.76

// recall is what one pass over the suite measured at one k.
type recall struct {
	shown, calls int
	// tools sums the tools shown per call.
	tools int
	// laterShown and later count the calls after a task's first (their
	// query has a thought).
	laterShown, later int
	// fallbacks counts the calls whose query matched no tool, which show
	// every tool.
	fallbacks int
	// missed are the steps whose gold tool was not shown.
	missed []string
}

func (r recall) share() float64 { return float64(r.shown) / float64(r.calls) }

// measureRecall replays the suite's tasks as a loop would query: the
// model call that makes step i sees the task and the thought of step i-1
// (none for the first step), and the tools of steps before i are always
// shown.
func measureRecall(ctx context.Context, t testing.TB, r *retrieve.Retriever, s retrievetest.Suite, k int) recall {
	t.Helper()
	var rec recall
	for _, task := range s.Tasks {
		var used []string
		thought := ""
		for i, st := range task.Steps {
			shown, err := r.Select(ctx, retrievetest.Query(task.Task, thought), k, used)
			if errors.Is(err, retrieve.ErrNoMatch) {
				// What the loop does: nothing says which tools are
				// relevant, so every tool is shown.
				shown, err = r.Select(ctx, "", r.Len(), nil)
				rec.fallbacks++
			}
			require.NoError(t, err, task.Task)
			rec.calls++
			rec.tools += len(shown)
			hit := slices.ContainsFunc(shown, func(n string) bool { return tools.NormalizeName(n) == tools.NormalizeName(st.Tool) })
			if i > 0 {
				rec.later++
				if hit {
					rec.laterShown++
				}
			}
			if hit {
				rec.shown++
			} else {
				rec.missed = append(rec.missed, fmt.Sprintf("%q step %d: %s", task.Task, i+1, st.Tool))
			}
			used = append(used, st.Tool)
			thought = st.Thought
		}
	}
	return rec
}

func suiteRetriever(t testing.TB, opts ...retrieve.Option) (*retrieve.Retriever, *tools.Registry, retrievetest.Suite) {
	t.Helper()
	s, err := retrievetest.Load()
	require.NoError(t, err)
	reg, err := s.Registry(context.Background(), t.TempDir())
	require.NoError(t, err)
	r, err := retrieve.New(context.Background(), reg, append([]retrieve.Option{bm25()}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, r.Close()) })
	return r, reg, s
}

// TestSuiteRecall measures on the suite the share of gold tool calls whose
// tool a BM25 selection of k tools (plus the tools already used) shows,
// for k = 4, 8, 12 and 16, and requires recallFloor at k = 12.
func TestSuiteRecall(t *testing.T) {
	r, reg, s := suiteRetriever(t)
	ctx := context.Background()
	require.GreaterOrEqual(t, reg.Len(), 60, "the suite has about 60 tools or more")
	require.GreaterOrEqual(t, len(s.Tasks), 100)
	t.Logf("suite: %d tools, %d tasks", reg.Len(), len(s.Tasks))
	var prev float64
	for _, k := range []int{4, 8, 12, 16} {
		rec := measureRecall(ctx, t, r, s, k)
		t.Logf("bm25 k=%2d: gold tool shown in %d of %d calls (%.1f%%), %.1f tools shown per call, %d queries matched no tool; first calls (task only) %d of %d, later calls (task + thought) %d of %d",
			k, rec.shown, rec.calls, 100*rec.share(), float64(rec.tools)/float64(rec.calls), rec.fallbacks,
			rec.shown-rec.laterShown, rec.calls-rec.later, rec.laterShown, rec.later)
		assert.GreaterOrEqual(t, rec.share(), prev, "a larger k shows no fewer gold tools")
		prev = rec.share()
		if k == 12 {
			assert.GreaterOrEqual(t, rec.share(), recallFloor, "missed: %v", rec.missed)
			for _, m := range rec.missed {
				t.Logf("  missed at k=12: %s", m)
			}
		}
	}
}

// BenchmarkSuiteSelect measures one selection over the suite's tools and
// reports the gold-tool share at k = 12.
func BenchmarkSuiteSelect(b *testing.B) {
	r, _, s := suiteRetriever(b)
	ctx := context.Background()
	rec := measureRecall(ctx, b, r, s, 12)
	q := retrievetest.Query(s.Tasks[0].Task, s.Tasks[0].Steps[0].Thought)
	for i := 0; b.Loop(); i++ {
		// A new query each time: the index caches repeated searches.
		if _, err := r.Select(ctx, fmt.Sprintf("%s %d", q, i), 12, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(100*rec.share(), "%gold_shown@12")
}
