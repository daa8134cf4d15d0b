package docstore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/corpus"
	"github.com/planner-engine/planner/tools/docstore"
	"github.com/planner-engine/planner/tools/search"
)

func TestReadJSONLReadsPagesAndSimilarLists(t *testing.T) {
	const data = `{"title": " Titan ", "text": "Titan is a moon.\nIt is large.", "url": "ignored"}

{"title": "Moon of Saturn", "similar": ["Titan", "Rhea"]}
{"title": "Nothing", "similar": []}
`
	c, err := docstore.ReadJSONL(context.Background(), strings.NewReader(data), "pages.jsonl")
	require.NoError(t, err)
	require.Len(t, c.Pages, 1)
	assert.Equal(t, search.Document{ID: "pages.jsonl:1", Title: "Titan", Text: "Titan is a moon.\nIt is large.", Source: "pages.jsonl:1"}, c.Pages[0])
	assert.Equal(t, map[string][]string{"Moon of Saturn": {"Titan", "Rhea"}, "Nothing": {}}, c.Similar)
	docs, err := c.Documents(context.Background())
	require.NoError(t, err)
	assert.Equal(t, c.Pages, docs)
}

func TestReadJSONLNamesTheBadLine(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"syntax", "{\"title\": \"A\", \"text\": \"a\"}\n{\"title\": \"B\", \"text\": \n", "bad.jsonl:2: unexpected end of JSON input"},
		{"not an object", "\n\n[1, 2]\n", "bad.jsonl:3: json: cannot unmarshal array"},
		{"no title", `{"text": "a"}`, `bad.jsonl:1: record has no "title"`},
		{"blank title", `{"title": "  ", "text": "a"}`, `bad.jsonl:1: record has no "title"`},
		{"neither", `{"title": "A", "similiar": ["B"]}`, `bad.jsonl:1: record "A" needs a "text" (a page) or a "similar" list (a failed search)`},
		{"both", `{"title": "A", "text": "a", "similar": []}`, `bad.jsonl:1: record "A" has both "text" and "similar"`},
		{"empty text", `{"title": "A", "text": " "}`, `bad.jsonl:1: page "A" has an empty "text"`},
		{"text not a string", `{"title": "A", "text": 3}`, `bad.jsonl:1: json: cannot unmarshal number`},
		{"similar not strings", `{"title": "A", "similar": [1]}`, `bad.jsonl:1: json: cannot unmarshal number`},
		{"two similar lists", "{\"title\": \"A\", \"similar\": []}\n{\"title\": \"B\", \"similar\": []}\n{\"title\": \"A\", \"similar\": [\"C\"]}", `bad.jsonl:3: a second similar list for "A" (the first is on line 1)`},
		{"too long", "{\"title\": \"A\", \"text\": \"a\"}\n" + strings.Repeat("x", 17<<20), "bad.jsonl:2: bufio.Scanner: token too long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := docstore.ReadJSONL(context.Background(), strings.NewReader(tt.data), "bad.jsonl")
			require.ErrorIs(t, err, docstore.ErrBadSource)
			require.ErrorIs(t, err, search.ErrBadSource)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestReadJSONLStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := docstore.ReadJSONL(ctx, strings.NewReader(`{"title": "A", "text": "a"}`), "x.jsonl")
	assert.ErrorIs(t, err, context.Canceled)
}

func TestReadFSReflowsMarkdownPages(t *testing.T) {
	fsys := fstest.MapFS{
		"b/kepler.md":        {Data: []byte("Intro line.\r\n# Johannes Kepler\r\n\r\nKepler was a German\r\nastronomer. He found\r\nthree laws.\r\n\r\n## Laws\r\n\r\nThe laws are:\r\n- ellipses\r\n- equal areas\r\n  swept in equal times\r\n1. harmonies\r\n")},
		"a/halley_comet.txt": {Data: []byte("Halley's Comet returns\nevery 76 years.")},
		"a/blank.md":         {Data: []byte(" \n\t\n")},
		".hidden/x.md":       {Data: []byte("# Hidden\n\nNot read.")},
		"a/.x.md":            {Data: []byte("# Hidden too\n\nNot read.")},
		"c/pages.jsonl":      {Data: []byte("{\"title\": \"Titan\", \"text\": \"Titan is a moon.\"}\n{\"title\": \"Moon\", \"similar\": [\"Titan\"]}\n")},
		"notes.pdf":          {Data: []byte("ignored")},
	}
	c, err := docstore.ReadFS(context.Background(), fsys)
	require.NoError(t, err)
	require.Len(t, c.Pages, 3)
	assert.Equal(t, search.Document{ID: "a/halley_comet.txt", Title: "halley comet", Text: "Halley's Comet returns every 76 years.", Source: "a/halley_comet.txt"}, c.Pages[0])
	assert.Equal(t, "Johannes Kepler", c.Pages[1].Title)
	assert.Equal(t, "Intro line.\n\nKepler was a German astronomer. He found three laws.\n\nThe laws are:\n- ellipses\n- equal areas swept in equal times\n1. harmonies", c.Pages[1].Text)
	assert.Equal(t, search.Document{ID: "c/pages.jsonl:1", Title: "Titan", Text: "Titan is a moon.", Source: "c/pages.jsonl:1"}, c.Pages[2])
	assert.Equal(t, map[string][]string{"Moon": {"Titan"}}, c.Similar)

	store, err := docstore.New(context.Background(), c, docstore.WithFormat(docstore.FormatWikiEnv))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, store.Close()) })
	runSteps(t, store, []step{
		{"search[Johannes Kepler]", "Intro line.. Kepler was a German astronomer. He found three laws.. The laws are:. - ellipses."},
		{"search[Moon]", "Could not find Moon. Similar: ['Titan']."},
	})
}

func TestReadFSRejectsBadJSONLAndDuplicateLists(t *testing.T) {
	_, err := docstore.ReadFS(context.Background(), fstest.MapFS{"d/x.jsonl": {Data: []byte("{}\n")}})
	require.ErrorIs(t, err, docstore.ErrBadSource)
	assert.Contains(t, err.Error(), "d/x.jsonl:1")
	_, err = docstore.ReadFS(context.Background(), fstest.MapFS{
		"a.jsonl": {Data: []byte(`{"title": "A", "similar": []}`)},
		"b.jsonl": {Data: []byte(`{"title": "A", "similar": ["B"]}`)},
	})
	require.ErrorIs(t, err, docstore.ErrBadSource)
	assert.Contains(t, err.Error(), `b.jsonl: bad corpus source: two similar lists for "A"`)
}

func TestLoadReadsFoldersFilesAndJSONL(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "docs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "docs", "titan.md"), []byte("# Titan\n\nTitan is a moon."), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pages.jsonl"), []byte(`{"title": "Io", "text": "Io is a moon."}`+"\n"+`{"title": "Io", "text": 1}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.pdf"), []byte("x"), 0o644))

	c, err := docstore.Load(ctx, filepath.Join(dir, "docs"))
	require.NoError(t, err)
	assert.Equal(t, []string{"Titan"}, titles(c))
	c, err = docstore.Load(ctx, filepath.Join(dir, "docs", "titan.md"))
	require.NoError(t, err)
	assert.Equal(t, []string{"Titan"}, titles(c))

	_, err = docstore.Load(ctx, filepath.Join(dir, "pages.jsonl"))
	require.ErrorIs(t, err, docstore.ErrBadSource)
	assert.Contains(t, err.Error(), "pages.jsonl:2")
	_, err = docstore.Load(ctx, filepath.Join(dir, "notes.pdf"))
	assert.ErrorIs(t, err, docstore.ErrBadSource)
	_, err = docstore.Load(ctx, filepath.Join(dir, "missing"))
	assert.ErrorIs(t, err, docstore.ErrBadSource)
}

func TestNewFailsOnAnEmptyCorpus(t *testing.T) {
	c, err := docstore.ReadJSONL(context.Background(), strings.NewReader(`{"title": "A", "similar": ["B"]}`), "x.jsonl")
	require.NoError(t, err)
	_, err = docstore.New(context.Background(), c)
	assert.ErrorIs(t, err, docstore.ErrEmptyCorpus)
}

func TestDemoCorpusServesEveryFormat(t *testing.T) {
	c, err := docstore.ReadFS(context.Background(), corpus.Demo())
	require.NoError(t, err)
	require.Len(t, c.Pages, 45)
	for _, f := range docstore.Formats() {
		store, err := docstore.New(context.Background(), c, docstore.WithFormat(f))
		require.NoError(t, err)
		out, err := store.NewSession().Search(context.Background(), "Titan")
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(out, "Titan is the largest moon of Saturn"), "%s: %s", f, out)
		require.NoError(t, store.Close())
	}
}

// titles returns the titles of c's pages.
func titles(c *docstore.Corpus) []string {
	var out []string
	for _, p := range c.Pages {
		out = append(out, p.Title)
	}
	return out
}
