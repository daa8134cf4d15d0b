package scripted

import (
	"context"
	"math"
	"path/filepath"

	"github.com/planner-engine/planner/journal"
	"github.com/tmc/langchaingo/llms"
)

// GenerationInfo keys of a scripted response. A journaled run keeps them
// with each model call's response, which is how a run resumed in another
// process (planner resume) finds where the journaled run was in its
// script: see Model and TaskModel.
const (
	// InfoReply is the 1-based number of the reply that served the call
	// (in the script, or in the task's replies); absent for a non-strict
	// script's fallback.
	InfoReply = "scripted_reply"
	// InfoScript is the base name of the script file that served the
	// call ("" for a script given to New); set by Model only.
	InfoScript = "scripted_script"
	// InfoTask is the id of the task whose replies served the call; set
	// by TaskModel only.
	InfoTask = "scripted_task"
)

// infoInt reads an integer GenerationInfo value, which a journal round
// trip may have turned into a float64.
func infoInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		if n >= math.MinInt && n <= math.MaxInt {
			return int(n), true
		}
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int(n), true
		}
	}
	return 0, false
}

// servedReply returns the 0-based index of the reply that served resp,
// among n replies, when resp is a scripted response whose string info key
// is want (InfoScript for a script, InfoTask for a task's replies).
func servedReply(resp *llms.ContentResponse, key, want string, n int) (int, bool) {
	if resp == nil || len(resp.Choices) == 0 || resp.Choices[0] == nil {
		return 0, false
	}
	info := resp.Choices[0].GenerationInfo
	if got, ok := info[key].(string); !ok || got != want {
		return 0, false
	}
	i, ok := infoInt(info[InfoReply])
	if !ok || i < 1 || i > n {
		return 0, false
	}
	return i - 1, true
}

// scriptName is what a script's responses carry as InfoScript: the base
// name of its file, so that a resumed run recognises its replies wherever
// it is run from (and after the script was edited), or "".
func scriptName(path string) string {
	if path == "" {
		return ""
	}
	return filepath.Base(path)
}

// resume brings pos, a place in the script, up to where the journaled
// run of ctx left it, once per journal session: the replies its journaled model
// calls were served (read from their responses' InfoReply) count as used.
// In strict order every reply before the furthest one used is used up
// too (including error replies, whose failed calls are not journaled);
// in non-strict mode each reply counts the journaled calls it served. A
// reply is never counted used more often than the journal says, so
// calling it again for a session whose calls this model served itself
// (a thread resumed in the same process) changes nothing. m.mu is held.
func (m *Model) resume(ctx context.Context, pos *position) {
	r := journal.From(ctx)
	if r == nil || r == pos.synced {
		return
	}
	pos.synced = r
	counts := make([]int, len(m.script.Replies))
	last := -1
	for _, resp := range r.ModelResponses() {
		i, ok := servedReply(resp, InfoScript, m.name, len(counts))
		if !ok {
			continue
		}
		counts[i]++
		last = max(last, i)
	}
	for i := 0; i <= last; i++ {
		times := m.script.Replies[i].Times
		want := min(counts[i], times)
		if m.strict() && i < last {
			want = times
		}
		if want > pos.used[i] {
			pos.resumed += want - pos.used[i]
			pos.used[i] = want
		}
	}
}

// resume brings c up to where the journaled run of ctx left task's
// replies, once per journal session: past the furthest reply its
// journaled calls were served (read from their responses' InfoTask and
// InfoReply), counting that reply's journaled uses. A cursor already at
// or past that point is left as it is.
func (c *cursor) resume(ctx context.Context, task string, replies []Reply) {
	r := journal.From(ctx)
	if r == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if r == c.synced {
		return
	}
	c.synced = r
	last, used, calls := -1, 0, 0
	for _, resp := range r.ModelResponses() {
		i, ok := servedReply(resp, InfoTask, task, len(replies))
		if !ok {
			continue
		}
		calls++
		switch {
		case i > last:
			last, used = i, 1
		case i == last:
			used++
		}
	}
	if last < 0 {
		return
	}
	used = min(used, max(replies[last].Times, 1))
	if last > c.next || (last == c.next && used > c.used) {
		c.next, c.used = last, used
	}
	c.calls = max(c.calls, calls)
}
