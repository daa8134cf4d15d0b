package code_test

import (
	"context"
	"errors"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/tools/code"
)

// memoryLimitEnv overrides, in MiB, the MaxMemory TestMemoryLimitHolds
// measures (default code.DefaultMaxMemory, 256 MiB).
const memoryLimitEnv = "PLANNER_CODE_MEMORY_LIMIT_MIB"

// procStatusKB returns a field of /proc/self/status in KiB, or -1 where
// there is none (not Linux).
func procStatusKB(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, field+":"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return n
				}
			}
		}
	}
	return -1
}

// peakUse is what a program used at most beyond the heap and the RSS it
// started from.
type peakUse struct {
	// heap is the largest heap in use (live objects and garbage not yet
	// swept) seen by sampling every 100µs: a lower bound of the peak.
	heap int64
	// rss is the growth of the resident set's high-water mark, or -1
	// where it cannot be reset and read (not Linux).
	rss int64
}

// measurePeak runs fn after a full collection and reports its peak use.
func measurePeak(fn func()) peakUse {
	runtime.GC()
	debug.FreeOSMemory()
	read := func(s []metrics.Sample) int64 {
		metrics.Read(s)
		return int64(s[0].Value.Uint64())
	}
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	base := read(sample)
	rssOK := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	rss0 := procStatusKB("VmRSS")
	var peak atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(100 * time.Microsecond)
		defer tick.Stop()
		for {
			if v := read(s); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	fn()
	close(stop)
	wg.Wait()
	p := peakUse{heap: peak.Load() - base, rss: -1}
	if hwm := procStatusKB("VmHWM"); rssOK && hwm >= 0 && rss0 >= 0 {
		p.rss = (hwm - rss0) << 10
	}
	return p
}

// TestMemoryLimitHolds runs programs that allocate toward the memory
// limit in different ways and checks how far past it they get before
// they are stopped: the heap in use and the resident set may grow by at
// most 25% more than the limit. It logs the peaks measured. The bound
// holds for the default limits: one step of a built-in may allocate
// about three times MaxValueSize (48 MiB), 19% of the default
// MaxMemory but more of a smaller one. The race detector's shadow
// memory counts in the RSS, so under -race only the heap is checked.
func TestMemoryLimitHolds(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates about 300 MiB per program; not with -short")
	}
	limit := int64(code.DefaultMaxMemory)
	if v := os.Getenv(memoryLimitEnv); v != "" {
		mib, err := strconv.Atoi(v)
		require.NoError(t, err, memoryLimitEnv)
		limit = int64(mib) << 20
	}
	tests := []struct {
		name, program string
		// within says that the 25% bound is asserted; growth one element
		// at a time into one hash table is only logged (see below).
		within bool
	}{
		{"1 MB strings kept", "keep = []\nfor i in range(5000):\n    keep.append('x' * 1000000 + str(i))", true},
		{"16 MB strings kept", "keep = []\nfor i in range(500):\n    keep.append('y' * 16000000 + str(i))", true},
		{"1 Mi-element lists kept", "keep = []\nfor i in range(500):\n    keep.append([i] * 1000000)", true},
		{"list copies kept", "base = list(range(1000000))\nkeep = []\nfor i in range(500):\n    keep.append(base[:])", true},
		{"split pieces kept", "s = 'ab ' * 1000000\nkeep = []\nfor i in range(500):\n    keep.append(s.split(' '))", true},
		// A dict grows its hash table by doubling it inside one step;
		// from about 850,000 entries that allocates 120 MB at once, which
		// no check between steps can prevent.
		{"dict grown an item at a time", "d = {}\nfor i in range(20000000):\n    d[i] = 'x' * 100 + str(i)", false},
	}
	tool := code.New(code.Config{MaxMemory: limit, MaxSteps: 1 << 40, Timeout: 2 * time.Minute})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			p := measurePeak(func() { _, err = tool.Call(context.Background(), tc.program) })
			require.True(t, errors.Is(err, code.ErrMemoryLimit), "the program must hit the memory limit: %v", err)
			heap, rss := float64(p.heap)/float64(limit), float64(p.rss)/float64(limit)
			t.Logf("limit %d MiB: peak heap +%d MiB (%.2fx the limit), peak RSS +%d MiB (%.2fx)", limit>>20, p.heap>>20, heap, p.rss>>20, rss)
			if !tc.within {
				return
			}
			assert.LessOrEqual(t, heap, 1.25, "peak heap growth over the limit")
			if p.rss >= 0 && !raceEnabled {
				assert.LessOrEqual(t, rss, 1.25, "peak RSS growth over the limit")
			}
		})
	}
}
