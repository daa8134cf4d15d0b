package executor_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/llm/usage"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// prefixSteps is the number of tool steps of a prefix-stability run.
const prefixSteps = 20

// factTool returns an observation of about n characters of sentences that
// differ per input.
func factTool(n int) *fakeTool {
	return &fakeTool{name: "facts", fn: func(_ context.Context, in string) (string, error) {
		var b strings.Builder
		for i := 1; b.Len() < n; i++ {
			fmt.Fprintf(&b, "Fact %d about %s: it was recorded in survey %d and checked against source %d. ", i, in, i*7, i*13)
		}
		return b.String()[:n], nil
	}}
}

// prefixRun runs prefixSteps tool steps, each with a 1,500-character
// observation, then a final answer, and returns each call's prompt text
// and the run's trace.
func prefixRun(t testing.TB, cfg executor.ReActConfig) ([]string, *harness) {
	t.Helper()
	replies := make([]string, 0, prefixSteps+1)
	for i := 1; i <= prefixSteps; i++ {
		replies = append(replies, fmt.Sprintf("Thought: I still need the facts about item %d.\nAction: facts\nAction Input: item %d", i, i))
	}
	replies = append(replies, "Thought: I have every fact.\nFinal Answer: done")
	cfg.MaxIterations = prefixSteps + 1
	cfg.ObservationLimit = executor.Unlimited
	script := text(replies...)
	if cfg.Compaction == executor.CompactionSummarize {
		// Summary calls come when a block compacts: the script serves
		// them by role, the steps in order.
		script.Strict = boolp(false)
		script.Replies = append([]scripted.Reply{{Role: executor.RoleSummarize, Times: prefixSteps,
			Text: "Facts 1-9 of each item so far were recorded in surveys 7-63 and checked against sources 13-117; nothing contradicts them, and no item is missing yet."}}, script.Replies...)
	}
	h := runScript(t, cfg, script, "collect the facts", factTool(1500))
	require.NoError(t, h.err)
	require.True(t, h.out.Complete)
	var ps []string
	for _, r := range requests(h.model) {
		if r.caller.Role != executor.RoleSummarize {
			ps = append(ps, r.text())
		}
	}
	require.Len(t, ps, prefixSteps+1)
	return ps, h
}

// commonPrefix is the length in bytes of the longest common prefix of a
// and b.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// prefixStats are the prefix-stability figures of a run's prompts, from
// the second call on: the mean over calls of the share of each prompt that
// is a prefix of the previous one, the same share over the run's total,
// and the total prompt size (every call).
type prefixStats struct {
	mean, pooled float64
	total        int
}

func measure(ps []string, size func(string) int) prefixStats {
	var st prefixStats
	var shared, all int
	for i, p := range ps {
		n := size(p)
		st.total += n
		if i == 0 {
			continue
		}
		k := size(p[:commonPrefix(ps[i-1], p)])
		st.mean += float64(k) / float64(n)
		shared += k
		all += n
	}
	st.mean /= float64(len(ps) - 1)
	st.pooled = float64(shared) / float64(all)
	return st
}

func runes(s string) int { return len([]rune(s)) }

// prefixConfigs are the compactions compared: today's window, the block
// compaction (the default) and no compaction.
func prefixConfigs() []struct {
	name string
	cfg  executor.ReActConfig
} {
	return []struct {
		name string
		cfg  executor.ReActConfig
	}{
		{"window", executor.ReActConfig{Compaction: executor.CompactionWindow}},
		{"block", executor.ReActConfig{}},
		{"keep-all", executor.ReActConfig{KeepSteps: intp(0)}},
		{"summarize", executor.ReActConfig{Compaction: executor.CompactionSummarize}},
	}
}

// TestBlockCompactionKeepsPromptAppendOnly checks that with the default
// block compaction each call's prompt extends the previous one unchanged
// unless a block of steps was compacted before it, that compaction comes
// in blocks of several steps, and that the task, the tool list and the
// last KeepSteps observations are still shown.
func TestBlockCompactionKeepsPromptAppendOnly(t *testing.T) {
	ps, h := prefixRun(t, executor.ReActConfig{})
	blocks := 0
	for i := 1; i < len(ps); i++ {
		before, now := strings.Count(ps[i-1], "elided:"), strings.Count(ps[i], "elided:")
		if now == before {
			assert.True(t, strings.HasPrefix(ps[i], ps[i-1]), "call %d rewrote the prompt without compacting", i+1)
			continue
		}
		blocks++
		assert.GreaterOrEqual(t, now-before, 2, "call %d compacted a single step, as a window would", i+1)
		assert.False(t, strings.HasPrefix(ps[i], ps[i-1]))
	}
	assert.Equal(t, 5, blocks, "steps 1-3, 4-6, 7-9, 10-12 and 13-15 each compacted at once")
	last := ps[len(ps)-1]
	assert.Contains(t, last, "Task: collect the facts")
	assert.Contains(t, last, "test tool facts")
	for _, n := range []int{18, 19, 20} {
		assert.Contains(t, last, fmt.Sprintf("Fact 9 about item %d:", n))
	}
	var elided []int
	for _, e := range h.ofKind(trace.KindGuard) {
		if e.Data["guard"] == "compaction" {
			elided = append(elided, e.Data["elided_step"].(int))
		}
	}
	for i, n := range elided {
		assert.Equal(t, i+1, n, "steps are compacted once each, in order")
	}
	assert.Len(t, elided, 15)

	window, _ := prefixRun(t, executor.ReActConfig{Compaction: executor.CompactionWindow})
	breaks := 0
	for i := 1; i < len(window); i++ {
		if !strings.HasPrefix(window[i], window[i-1]) {
			breaks++
		}
	}
	assert.Equal(t, prefixSteps-3, breaks, "the window rewrites the prompt on every call from step 5")
}

// BenchmarkPromptPrefixShare reports, for a 20-step run with
// 1,500-character observations, the share of each call's prompt that is an
// exact prefix of the previous call's (the part a provider prompt cache
// can hit), in characters and in estimated tokens, averaged over calls
// (pfx%) and pooled over the run (pfx-pooled%), and the run's total prompt
// size, for the window, block (default) and no compaction.
func BenchmarkPromptPrefixShare(b *testing.B) {
	est, err := usage.NewEstimator()
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range prefixConfigs() {
		b.Run(c.name, func(b *testing.B) {
			var ps []string
			var h *harness
			for b.Loop() {
				ps, h = prefixRun(b, c.cfg)
			}
			summaries := 0
			for _, r := range requests(h.model) {
				if r.caller.Role == executor.RoleSummarize {
					summaries += est.Count(r.text())
				}
			}
			b.ReportMetric(float64(summaries), "summary-tok/run")
			chars, toks := measure(ps, runes), measure(ps, est.Count)
			b.ReportMetric(100*chars.mean, "pfx%")
			b.ReportMetric(100*chars.pooled, "pfx-pooled%")
			b.ReportMetric(float64(chars.total), "prompt-chars/run")
			b.ReportMetric(100*toks.mean, "pfx-tok%")
			b.ReportMetric(100*toks.pooled, "pfx-tok-pooled%")
			b.ReportMetric(float64(toks.total), "prompt-tok/run")
		})
	}
}
