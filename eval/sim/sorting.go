package sim

import (
	"slices"
	"strings"

	"github.com/planner-engine/planner/verify"
	"github.com/tmc/langchaingo/llms"
)

// userLists returns the JSON lists of integers (verify.IntLists) of the
// last user message that has any: the node's own request, not a schema
// retry's feedback after it. Lists in other messages (a system prompt's
// example) are not the input; only a prompt without user messages is
// read whole.
func userLists(c call) [][]int {
	users := false
	for i := len(c.msgs) - 1; i >= 0; i-- {
		msg := c.msgs[i]
		if msg.Role != llms.ChatMessageTypeHuman {
			continue
		}
		users = true
		var b strings.Builder
		for _, p := range msg.Parts {
			if t, ok := p.(llms.TextContent); ok {
				b.WriteString(t.Text)
				b.WriteByte('\n')
			}
		}
		if lists := verify.IntLists(b.String()); len(lists) > 0 {
			return lists
		}
	}
	if users {
		return nil
	}
	return verify.IntLists(c.prompt)
}

// sortedReply is the list the sort or merge role answers, before faults:
// the last list of the user message sorted (sort), or the last two merged
// and sorted (merge; one list alone is sorted). Without a list it is
// empty.
func sortedReply(c call) []int {
	lists := userLists(c)
	if len(lists) == 0 {
		return []int{}
	}
	n := 1
	if roleOf(c) == roleMerge {
		n = min(2, len(lists))
	}
	out := slices.Concat(lists[len(lists)-n:]...)
	slices.Sort(out)
	return out
}

// sortList plays the sort and merge roles: the sorted list as JSON
// ("[0, 1, 1, 3]") and nothing else; empty for an empty reply fault, and
// with one error for a sort error fault (sortError).
func (m *Model) sortList(c call, fault string) *llms.ContentChoice {
	if fault == FaultEmptyReply {
		return &llms.ContentChoice{Content: "", StopReason: "stop"}
	}
	out := sortedReply(c)
	if fault == FaultSortError {
		out = sortError(out, c.bits)
	}
	return &llms.ContentChoice{Content: verify.FormatIntList(out), StopReason: "stop"}
}

// sortError returns sorted, which must not be empty, with one error,
// chosen by bits: an element dropped, an element duplicated, or two
// adjacent unequal elements swapped (duplicated instead where all
// elements are equal). Each leaves the list wrong. sorted is not changed.
func sortError(sorted []int, bits uint64) []int {
	kind, pos := bits%3, bits/3
	switch kind {
	case 0: // drop
		i := int(pos % uint64(len(sorted)))
		return slices.Delete(slices.Clone(sorted), i, i+1)
	case 2: // swap adjacent unequal elements
		var pairs []int
		for i := 1; i < len(sorted); i++ {
			if sorted[i-1] != sorted[i] {
				pairs = append(pairs, i-1)
			}
		}
		if len(pairs) > 0 {
			i := pairs[pos%uint64(len(pairs))]
			out := slices.Clone(sorted)
			out[i], out[i+1] = out[i+1], out[i]
			return out
		}
	}
	// duplicate
	i := int(pos % uint64(len(sorted)))
	return slices.Insert(slices.Clone(sorted), i, sorted[i])
}
