package compare_test

import (
	"context"
	"sync"
	"testing"

	"github.com/planner-engine/planner/eval/compare"
	"github.com/stretchr/testify/require"
)

// TestStoresOpenedAtOnceOnANewFolderAllOpen: a comparison and progress
// readers (planner serve) may open a new results.db at the same moment;
// SQLite then answers some schema statements "database is locked" at
// once, which OpenStore must ride out.
func TestStoresOpenedAtOnceOnANewFolderAllOpen(t *testing.T) {
	for round := 0; round < 25; round++ {
		dir := t.TempDir()
		var wg sync.WaitGroup
		errs := make([]error, 12)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, err := compare.OpenStore(context.Background(), dir)
				if err == nil {
					_, err = st.All(context.Background(), 1)
					err = errorsJoin(err, st.Close())
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		for i, err := range errs {
			require.NoError(t, err, "round %d, opener %d", round, i)
		}
	}
}

func errorsJoin(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
