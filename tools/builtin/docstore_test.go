package builtin

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/docstore"
)

// docstoreTools builds a docstore entry and closes its store at cleanup.
func docstoreTools(t *testing.T, settings map[string]any, baseDir string) []tools.Tool {
	t.Helper()
	ts, err := buildDocstore(context.Background(), settings, baseDir)
	require.NoError(t, err)
	require.Len(t, ts, 2)
	closer, ok := ts[0].(io.Closer)
	require.True(t, ok, "the search tool closes the store")
	t.Cleanup(func() { assert.NoError(t, closer.Close()) })
	return ts
}

func TestBuildDocstoreDefaultsToTheDemoCorpus(t *testing.T) {
	ts := docstoreTools(t, nil, "")
	assert.Equal(t, "search_page", ts[0].Name())
	assert.Equal(t, "lookup", ts[1].Name())
	for _, tool := range ts {
		assert.True(t, tools.MetaOf(tool).Stateful, tool.Name())
		_, ok := tool.(tools.Schemer)
		assert.True(t, ok, tool.Name())
	}
	reg, err := tools.NewRegistry(ts)
	require.NoError(t, err)
	ctx := tools.WithRunState(context.Background(), tools.NewRunState())
	out, err := reg.Call(ctx, "search_page", "Titan")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(out, "Titan is the largest moon of Saturn"), out)
	out, err = reg.Call(ctx, "lookup", "Huygens")
	require.NoError(t, err)
	assert.Equal(t, "(Result 1 / 2) The Dutch astronomer Christiaan Huygens discovered Titan on 25 March 1655.", out)
}

func TestBuildDocstoreWikiEnvFromAJSONLFile(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "data"), 0o755))
	const pages = `{"title": "Titan", "text": "Titan is a moon of Saturn. Huygens found it in 1655.\nThe Huygens probe landed there."}
{"title": "Moon of Saturn", "similar": ["Titan", "Rhea's \"twin\""]}
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "data", "wiki.jsonl"), []byte(pages), 0o644))
	ts := docstoreTools(t, map[string]any{"source": "data/wiki.jsonl", "format": "wikienv", "search_name": "Search", "lookup_name": "Lookup"}, dir)
	assert.Equal(t, "Search", ts[0].Name())
	assert.Equal(t, "Lookup", ts[1].Name())

	// Two runs of one pipeline share the tools, not the state.
	var wg sync.WaitGroup
	results := make([][]string, 8)
	for i := range results {
		wg.Go(func() {
			ctx := tools.WithRunState(context.Background(), tools.NewRunState())
			for _, call := range []struct{ tool, in string }{{"s", "Titan"}, {"l", "huygens"}, {"s", "Moon of Saturn"}, {"l", "huygens"}, {"l", "huygens"}} {
				tool := ts[0]
				if call.tool == "l" {
					tool = ts[1]
				}
				out, err := tool.Call(ctx, call.in)
				if err != nil {
					out = "error: " + err.Error()
				}
				results[i] = append(results[i], out)
			}
		})
	}
	wg.Wait()
	want := []string{
		"Titan is a moon of Saturn. Huygens found it in 1655.. The Huygens probe landed there..",
		"(Result 1 / 2) Huygens found it in 1655..",
		`Could not find Moon of Saturn. Similar: ['Titan', 'Rhea\'s "twin"'].`,
		"(Result 2 / 2) The Huygens probe landed there..",
		"No more results.\n",
	}
	for i := range results {
		assert.Equal(t, want, results[i], "run %d", i)
	}
}

func TestBuildDocstoreLangChainFromAFolder(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "pages"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pages", "titan.md"), []byte("# Titan\n\nTitan is a moon\nof Saturn.\n\nHuygens found it."), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pages", "rhea.md"), []byte("# Rhea\n\nRhea is another moon."), 0o644))
	ts := docstoreTools(t, map[string]any{"source": filepath.Join(dir, "pages"), "format": "LangChain", "similar": 1, "auto_suggest": false}, "/elsewhere")
	ctx := tools.WithRunState(context.Background(), tools.NewRunState())
	out, err := ts[0].Call(ctx, "titan")
	require.NoError(t, err)
	assert.Equal(t, "Titan is a moon of Saturn.", out)
	out, err = ts[1].Call(ctx, "HUYGENS")
	require.NoError(t, err)
	assert.Equal(t, "(Result 1/1) Huygens found it.", out)
	out, err = ts[0].Call(ctx, "moon")
	require.NoError(t, err)
	assert.Equal(t, "Could not find [moon]. Similar: ['Rhea']", out, "the shorter page ranks first")
	_, err = ts[1].Call(ctx, "moon")
	assert.ErrorIs(t, err, docstore.ErrNoPage)
}

func TestBuildDocstoreRejectsBadSettings(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.jsonl"), []byte("{\"title\": \"A\", \"text\": \"a\"}\n{\"title\": \"B\"}\n"), 0o644))
	tests := []struct {
		name     string
		settings map[string]any
		key      string
		want     string
	}{
		{"unknown key", map[string]any{"corpus": "demo"}, "corpus", "unknown setting"},
		{"format", map[string]any{"format": "react"}, "format", `unknown format "react"`},
		{"similar", map[string]any{"similar": -1}, "similar", "at least 1"},
		{"auto_suggest", map[string]any{"auto_suggest": true}, "auto_suggest", "format: langchain"},
		{"same names", map[string]any{"search_name": "Find", "lookup_name": "find"}, "lookup_name", "other than"},
		{"bad line", map[string]any{"source": "bad.jsonl"}, "source", "bad.jsonl:2"},
		{"missing", map[string]any{"source": "nowhere"}, "source", "nowhere"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := buildDocstore(context.Background(), tt.settings, dir)
			require.Error(t, err)
			var se *config.SettingError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.key, se.Key)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestBuildDocstoreDescriptionsAreCleanLines(t *testing.T) {
	for _, f := range docstore.Formats() {
		for _, tool := range docstoreTools(t, map[string]any{"format": string(f)}, "") {
			d := tool.Description()
			assert.Equal(t, tools.CleanDescription(d), d, "%s %s", f, tool.Name())
			assert.NotRegexp(t, `^"|"$|[\t\n]|  `, d, "%s %s", f, tool.Name())
		}
	}
}
