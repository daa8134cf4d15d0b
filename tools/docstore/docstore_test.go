package docstore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/corpus"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/docstore"
	"github.com/planner-engine/planner/tools/search"
)

// demoStore returns a store over the demo corpus, closed at cleanup.
func demoStore(t *testing.T, opts ...docstore.Option) *docstore.Store {
	t.Helper()
	s, err := docstore.New(context.Background(), search.FromFS(corpus.Demo()), opts...)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	return s
}

const titanFirst = "Titan is the largest moon of Saturn and the second largest moon in the Solar System, after Ganymede. " +
	"Its diameter is 5150 km, larger than the planet Mercury. Titan is the only moon with a dense atmosphere, mostly " +
	"nitrogen, and the only body besides Earth known to have stable lakes on its surface, filled with liquid methane and ethane."

func TestSearchOpensThePageWhoseTitleMatches(t *testing.T) {
	store := demoStore(t)
	tests := []struct {
		entity string
		page   string
	}{
		{"Titan", "Titan"},
		{"  titan ", "Titan"},
		{"TITAN", "Titan"},
		{"Titan (moon)", "Titan"},
		{"Halley's Comet", "Halley's Comet"},
		{"halleys_comet", "Halley's Comet"},
		{"the Sun", "Sun"},
		{"Cassini-Huygens", "Cassini–Huygens"},
		{"Juno", "Juno (spacecraft)"},
		{"galileo (SPACECRAFT)", "Galileo (spacecraft)"},
		{"Urbain Le Verrier", "Urbain Le Verrier"},
		{`{"entity": "Io"}`, "Io"},
		{`"Europa"`, "Europa"},
	}
	for _, tt := range tests {
		t.Run(tt.entity, func(t *testing.T) {
			sess := store.NewSession()
			out, err := sess.SearchTool().Call(context.Background(), tt.entity)
			require.NoError(t, err)
			assert.Equal(t, tt.page, sess.Page())
			assert.NotContains(t, out, "Could not find")
			assert.NotContains(t, out, "\n", "only the first paragraph")
		})
	}
	out, err := store.NewSession().Search(context.Background(), "Titan")
	require.NoError(t, err)
	assert.Equal(t, titanFirst, out)
}

func TestSearchWithoutMatchingTitleListsSimilarPages(t *testing.T) {
	store := demoStore(t)
	sess := store.NewSession()
	_, err := sess.Search(context.Background(), "Titan")
	require.NoError(t, err)

	out, err := sess.Search(context.Background(), "Saturn's moon with methane lakes")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(out, "Could not find Saturn's moon with methane lakes. Similar: [Titan, "), out)
	assert.True(t, strings.HasSuffix(out, "]."), out)
	list := strings.TrimSuffix(strings.SplitN(out, "Similar: [", 2)[1], "].")
	assert.Len(t, strings.Split(list, ", "), docstore.DefaultSimilar)
	assert.Empty(t, sess.Page(), "a failed search closes the open page")

	out, err = sess.Search(context.Background(), "Herschel")
	require.NoError(t, err)
	assert.Contains(t, out, "Could not find Herschel. Similar: [")
	assert.Contains(t, out, "William Herschel")
	assert.Contains(t, out, "Caroline Herschel")

	out, err = sess.Search(context.Background(), "xyzzy plugh")
	require.NoError(t, err)
	assert.Equal(t, "Could not find xyzzy plugh. No similar pages; try another name.", out)
}

func TestSearchDoesNotGuessBetweenQualifiedTitles(t *testing.T) {
	fsys := fstest.MapFS{
		"a.md": {Data: []byte("# Mercury (planet)\n\nThe planet.")},
		"b.md": {Data: []byte("# Mercury (element)\n\nThe metal.")},
	}
	store, err := docstore.New(context.Background(), search.FromFS(fsys))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, store.Close()) })
	out, err := store.NewSession().Search(context.Background(), "mercury")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(out, "Could not find mercury. Similar: ["), out)
	out, err = store.NewSession().Search(context.Background(), "Mercury (element)")
	require.NoError(t, err)
	assert.Equal(t, "The metal.", out)
	assert.Equal(t, []string{"Mercury (planet)", "Mercury (element)"}, store.Titles())
}

func TestLookupWalksMatchingSentencesOfTheOpenPage(t *testing.T) {
	store := demoStore(t)
	sess := store.NewSession()
	ctx := context.Background()
	_, err := sess.Search(ctx, "Titan")
	require.NoError(t, err)
	steps := []struct {
		keyword string
		want    string
	}{
		{"huygens", "(Result 1 / 2) The Dutch astronomer Christiaan Huygens discovered Titan on 25 March 1655."},
		{"Huygens", "(Result 2 / 2) The Huygens probe, carried to Saturn by the Cassini spacecraft, landed on Titan on 14 January 2005, the most distant landing ever made."},
		{"Huygens", docstore.NoMoreResults},
		{"Huygens", docstore.NoMoreResults},
		{"diameter", "(Result 1 / 1) Its diameter is 5150 km, larger than the planet Mercury."},
		{"Huygens", "(Result 1 / 2) The Dutch astronomer Christiaan Huygens discovered Titan on 25 March 1655."},
		{"volcano", docstore.NoMoreResults},
		{`{"keyword": "lakes"}`, "(Result 1 / 1) Titan is the only moon with a dense atmosphere, mostly nitrogen, and the only body besides Earth known to have stable lakes on its surface, filled with liquid methane and ethane."},
	}
	for i, st := range steps {
		got, err := sess.LookupTool().Call(ctx, st.keyword)
		require.NoError(t, err, "step %d", i)
		assert.Equal(t, st.want, got, "step %d: lookup %q", i, st.keyword)
	}
}

func TestSearchResetsTheLookupCursor(t *testing.T) {
	sess := demoStore(t).NewSession()
	ctx := context.Background()
	_, err := sess.Search(ctx, "Titan")
	require.NoError(t, err)
	first, err := sess.Lookup(ctx, "Huygens")
	require.NoError(t, err)
	_, err = sess.Search(ctx, "Titan")
	require.NoError(t, err)
	again, err := sess.Lookup(ctx, "Huygens")
	require.NoError(t, err)
	assert.Equal(t, first, again)
	assert.True(t, strings.HasPrefix(again, "(Result 1 / 2) "))

	_, err = sess.Search(ctx, "Christiaan Huygens")
	require.NoError(t, err)
	other, err := sess.Lookup(ctx, "Huygens")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(other, "(Result 1 / 3) Christiaan Huygens was a Dutch"), other)
}

func TestLookupWithoutAnOpenPageSaysToSearchFirst(t *testing.T) {
	sess := demoStore(t).NewSession()
	ctx := context.Background()
	out, err := sess.Lookup(ctx, "born")
	require.NoError(t, err)
	assert.Equal(t, "No page is open. Call search_page with the name of an entity first, then look up keywords on its page.", out)

	_, err = sess.Search(ctx, "no such page at all qqq")
	require.NoError(t, err)
	out, err = sess.Lookup(ctx, "born")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(out, "No page is open."), out)
}

func TestBlankInputsAreRejected(t *testing.T) {
	sess := demoStore(t).NewSession()
	for _, tool := range sess.Tools() {
		for _, input := range []string{"", "  \t", `{"x": 1}`, `{"a": "b", "c": "d"}`, `""`} {
			t.Run(tool.Name()+"/"+fmt.Sprintf("%q", input), func(t *testing.T) {
				_, err := tool.Call(context.Background(), input)
				assert.ErrorIs(t, err, tools.ErrBadInput)
			})
		}
	}
}

func TestCancelledContextFails(t *testing.T) {
	sess := demoStore(t).NewSession()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := sess.Search(ctx, "Titan")
	assert.ErrorIs(t, err, context.Canceled)
	_, err = sess.Lookup(ctx, "born")
	assert.ErrorIs(t, err, context.Canceled)
	_, err = docstore.New(ctx, search.FromFS(corpus.Demo()))
	assert.ErrorIs(t, err, context.Canceled)
}

func TestSessionsDoNotShareState(t *testing.T) {
	store := demoStore(t)
	ctx := context.Background()
	pages := []string{"Titan", "Neptune", "Voyager 2", "Pluto", "Ganymede", "Christiaan Huygens"}
	const keyword = "the"
	// Expected sequences come from running each page alone.
	want := map[string][]string{}
	for _, p := range pages {
		sess := store.NewSession()
		_, err := sess.Search(ctx, p)
		require.NoError(t, err)
		for {
			out, err := sess.Lookup(ctx, keyword)
			require.NoError(t, err)
			want[p] = append(want[p], out)
			if out == docstore.NoMoreResults {
				break
			}
		}
	}
	var wg sync.WaitGroup
	got := make([][]string, 4*len(pages))
	errs := make([]error, len(got))
	for i := range got {
		wg.Go(func() {
			sess := store.NewSession()
			if _, errs[i] = sess.Search(ctx, pages[i%len(pages)]); errs[i] != nil {
				return
			}
			for range want[pages[i%len(pages)]] {
				var out string
				if out, errs[i] = sess.Lookup(ctx, keyword); errs[i] != nil {
					return
				}
				got[i] = append(got[i], out)
			}
		})
	}
	wg.Wait()
	for i := range got {
		require.NoError(t, errs[i])
		assert.Equal(t, want[pages[i%len(pages)]], got[i], "session %d on %s", i, pages[i%len(pages)])
	}
}

func TestOneSessionServesConcurrentLookupsExactlyOnce(t *testing.T) {
	sess := demoStore(t).NewSession()
	ctx := context.Background()
	_, err := sess.Search(ctx, "Saturn")
	require.NoError(t, err)
	first, err := sess.Lookup(ctx, "Saturn")
	require.NoError(t, err)
	var n int
	_, err = fmt.Sscanf(first, "(Result 1 / %d)", &n)
	require.NoError(t, err)
	require.Greater(t, n, 1)

	results := make([]string, n+3)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() { results[i], _ = sess.Lookup(ctx, "Saturn") })
	}
	wg.Wait()
	seen := map[string]int{}
	for _, r := range results {
		if r == docstore.NoMoreResults {
			seen[r]++
			continue
		}
		var k, total int
		_, err := fmt.Sscanf(r, "(Result %d / %d)", &k, &total)
		require.NoError(t, err, r)
		seen[fmt.Sprint(k)]++
	}
	for k := 2; k <= n; k++ {
		assert.Equal(t, 1, seen[fmt.Sprint(k)], "result %d returned once", k)
	}
	assert.Equal(t, 4, seen[docstore.NoMoreResults])
}

func TestOptionsConfigureNamesAndSimilarCount(t *testing.T) {
	store := demoStore(t, docstore.WithNames("Search", "Lookup"), docstore.WithSimilar(2))
	sess := store.NewSession()
	ts := sess.Tools()
	require.Len(t, ts, 2)
	assert.Equal(t, "Search", ts[0].Name())
	assert.Equal(t, "Lookup", ts[1].Name())
	assert.Contains(t, ts[1].Description(), "opened by Search")
	out, err := ts[0].Call(context.Background(), "moon of Jupiter")
	require.NoError(t, err)
	list := strings.TrimSuffix(strings.SplitN(out, "Similar: [", 2)[1], "].")
	assert.Len(t, strings.Split(list, ", "), 2)
	out, err = ts[1].Call(context.Background(), "x")
	require.NoError(t, err)
	assert.Contains(t, out, "Call Search with")
}

func TestInvalidOptionsAreRejected(t *testing.T) {
	tests := map[string]docstore.Option{
		"blank search name": docstore.WithNames(" ", "lookup"),
		"blank lookup name": docstore.WithNames("search_page", ""),
		"same names":        docstore.WithNames("find", "FIND"),
		"zero similar":      docstore.WithSimilar(0),
	}
	for name, opt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := docstore.New(context.Background(), search.FromFS(corpus.Demo()), opt)
			assert.ErrorIs(t, err, docstore.ErrInvalidOption)
		})
	}
	_, err := docstore.NewFromIndex(nil)
	assert.ErrorIs(t, err, docstore.ErrInvalidOption)
}

func TestToolsDescribeThemselves(t *testing.T) {
	sess := demoStore(t).NewSession()
	st, lt := sess.SearchTool(), sess.LookupTool()
	assert.Equal(t, docstore.DefaultSearchName, st.Name())
	assert.Equal(t, docstore.DefaultLookupName, lt.Name())
	assert.Equal(t, []any{"entity"}, st.Schema()["required"])
	assert.Equal(t, []any{"keyword"}, lt.Schema()["required"])
	assert.False(t, st.Meta().ReadOnly, "search changes the open page")
	assert.False(t, lt.Meta().ReadOnly, "lookup advances the cursor")
	for _, tool := range sess.Tools() {
		assert.NotEmpty(t, tool.Description())
		_, ok := tool.(tools.Schemer)
		assert.True(t, ok)
		_, ok = tool.(tools.MetaProvider)
		assert.True(t, ok)
	}
}

func TestStoreSharesAnIndexWithoutClosingIt(t *testing.T) {
	idx, err := search.NewIndex(context.Background(), search.FromFS(corpus.Demo()))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, idx.Close()) })
	store, err := docstore.NewFromIndex(idx)
	require.NoError(t, err)
	require.NoError(t, store.Close())
	out, err := store.NewSession().Search(context.Background(), "unknown entity qqq Titan")
	require.NoError(t, err, "the shared index is still open")
	assert.Contains(t, out, "Similar: [Titan")
	assert.Len(t, store.Titles(), idx.Len())
}

func TestSessionToolsRegisterBesideTheSearchTool(t *testing.T) {
	ctx := context.Background()
	idx, err := search.NewIndex(ctx, search.FromFS(corpus.Demo()))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, idx.Close()) })
	searchTool, err := search.NewTool(idx)
	require.NoError(t, err)
	store, err := docstore.NewFromIndex(idx)
	require.NoError(t, err)
	reg, err := tools.NewRegistry(append([]tools.Tool{searchTool}, store.NewSession().Tools()...))
	require.NoError(t, err)
	assert.Equal(t, []string{"lookup", "search", "search_page"}, reg.Names())
	out, err := reg.Call(ctx, "search_page", "Voyager 2")
	require.NoError(t, err)
	assert.Contains(t, out, "only spacecraft to have visited Uranus and Neptune")
	out, err = reg.Call(ctx, "lookup", "Neptune")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(out, "(Result 1 / 2) "), out)
}
