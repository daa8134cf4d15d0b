package search

import (
	"context"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/clipperhouse/uax29/v2/sentences"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/corpus"
)

// referenceSnippet is Hit.Snippet as it was before sentence starts were
// computed at index time, ASCII bodies got a fast path and windows stopped
// scoring with a map: the optimised Snippet must give the same passages.
func referenceSnippet(h Hit, maxRunes int) string {
	text := h.flat
	if maxRunes < 1 {
		return ""
	}
	if utf8.RuneCountInString(text) <= maxRunes {
		return text
	}
	score := func(w *window) {
		seen := map[string]bool{}
		w.fresh, w.distinct, w.total = 0, 0, 0
		last := w.start
		for _, m := range h.matches {
			if m.start < w.start || m.end > w.end {
				continue
			}
			w.total++
			last = m.end
			if !seen[m.term] {
				seen[m.term] = true
				w.distinct++
				if !m.inTitle {
					w.fresh++
				}
			}
		}
		w.context = w.end == len(text) || w.end-last >= tailContext
	}
	best := window{start: 0, end: advance(text, 0, maxRunes), sentence: true}
	score(&best)
	try := func(start int, sentence bool) {
		w := window{start: start, end: advance(text, start, maxRunes), sentence: sentence}
		score(&w)
		if w.better(best) {
			best = w
		}
	}
	seg := sentences.FromString(text)
	for seg.Next() {
		try(seg.Start(), true)
	}
	lead := maxRunes / 4
	for _, m := range h.matches {
		try(referenceWordStartBefore(text, m.start, lead), false)
	}
	return cut(text, best.start, best.end)
}

func referenceWordStartBefore(s string, at, lead int) int {
	i := at
	for ; lead > 0 && i > 0; lead-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	if i == 0 {
		return 0
	}
	if sp := strings.IndexByte(s[i:at], ' '); sp >= 0 {
		return i + sp + 1
	}
	return at
}

// TestSnippetMatchesReference compares Snippet with referenceSnippet on
// the demo corpus and on multi-byte text, for queries made of every
// document's title words and body words, at several snippet lengths.
func TestSnippetMatchesReference(t *testing.T) {
	ctx := context.Background()
	docs, err := FromFS(corpus.Demo()).Documents(ctx)
	require.NoError(t, err)
	docs = append(docs,
		Document{ID: "u", Title: "Ünïcödé", Text: strings.Repeat("Ünïcödé wörds ärë fïnë. ", 30) + "Ωmega appears at the end. Then — more wörds."},
		Document{ID: "m", Title: "Mixed", Text: "Plain ASCII start. " + strings.Repeat("Titan orbits Saturn; ", 20) + "Café au lait near Titan. End."})
	idx, err := NewIndex(ctx, FromDocuments(docs...))
	require.NoError(t, err)
	t.Cleanup(func() { _ = idx.Close() })
	var queries []string
	for _, d := range docs {
		queries = append(queries, d.Title)
		words := strings.Fields(d.Text)
		for i := 0; i < len(words); i += 7 {
			queries = append(queries, strings.Join(words[i:min(i+3, len(words))], " "))
		}
	}
	compared := 0
	for _, q := range queries {
		hits, err := idx.Search(ctx, q, 5)
		require.NoError(t, err)
		for _, h := range hits {
			for _, n := range []int{0, 1, 7, 40, 120, 300, 1000} {
				require.Equal(t, referenceSnippet(h, n), h.Snippet(n), "query %q, document %q, %d runes", q, h.Doc.ID, n)
				compared++
			}
		}
	}
	require.Greater(t, compared, 1000)
}

// TestRuneWindowEqualsAdvance checks runeWindow.from against advance for
// starts in increasing, repeated and decreasing order, in ASCII and
// multi-byte text.
func TestRuneWindowEqualsAdvance(t *testing.T) {
	for _, text := range []string{"", "plain ascii text, nothing else", "Ünïcödé — wörds ärë fïnë; Ωmega at the end. 日本語のテキスト", strings.Repeat("aé日", 40)} {
		var bounds []int // rune boundaries
		for i := range text {
			bounds = append(bounds, i)
		}
		bounds = append(bounds, len(text))
		for _, n := range []int{1, 3, 10, 50} {
			orders := [][]int{bounds, {0, 0, len(text)}}
			rev := slices.Clone(bounds)
			slices.Reverse(rev)
			orders = append(orders, rev)
			var zigzag []int
			for i := range bounds {
				zigzag = append(zigzag, bounds[i], bounds[i/2])
			}
			orders = append(orders, zigzag)
			for _, starts := range orders {
				w := runeWindow{text: text, n: n, ascii: isASCII(text)}
				for _, s := range starts {
					require.Equal(t, advance(text, s, n), w.from(s), "%q n=%d start %d", text, n, s)
				}
			}
		}
	}
}
