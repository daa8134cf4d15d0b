package search_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/tools/search"
)

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

func TestFromFSReadsMarkdownTextAndJSONLInLexicalOrder(t *testing.T) {
	fsys := fstest.MapFS{
		"b/titan.md":        file("# Titan\n\nTitan is a moon.\n\nIt has lakes.\n"),
		"a/deep_field.txt":  file("Galaxies everywhere.\n"),
		"a/heading.txt":     file("intro line\n# Heading Title\nbody\n"),
		"c/more.jsonl":      file(`{"id":"x1","title":"Io","text":"Io has volcanoes."}` + "\n"),
		"notes.pdf":         file("ignored"),
		".hidden/secret.md": file("# Secret\n\nhidden"),
		".skip.md":          file("# Skip\n\nhidden"),
		"empty.md":          file("  \n"),
		"windows.md":        file("# Crlf\r\n\r\nLine one.\r\n"),
	}
	docs, err := search.FromFS(fsys).Documents(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []search.Document{
		{ID: "a/deep_field.txt", Title: "deep field", Text: "Galaxies everywhere.", Source: "a/deep_field.txt"},
		{ID: "a/heading.txt", Title: "Heading Title", Text: "intro line\nbody", Source: "a/heading.txt"},
		{ID: "b/titan.md", Title: "Titan", Text: "Titan is a moon.\n\nIt has lakes.", Source: "b/titan.md"},
		{ID: "x1", Title: "Io", Text: "Io has volcanoes.", Source: "c/more.jsonl:1"},
		{ID: "windows.md", Title: "Crlf", Text: "Line one.", Source: "windows.md"},
	}, docs)
}

func TestFromJSONLParsesRecords(t *testing.T) {
	fsys := fstest.MapFS{"docs.jsonl": file(
		`{"id":"a","title":"Alpha","text":"first"}` + "\n" +
			"\n" +
			`{"id":7,"text":"numbered","extra":true}` + "\n" +
			`{"title":"No id","text":"  spaced  "}` + "\n" +
			`{"text":"bare"}` + "\n")}
	docs, err := search.FromJSONL(fsys, "docs.jsonl").Documents(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []search.Document{
		{ID: "a", Title: "Alpha", Text: "first", Source: "docs.jsonl:1"},
		{ID: "7", Title: "7", Text: "numbered", Source: "docs.jsonl:3"},
		{ID: "docs.jsonl:4", Title: "No id", Text: "spaced", Source: "docs.jsonl:4"},
		{ID: "docs.jsonl:5", Title: "docs.jsonl:5", Text: "bare", Source: "docs.jsonl:5"},
	}, docs)
}

func TestFromJSONLRejectsMalformedData(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		wantMsg string
	}{
		{"invalid JSON", `{"text":"ok"}` + "\n" + `{"text":` + "\n", "docs.jsonl:2"},
		{"missing text", `{"title":"T"}`, `no "text"`},
		{"blank text", `{"title":"T","text":"  "}`, `no "text"`},
		{"id of wrong type", `{"id":[1],"text":"x"}`, `"id" must be a string or a number`},
		{"duplicate id", `{"id":"a","text":"x"}` + "\n" + `{"id":"a","text":"y"}`, `duplicate document id "a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := search.FromJSONL(fstest.MapFS{"docs.jsonl": file(tt.data)}, "docs.jsonl").Documents(context.Background())
			require.ErrorIs(t, err, search.ErrBadSource)
			assert.Contains(t, err.Error(), tt.wantMsg)
		})
	}
}

func TestFromJSONLMissingFileIsBadSource(t *testing.T) {
	_, err := search.FromJSONL(fstest.MapFS{}, "nope.jsonl").Documents(context.Background())
	assert.ErrorIs(t, err, search.ErrBadSource)
}

func TestFromPathHandlesDirectoriesAndFiles(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "moon.md"), []byte("# Moon\n\nEarth's satellite.\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pages.jsonl"), []byte(`{"id":"p","title":"Page","text":"words"}`), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "data.csv"), []byte("a,b"), 0o600))
	tests := []struct {
		name    string
		path    string
		want    []string
		wantErr bool
	}{
		{"directory", dir, []string{"Moon", "Page"}, false},
		{"markdown file", filepath.Join(dir, "moon.md"), []string{"Moon"}, false},
		{"jsonl file", filepath.Join(dir, "pages.jsonl"), []string{"Page"}, false},
		{"unsupported file", filepath.Join(dir, "data.csv"), nil, true},
		{"missing path", filepath.Join(dir, "missing"), nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := search.FromPath(tt.path).Documents(context.Background())
			if tt.wantErr {
				assert.ErrorIs(t, err, search.ErrBadSource)
				return
			}
			require.NoError(t, err)
			var titles []string
			for _, d := range docs {
				titles = append(titles, d.Title)
			}
			assert.Equal(t, tt.want, titles)
		})
	}
}

func TestFromDocumentsFillsMissingIDsAndTitles(t *testing.T) {
	docs, err := search.FromDocuments(
		search.Document{Text: "one"},
		search.Document{ID: "b", Text: "two"},
		search.Document{ID: "c", Title: "Gamma", Text: "three"},
	).Documents(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []search.Document{
		{ID: "1", Title: "1", Text: "one"},
		{ID: "b", Title: "b", Text: "two"},
		{ID: "c", Title: "Gamma", Text: "three"},
	}, docs)
}

func TestSourcesStopWhenContextIsCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fsys := fstest.MapFS{"a.md": file("# A\n\ntext"), "b.jsonl": file(`{"text":"x"}`)}
	sources := map[string]search.Source{
		"fs":        search.FromFS(fsys),
		"jsonl":     search.FromJSONL(fsys, "b.jsonl"),
		"documents": search.FromDocuments(search.Document{Text: "x"}),
	}
	for name, src := range sources {
		t.Run(name, func(t *testing.T) {
			_, err := src.Documents(ctx)
			assert.ErrorIs(t, err, context.Canceled)
		})
	}
}

func TestScanJSONLDecodesLinesAndNamesTheBadOne(t *testing.T) {
	type rec struct {
		N int `json:"n"`
	}
	var got []string
	sc := bufio.NewScanner(strings.NewReader("{\"n\": 1}\n\n  \n{\"n\": 2}\n"))
	lines, err := search.ScanJSONL(context.Background(), sc, "f.jsonl", func(r rec, where string, line int) error {
		got = append(got, fmt.Sprintf("%s=%d@%d", where, r.N, line))
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 4, lines)
	assert.Equal(t, []string{"f.jsonl:1=1@1", "f.jsonl:4=2@4"}, got, "blank lines are skipped but counted")

	sc = bufio.NewScanner(strings.NewReader("{\"n\": 1}\nnot json\n"))
	_, err = search.ScanJSONL(context.Background(), sc, "f.jsonl", func(rec, string, int) error { return nil })
	require.ErrorIs(t, err, search.ErrBadSource)
	assert.Contains(t, err.Error(), "f.jsonl:2: ")
}
