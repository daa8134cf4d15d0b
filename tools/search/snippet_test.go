package search_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/tools/search"
)

// snippetOf indexes one document and returns the snippet of its hit for q.
func snippetOf(t *testing.T, text, q string, maxRunes int) string {
	t.Helper()
	idx, err := search.NewIndex(context.Background(), search.FromDocuments(search.Document{Title: "Doc", Text: text}))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, idx.Close()) })
	hits, err := idx.Search(context.Background(), q, 1)
	require.NoError(t, err)
	require.Len(t, hits, 1)
	return hits[0].Snippet(maxRunes)
}

func TestSnippetShowsThePassageAboutTheQuery(t *testing.T) {
	filler := strings.Repeat("Nothing of note happens in this sentence. ", 12)
	text := filler + "The probe landed on Titan in 2005 after a long cruise. " + filler
	tests := []struct {
		name     string
		text     string
		query    string
		max      int
		contains []string
		prefix   string
		suffix   string
	}{
		{"whole text when it fits", "Short body. Two sentences.", "body", 300, []string{"Short body. Two sentences."}, "Short", "sentences."},
		{"window around the match", text, "probe Titan", 120, []string{"The probe landed on Titan in 2005"}, search.Ellipsis + " ", " " + search.Ellipsis},
		{"start of text when only the title matches", text, "doc", 60, []string{"Nothing of note"}, "Nothing", " " + search.Ellipsis},
		{"keeps context after the match", "Alpha " + strings.Repeat("word ", 80) + "Titan was discovered on 25 March 1655 by Huygens.", "Titan discovered", 100, []string{"25 March 1655"}, search.Ellipsis, "Huygens."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := snippetOf(t, tt.text, tt.query, tt.max)
			for _, c := range tt.contains {
				assert.Contains(t, got, c)
			}
			assert.True(t, strings.HasPrefix(got, tt.prefix), "prefix of %q", got)
			assert.True(t, strings.HasSuffix(got, tt.suffix), "suffix of %q", got)
			body := strings.TrimSpace(strings.Trim(got, search.Ellipsis))
			assert.LessOrEqual(t, utf8.RuneCountInString(body), tt.max)
		})
	}
}

func TestSnippetCutsAtWordBoundaries(t *testing.T) {
	text := strings.Repeat("abcdefghij ", 50) + "target word here"
	got := snippetOf(t, text, "target", 40)
	for _, w := range strings.Fields(strings.Trim(got, search.Ellipsis)) {
		assert.Contains(t, []string{"abcdefghij", "target", "word", "here"}, w)
	}
}

func TestSnippetOfZeroLengthIsEmpty(t *testing.T) {
	assert.Empty(t, snippetOf(t, "Some text here.", "text", 0))
}

func TestSnippetHandlesMultiByteText(t *testing.T) {
	text := strings.Repeat("Ünïcödé wörds ärë fïnë. ", 30) + "Ωmega appears at the end."
	got := snippetOf(t, text, "appears", 50)
	assert.True(t, utf8.ValidString(got))
	assert.Contains(t, got, "appears")
}
