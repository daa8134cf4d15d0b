package usage

// This file holds the byte-pair merge. tiktoken-go v0.1.8 rescans and
// shifts the whole part list for every merge, which is quadratic in the
// piece length: a 32 KB run of one character took seconds. The merge below
// makes the same choices in the same order, but finds the next merge with a
// binary heap and removes parts from a linked list, so a piece of n bytes
// costs O(n log n).

// bpeScratch holds the buffers of bpeCount so that one Count call reuses
// them for all its pieces. It is never shared between goroutines. Offsets
// are int32: pieces are at most MaxMaxPieceBytes long.
type bpeScratch struct {
	// next[i] is where the part starting at byte i ends (the start of the
	// next part); it is -1 once the part has merged into its left
	// neighbour.
	next []int32
	// prev[i] is the start of the part before the part starting at i.
	prev []int32
	// pairRank[i] is the rank of the token formed by the part starting at i
	// and the part after it, or -1 when they do not form a token.
	pairRank []int32
	// heap holds merge candidates keyed rank<<32 | start, so that the least
	// key is tiktoken's choice: the lowest rank, and of equal ranks the
	// leftmost. A candidate whose rank is no longer pairRank[start] is stale
	// and skipped.
	heap []uint64
	// lookups counts rank-table lookups, the unit of work of the merge; tests
	// read it to check that a piece of n bytes costs O(n) lookups.
	lookups int
}

// rank returns the rank of the token piece, or -1 when piece is not a token,
// and counts the lookup.
func (sc *bpeScratch) rank(ranks map[string]int, piece string) int32 {
	sc.lookups++
	if r, ok := ranks[piece]; ok {
		return int32(r)
	}
	return -1
}

// bpeCount returns the number of tokens that byte-pair encoding with ranks
// turns piece into: starting from single bytes, it repeatedly merges the
// adjacent pair whose concatenation has the lowest rank (the leftmost of
// equal ranks) until no adjacent pair is a token. This is tiktoken's
// bytePairMerge; the parts left are the tokens. piece must be at most
// MaxMaxPieceBytes long.
func bpeCount(piece string, ranks map[string]int, sc *bpeScratch) int {
	n := int32(len(piece))
	if n < 2 {
		return int(n)
	}
	sc.next = grow(sc.next, n)
	sc.prev = grow(sc.prev, n)
	sc.pairRank = grow(sc.pairRank, n)
	sc.heap = sc.heap[:0]
	for i := int32(0); i < n; i++ {
		sc.next[i] = i + 1
		sc.prev[i] = i - 1
		sc.pairRank[i] = -1
		if i+2 <= n {
			if r := sc.rank(ranks, piece[i:i+2]); r >= 0 {
				sc.pairRank[i] = r
				sc.heap = append(sc.heap, candidateKey(r, i))
			}
		}
	}
	for i := len(sc.heap)/2 - 1; i >= 0; i-- {
		sc.down(i)
	}
	parts := int(n)
	for len(sc.heap) > 0 {
		rank, left := splitKey(sc.pop())
		if sc.pairRank[left] != rank {
			continue // stale: one of the two parts has merged since
		}
		// Merge the part after left into left.
		mid := sc.next[left]
		right := sc.next[mid]
		sc.next[left] = right
		sc.next[mid] = -1
		sc.pairRank[mid] = -1
		parts--
		sc.pairRank[left] = -1
		if right < n {
			sc.prev[right] = left
			if r := sc.rank(ranks, piece[left:sc.next[right]]); r >= 0 {
				sc.pairRank[left] = r
				sc.push(candidateKey(r, left))
			}
		}
		if left > 0 {
			start := sc.prev[left]
			sc.pairRank[start] = sc.rank(ranks, piece[start:right])
			if sc.pairRank[start] >= 0 {
				sc.push(candidateKey(sc.pairRank[start], start))
			}
		}
	}
	return parts
}

func candidateKey(rank, start int32) uint64 { return uint64(rank)<<32 | uint64(start) }

func splitKey(k uint64) (rank, start int32) { return int32(k >> 32), int32(uint32(k)) }

// grow returns buf resized to n elements, reusing its array when it fits.
func grow(buf []int32, n int32) []int32 {
	if int32(cap(buf)) < n {
		return make([]int32, n)
	}
	return buf[:n]
}

func (sc *bpeScratch) push(k uint64) {
	sc.heap = append(sc.heap, k)
	h := sc.heap
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if h[parent] <= h[i] {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

func (sc *bpeScratch) pop() uint64 {
	h := sc.heap
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	sc.heap = h[:last]
	sc.down(0)
	return top
}

func (sc *bpeScratch) down(i int) {
	h := sc.heap
	for {
		least := i
		if l := 2*i + 1; l < len(h) && h[l] < h[least] {
			least = l
		}
		if r := 2*i + 2; r < len(h) && h[r] < h[least] {
			least = r
		}
		if least == i {
			return
		}
		h[i], h[least] = h[least], h[i]
		i = least
	}
}
