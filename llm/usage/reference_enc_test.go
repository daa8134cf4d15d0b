package usage

import (
	"strings"
	"sync"
	"testing"

	"github.com/pkoukk/tiktoken-go"
)

// referenceMu guards the lazily built reference encoders of test estimators.
var referenceMu sync.Mutex

// reference returns tiktoken-go's encoder for est's ranks and patterns, the
// reference Count is compared with, building it on first use.
func reference(t testing.TB, est *Estimator) *tiktoken.Tiktoken {
	t.Helper()
	referenceMu.Lock()
	defer referenceMu.Unlock()
	if est.enc != nil {
		return est.enc
	}
	pattern := strings.Join(encodingPatterns[est.encoding], "|")
	// Special tokens are left out: Count encodes them as ordinary text.
	bpe, err := tiktoken.NewCoreBPE(est.ranks, map[string]int{}, pattern)
	if err != nil {
		t.Fatalf("building the reference tokenizer: %v", err)
	}
	est.enc = tiktoken.NewTiktoken(bpe, &tiktoken.Encoding{Name: est.encoding, PatStr: pattern,
		MergeableRanks: est.ranks, SpecialTokens: map[string]int{}}, map[string]any{})
	return est.enc
}
