package temporal

import "github.com/planner-engine/planner/journal"

// JournalDigest returns the chain digest of a journal's entries, as an
// AdvanceInput's Digest holds it for its Base entries.
func JournalDigest(entries []journal.Entry) string {
	return extendChain([]string{""}, entries)[len(entries)]
}
