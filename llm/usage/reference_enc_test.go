package usage

import (
	"strings"
	"sync"
	"testing"

	"github.com/pkoukk/tiktoken-go"
)

// references holds the reference encoder built for each test estimator.
var references sync.Map // *Estimator -> *tiktoken.Tiktoken

// reference returns tiktoken-go's encoder for est's ranks and patterns, the
// reference Count is compared with, building it on first use (building it
// costs as much as loading the ranks, so NewEstimator does not).
func reference(t testing.TB, est *Estimator) *tiktoken.Tiktoken {
	t.Helper()
	if enc, ok := references.Load(est); ok {
		return enc.(*tiktoken.Tiktoken)
	}
	pattern := strings.Join(encodingPatterns[est.encoding], "|")
	// Special tokens are left out: Count encodes them as ordinary text.
	bpe, err := tiktoken.NewCoreBPE(est.ranks, map[string]int{}, pattern)
	if err != nil {
		t.Fatalf("building the reference tokenizer: %v", err)
	}
	enc := tiktoken.NewTiktoken(bpe, &tiktoken.Encoding{Name: est.encoding, PatStr: pattern,
		MergeableRanks: est.ranks, SpecialTokens: map[string]int{}}, map[string]any{})
	actual, _ := references.LoadOrStore(est, enc)
	return actual.(*tiktoken.Tiktoken)
}
