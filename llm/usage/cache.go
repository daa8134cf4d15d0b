package usage

import (
	"fmt"
	"strings"

	lru "github.com/hashicorp/golang-lru/v2"
)

// cacheShards is how many independently locked LRUs a countCache spreads its
// entries over, so that concurrent counts rarely wait on the same lock.
const cacheShards = 32

// countCache memoises token counts keyed by a 64-bit hash of the text. Its
// entries are spread over cacheShards LRUs by the hash's low bits, each with
// its own lock: no lock is process-wide, and concurrent counts contend only
// when their texts fall in the same shard. Eviction is least recently used
// within a shard. It is safe for concurrent use.
type countCache struct {
	shards [cacheShards]*lru.Cache[uint64, int]
}

// newCountCache returns a cache of about size entries (at least one per
// shard); size must be positive.
func newCountCache(size int) (*countCache, error) {
	per := max((size+cacheShards-1)/cacheShards, 1)
	c := &countCache{}
	for i := range c.shards {
		s, err := lru.New[uint64, int](per)
		if err != nil {
			return nil, fmt.Errorf("usage: token cache: %w", err)
		}
		c.shards[i] = s
	}
	return c, nil
}

func (c *countCache) shard(key uint64) *lru.Cache[uint64, int] {
	return c.shards[key%cacheShards]
}

func (c *countCache) get(key uint64) (int, bool) { return c.shard(key).Get(key) }

func (c *countCache) add(key uint64, n int) { c.shard(key).Add(key, n) }

// blockBytes is the least length of a block (see blockEnd): long enough
// that hashing and looking up a block costs far less than tokenising it,
// short enough that a prompt that grows by a step re-tokenises little more
// than the step.
const blockBytes = 1024

// blockEnd returns the end of the first block of text: the first safe cut at
// or after min bytes, or len(text) when there is none. A cut is safe after a
// line feed that is followed by a rune that is neither white space nor '/'.
// No pre-tokenisation piece of either encoding spans such a cut, and every
// piece's end depends only on the text from its start onward, so the pieces
// of text are those of the blocks, and the count of text is the sum of the
// counts of its blocks:
//   - a word, digit or contraction piece holds no line feed;
//   - a white-space piece holding the line feed ends at the last line break
//     of its run, which is this one, since a non-space rune follows;
//   - a punctuation piece holding it ends its [\r\n]* (cl100k_base) or
//     [\r\n/]* (o200k_base) tail at the next rune, which is neither.
//
// The cut falls before an ASCII byte, so it splits no UTF-8 sequence and no
// invalid byte either. Cuts depend only on the text from the block's start
// up to one rune past the cut, so a text that grows by appending keeps the
// blocks of its prefix, all but the last of which are then cache hits.
func blockEnd(text string, min int) int {
	for p := min; p < len(text); {
		i := strings.IndexByte(text[p-1:], '\n')
		if i < 0 {
			break
		}
		p += i // the line feed is at p-1
		if p >= len(text) {
			break
		}
		if r, c, _ := runeAt(text, p); c&classSpace == 0 && r != '/' {
			return p
		}
		p++
	}
	return len(text)
}
