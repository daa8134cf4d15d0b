package search_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/corpus"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/search"
)

// demoTool returns a search tool over the demo corpus, closed at cleanup.
func demoTool(t testing.TB, opts ...search.Option) *search.Tool {
	t.Helper()
	tool, err := search.New(context.Background(), search.FromFS(corpus.Demo()), opts...)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, tool.Close()) })
	return tool
}

func titles(hits []search.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Doc.Title
	}
	return out
}

func TestSearchRanksTheRightPageFirst(t *testing.T) {
	tool := demoTool(t)
	tests := []struct {
		query string
		want  string
	}{
		{"Titan", "Titan"},
		{"Who discovered Titan?", "Titan"},
		{"When was Christiaan Huygens born?", "Christiaan Huygens"},
		{"Which spacecraft made the first flyby of Pluto?", "New Horizons"},
		{"Galileo Galilei birthplace", "Galileo Galilei"},
		{"Galileo spacecraft launch", "Galileo (spacecraft)"},
		{"moon with a dense nitrogen atmosphere and methane lakes", "Titan"},
		{"What is the orbital period of Mars?", "Mars"},
		{"hottest planet", "Venus"},
		{"comet seen every 75 to 79 years", "Halley's Comet"},
		{"first asteroid ever found", "Ceres"},
		{"laws of planetary motion", "Johannes Kepler"},
		{"space telescope with a 6.5 m mirror", "James Webb Space Telescope"},
		{"first spacecraft to enter interstellar space", "Voyager 1"},
		{"plumes of water ice erupting from Enceladus", "Cassini–Huygens"},
		{"Who named Charon after his wife?", "James Christy"},
		{"canals on Mars and Planet X", "Percival Lowell"},
		{"two-tone moon", "Iapetus"},
		{"ocean beneath the ice shell", "Europa"},
		{"most volcanically active body", "Io"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			hits, err := tool.Index().Search(context.Background(), tt.query, 3)
			require.NoError(t, err)
			require.NotEmpty(t, hits)
			assert.Equal(t, tt.want, hits[0].Doc.Title, "ranking: %v", titles(hits))
			for i := 1; i < len(hits); i++ {
				assert.GreaterOrEqual(t, hits[i-1].Score, hits[i].Score)
			}
		})
	}
}

func TestSearchOverJSONLSource(t *testing.T) {
	fsys := fstest.MapFS{"kb.jsonl": file(
		`{"id":"rh","title":"Rhine","text":"The Rhine is a river of about 1230 km that flows into the North Sea."}` + "\n" +
			`{"id":"da","title":"Danube","text":"The Danube is a river of about 2850 km that flows into the Black Sea."}` + "\n" +
			`{"id":"al","title":"Alps","text":"The Alps are a mountain range whose highest peak is Mont Blanc."}` + "\n")}
	tool, err := search.New(context.Background(), search.FromJSONL(fsys, "kb.jsonl"))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, tool.Close()) })
	tests := []struct{ query, want string }{
		{"Which river flows into the Black Sea?", "Danube"},
		{"rhine length", "Rhine"},
		{"highest peak mountain range", "Alps"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			out, err := tool.Call(context.Background(), tt.query)
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(out, "[1] "+tt.want+" (source: kb.jsonl:"), out)
		})
	}
}

func TestCallFormatsNumberedBlocks(t *testing.T) {
	src := search.FromDocuments(
		search.Document{ID: "a", Title: "Alpha", Text: "Alpha is the first letter.", Source: "greek/alpha.md"},
		search.Document{ID: "b", Title: "Beta", Text: "Beta follows alpha.\n\nIt is the second letter."},
		search.Document{ID: "c", Title: "Gamma", Text: "Gamma is unrelated."},
	)
	tool, err := search.New(context.Background(), src)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, tool.Close()) })
	out, err := tool.Call(context.Background(), "alpha letter")
	require.NoError(t, err)
	assert.Equal(t, "[1] Alpha (source: greek/alpha.md)\nAlpha is the first letter.\n\n"+
		"[2] Beta (source: b)\nBeta follows alpha. It is the second letter.", out)
}

func TestCallAcceptsJSONInput(t *testing.T) {
	tool := demoTool(t)
	plain, err := tool.Call(context.Background(), "Titan discovered")
	require.NoError(t, err)
	for _, input := range []string{`{"query": "Titan discovered"}`, `  "Titan discovered" `, `{"query":"Titan discovered","k":9}`} {
		t.Run(input, func(t *testing.T) {
			got, err := tool.Call(context.Background(), input)
			require.NoError(t, err)
			assert.Equal(t, plain, got)
		})
	}
}

func TestCallRejectsBlankQueries(t *testing.T) {
	tool := demoTool(t)
	for _, input := range []string{"", "   \n\t", `{"query": "  "}`, `{"q": "Titan"}`, `{"query": 3}`, `""`} {
		t.Run(fmt.Sprintf("%q", input), func(t *testing.T) {
			_, err := tool.Call(context.Background(), input)
			assert.ErrorIs(t, err, tools.ErrBadInput)
		})
	}
}

func TestCallWithoutMatchesSuggestsAnotherQuery(t *testing.T) {
	tool := demoTool(t)
	for _, q := range []string{"zyxwvut qqqq", "the of and"} {
		t.Run(q, func(t *testing.T) {
			out, err := tool.Call(context.Background(), q)
			require.NoError(t, err)
			assert.Contains(t, out, fmt.Sprintf("No documents matched %q", q))
			assert.Contains(t, out, "Try a different query")
		})
	}
}

func TestCancelledContextFails(t *testing.T) {
	tool := demoTool(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := tool.Call(ctx, "Titan")
	assert.ErrorIs(t, err, context.Canceled)
	_, err = tool.Index().Search(ctx, "Titan", 3)
	assert.ErrorIs(t, err, context.Canceled)
	_, err = search.New(ctx, search.FromFS(corpus.Demo()))
	assert.ErrorIs(t, err, context.Canceled)
}

func TestNewRejectsAnEmptyCorpus(t *testing.T) {
	_, err := search.New(context.Background(), search.FromFS(fstest.MapFS{"x.pdf": file("no")}))
	assert.ErrorIs(t, err, search.ErrEmptyCorpus)
}

func TestOptionsChangeTheObservation(t *testing.T) {
	t.Run("top k", func(t *testing.T) {
		out, err := demoTool(t, search.WithTopK(1)).Call(context.Background(), "Jupiter moons")
		require.NoError(t, err)
		assert.Equal(t, 1, strings.Count(out, "(source: "))
		out, err = demoTool(t, search.WithTopK(5)).Call(context.Background(), "Jupiter moons")
		require.NoError(t, err)
		assert.Equal(t, 5, strings.Count(out, "(source: "))
	})
	t.Run("snippet length", func(t *testing.T) {
		out, err := demoTool(t, search.WithTopK(1), search.WithSnippetLength(60)).Call(context.Background(), "Titan lakes")
		require.NoError(t, err)
		_, snippet, ok := strings.Cut(out, "\n")
		require.True(t, ok)
		body := strings.TrimSpace(strings.Trim(snippet, search.Ellipsis))
		assert.LessOrEqual(t, utf8.RuneCountInString(body), 60)
		assert.Contains(t, snippet, "lakes")
	})
	t.Run("name and description", func(t *testing.T) {
		tool := demoTool(t, search.WithName("kb_search"), search.WithDescription("Searches the knowledge base."))
		assert.Equal(t, "kb_search", tool.Name())
		assert.Equal(t, "Searches the knowledge base.", tool.Description())
	})
}

func TestInvalidOptionsAreRejected(t *testing.T) {
	tests := map[string]search.Option{
		"zero top k":       search.WithTopK(0),
		"negative snippet": search.WithSnippetLength(-1),
		"blank name":       search.WithName("  "),
	}
	for name, opt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := search.New(context.Background(), search.FromFS(corpus.Demo()), opt)
			assert.ErrorIs(t, err, search.ErrInvalidOption)
		})
	}
	_, err := search.NewTool(nil)
	assert.ErrorIs(t, err, search.ErrInvalidOption)
}

func TestToolDescribesItself(t *testing.T) {
	tool := demoTool(t)
	assert.Equal(t, search.DefaultName, tool.Name())
	assert.Contains(t, tool.Description(), "BM25")
	assert.Contains(t, tool.Description(), "3 best")
	assert.Equal(t, map[string]any{
		"type": "object",
		"properties": map[string]any{
			"query": map[string]any{"type": "string", "description": "Search terms, for example an entity name and the attribute wanted."},
		},
		"required": []any{"query"},
	}, tool.Schema())
	assert.Equal(t, tools.Meta{ReadOnly: true}, tool.Meta())
	var _ tools.Tool = tool
	var _ tools.Schemer = tool
	var _ tools.MetaProvider = tool
}

func TestClosedIndexFailsAndSharedIndexStaysOpen(t *testing.T) {
	idx, err := search.NewIndex(context.Background(), search.FromFS(corpus.Demo()))
	require.NoError(t, err)
	shared, err := search.NewTool(idx)
	require.NoError(t, err)
	require.NoError(t, shared.Close())
	_, err = shared.Call(context.Background(), "Titan")
	require.NoError(t, err, "closing a NewTool tool must leave the caller's index open")

	require.NoError(t, idx.Close())
	assert.NoError(t, idx.Close(), "closing twice is harmless")
	_, err = shared.Call(context.Background(), "Titan")
	assert.ErrorIs(t, err, search.ErrClosed)
}

func TestIndexKeepsDocumentsInSourceOrder(t *testing.T) {
	idx := demoTool(t).Index()
	docs := idx.Documents()
	assert.Equal(t, idx.Len(), len(docs))
	for i := 1; i < len(docs); i++ {
		assert.Less(t, docs[i-1].ID, docs[i].ID)
	}
	docs[0].Title = "changed"
	assert.NotEqual(t, "changed", idx.Documents()[0].Title, "Documents returns a copy")
}

func TestConcurrentCallsAgree(t *testing.T) {
	tool := demoTool(t)
	queries := []string{"Titan", "Voyager 2 Neptune", "Pluto discovered", "Ganymede diameter"}
	want := make([]string, len(queries))
	for i, q := range queries {
		out, err := tool.Call(context.Background(), q)
		require.NoError(t, err)
		want[i] = out
	}
	var wg sync.WaitGroup
	got := make([]string, 8*len(queries))
	errs := make([]error, len(got))
	for i := range got {
		wg.Go(func() { got[i], errs[i] = tool.Call(context.Background(), queries[i%len(queries)]) })
	}
	wg.Wait()
	for i := range got {
		require.NoError(t, errs[i])
		assert.Equal(t, want[i%len(queries)], got[i])
	}
}
