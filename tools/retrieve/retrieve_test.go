package retrieve_test

import (
	"context"
	"errors"
	"hash/fnv"
	"strings"
	"testing"

	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/retrieve"
	"github.com/planner-engine/planner/tools/search"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tool is a test tool with a schema.
type tool struct {
	name, desc string
	props      map[string]string
}

func (t tool) Name() string        { return t.name }
func (t tool) Description() string { return t.desc }
func (t tool) Call(context.Context, string) (string, error) {
	return "ok", nil
}

func (t tool) Schema() map[string]any {
	props := map[string]any{}
	for k, d := range t.props {
		props[k] = map[string]any{"type": "string", "description": d}
	}
	return map[string]any{"type": "object", "properties": props}
}

func testTools() []tools.Tool {
	return []tools.Tool{
		tool{"get_weather", "Current conditions and forecast for a city.", map[string]string{"city": "the city"}},
		tool{"convertCurrency", "Converts money between currencies at today's rate.", map[string]string{"amount": "how much", "to": "target currency code"}},
		tool{"send_email", "Sends a message to recipients.", map[string]string{"recipient": "address", "subject": "subject line"}},
		tool{"search_flights", "Finds airline offers between two airports on a date.", map[string]string{"origin": "departure airport"}},
		tool{"translate-text", "Renders text in another language.", map[string]string{"target_language": "language wanted"}},
		tool{"stock_quote", "Latest share price of a listed company.", map[string]string{"ticker_symbol": "e.g. AAPL"}},
	}
}

func newRetriever(t *testing.T, opts ...retrieve.Option) (*retrieve.Retriever, *tools.Registry) {
	t.Helper()
	reg, err := tools.NewRegistry(testTools())
	require.NoError(t, err)
	r, err := retrieve.New(context.Background(), reg, append([]retrieve.Option{bm25()}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, r.Close()) })
	return r, reg
}

// bm25 gives a retriever the keyword index of the command line.
func bm25() retrieve.Option { return retrieve.WithIndexer(search.Keywords{}) }

func TestSplitName(t *testing.T) {
	for in, want := range map[string]string{
		"get_weather": "get weather", "getWeather": "get weather", "HTTPFetch": "http fetch",
		"translate-text": "translate text", "sql.query": "sql query", "v2Search": "v2 search", "already words": "already words",
	} {
		assert.Equal(t, want, retrieve.SplitName(in), in)
	}
}

func TestTextHoldsNameWordsDescriptionAndSchema(t *testing.T) {
	in := tools.Info{Name: "stock_quote", Description: "Latest  share\nprice.", Schema: tools.SchemaOf(testTools()[5])}
	text := retrieve.Text(in)
	assert.Contains(t, text, "stock quote (stock_quote)")
	assert.Contains(t, text, "Latest share price.")
	assert.Contains(t, text, "ticker symbol: e.g. AAPL")
}

func TestRankPicksTheObviouslyRelevantTool(t *testing.T) {
	r, _ := newRetriever(t)
	ctx := context.Background()
	for q, want := range map[string]string{
		"what's the weather like in Oslo?":            "get_weather",
		"convert 100 dollars to another currency":     "convertCurrency",
		"email the team the subject of the meeting":   "send_email",
		"book me a flight from Lisbon":                "search_flights",
		"how do you say hello in Portuguese language": "translate-text",
		"what is the share price of ACME":             "stock_quote",
	} {
		got, err := r.Rank(ctx, q, 1)
		require.NoError(t, err, q)
		assert.Equal(t, []string{want}, got, q)
	}
}

func TestSelectReturnsRegistryOrderAndAlwaysIncludesUsedTools(t *testing.T) {
	r, reg := newRetriever(t)
	ctx := context.Background()
	got, err := r.Select(ctx, "weather in Paris", 1, []string{"Send-Email", "no_such_tool"})
	require.NoError(t, err)
	assert.Equal(t, []string{"get_weather", "send_email"}, got, "the top tool, the used one (tolerant name), unknown names ignored")

	got, err = r.Select(ctx, "share price, then the weather forecast, then translate to German language", 3, nil)
	require.NoError(t, err)
	names := reg.Names()
	last := -1
	for _, g := range got {
		i := indexOf(names, g)
		assert.Greater(t, i, last, "registry order: %v", got)
		last = i
	}
	assert.ElementsMatch(t, []string{"get_weather", "stock_quote", "translate-text"}, got)
}

func TestSelectWithKAtLeastTheToolCountReturnsAll(t *testing.T) {
	r, reg := newRetriever(t)
	for _, k := range []int{reg.Len(), reg.Len() + 5} {
		got, err := r.Select(context.Background(), "", k, nil)
		require.NoError(t, err)
		assert.Equal(t, reg.Names(), got)
	}
}

func TestSelectBelowOneKeepsOnlyTheAlwaysTools(t *testing.T) {
	r, _ := newRetriever(t)
	got, err := r.Select(context.Background(), "weather", 0, []string{"stock_quote"})
	require.NoError(t, err)
	assert.Equal(t, []string{"stock_quote"}, got)
}

func TestEmptyOrStopWordQueryMatchesNothing(t *testing.T) {
	r, _ := newRetriever(t)
	for _, q := range []string{"", "   ", "the and of it"} {
		_, err := r.Select(context.Background(), q, 2, []string{"send_email"})
		assert.ErrorIs(t, err, retrieve.ErrNoMatch, "%q", q)
	}
}

func TestTiesKeepRegistryOrderAndRepeatsAreStable(t *testing.T) {
	reg, err := tools.NewRegistry([]tools.Tool{
		tool{"zeta", "Does the widget thing.", nil}, tool{"alpha", "Does the widget thing.", nil}, tool{"mid", "Does the widget thing.", nil},
	})
	require.NoError(t, err)
	r, err := retrieve.New(context.Background(), reg, bm25())
	require.NoError(t, err)
	defer r.Close()
	first, err := r.Rank(context.Background(), "widget", 2)
	require.NoError(t, err)
	assert.Equal(t, []string{"alpha", "mid"}, first, "equal scores rank in the registry's (sorted) order")
	for range 5 {
		again, err := r.Rank(context.Background(), "widget", 2)
		require.NoError(t, err)
		assert.Equal(t, first, again)
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	ctx := context.Background()
	empty, err := tools.NewRegistry(nil)
	require.NoError(t, err)
	_, err = retrieve.New(ctx, empty, bm25())
	assert.ErrorIs(t, err, retrieve.ErrNoTools)
	reg, err := tools.NewRegistry(testTools())
	require.NoError(t, err)
	_, err = retrieve.New(ctx, reg, retrieve.WithMethod("magic"))
	assert.ErrorIs(t, err, retrieve.ErrBadMethod)
	assert.ErrorContains(t, err, "bm25, embedding, hybrid")
	_, err = retrieve.New(ctx, reg, retrieve.WithMethod(retrieve.MethodHybrid), bm25())
	assert.ErrorIs(t, err, retrieve.ErrNoEmbedder)
	_, err = retrieve.New(ctx, reg)
	assert.ErrorIs(t, err, retrieve.ErrNoIndexer, "bm25, the default, needs a keyword index")
	_, err = retrieve.New(ctx, reg, retrieve.WithMethod(retrieve.MethodHybrid), retrieve.WithEmbedder(failEmbedder{}))
	assert.ErrorIs(t, err, retrieve.ErrNoIndexer)
	_, err = retrieve.New(ctx, reg, retrieve.WithEmbedder(failEmbedder{}))
	assert.ErrorIs(t, err, retrieve.ErrEmbedding)
	_, err = retrieve.New(ctx, reg, retrieve.WithEmbedder(shortEmbedder{}))
	assert.ErrorIs(t, err, retrieve.ErrEmbedding)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = retrieve.New(cancelled, reg, bm25())
	assert.ErrorIs(t, err, context.Canceled)
}

func TestSelectAfterCloseFails(t *testing.T) {
	reg, err := tools.NewRegistry(testTools())
	require.NoError(t, err)
	r, err := retrieve.New(context.Background(), reg, bm25())
	require.NoError(t, err)
	require.NoError(t, r.Close())
	_, err = r.Select(context.Background(), "weather", 2, nil)
	assert.ErrorIs(t, err, search.ErrClosed)
}

// hashEmbedder is a deterministic stand-in for an embedding model: a
// text's vector counts its lower-cased words (a trailing "s" dropped),
// each hashed into one of dims buckets. It counts its calls.
type hashEmbedder struct {
	docs, queries *int
}

const dims = 256

func embedText(text string) []float32 {
	v := make([]float32, dims)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !('a' <= r && r <= 'z') }) {
		if len(w) < 3 {
			continue
		}
		h := fnv.New32a()
		_, _ = h.Write([]byte(strings.TrimSuffix(w, "s")))
		v[h.Sum32()%dims]++
	}
	return v
}

func (e hashEmbedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	*e.docs++
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = embedText(t)
	}
	return out, nil
}

func (e hashEmbedder) EmbedQuery(_ context.Context, text string) ([]float32, error) {
	*e.queries++
	return embedText(text), nil
}

type failEmbedder struct{}

func (failEmbedder) EmbedDocuments(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("quota exceeded")
}
func (failEmbedder) EmbedQuery(context.Context, string) ([]float32, error) {
	return nil, errors.New("quota exceeded")
}

// shortEmbedder returns one vector fewer than asked.
type shortEmbedder struct{}

func (shortEmbedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	return make([][]float32, len(texts)-1), nil
}
func (shortEmbedder) EmbedQuery(context.Context, string) ([]float32, error) { return nil, nil }

func TestEmbeddingRetrieverEmbedsToolsOnceAndRanksByCosine(t *testing.T) {
	var docs, queries int
	emb := hashEmbedder{&docs, &queries}
	r, _ := newRetriever(t, retrieve.WithEmbedder(emb))
	assert.Equal(t, retrieve.MethodEmbedding, r.Method(), "an embedder makes embedding the default method")
	ctx := context.Background()
	for q, want := range map[string]string{
		"forecast for the city of Rome":      "get_weather",
		"flights between airports on friday": "search_flights",
		"latest share price of Nvidia":       "stock_quote",
	} {
		got, err := r.Rank(ctx, q, 1)
		require.NoError(t, err)
		assert.Equal(t, []string{want}, got, q)
	}
	assert.Equal(t, 1, docs, "the tools are embedded once, at New")
	assert.Equal(t, 3, queries)
}

func TestHybridFusesBothRankings(t *testing.T) {
	var docs, queries int
	r, _ := newRetriever(t, retrieve.WithEmbedder(hashEmbedder{&docs, &queries}), retrieve.WithMethod(retrieve.MethodHybrid))
	got, err := r.Select(context.Background(), "send an email with the weather forecast", 2, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"get_weather", "send_email"}, got)
	assert.Equal(t, 1, queries)
}

func TestEmbeddingQueryFailureIsReported(t *testing.T) {
	reg, err := tools.NewRegistry(testTools())
	require.NoError(t, err)
	var docs, queries int
	r, err := retrieve.New(context.Background(), reg, retrieve.WithEmbedder(queryFails{hashEmbedder{&docs, &queries}}))
	require.NoError(t, err)
	_, err = r.Select(context.Background(), "weather", 2, nil)
	assert.ErrorIs(t, err, retrieve.ErrEmbedding)
	assert.ErrorContains(t, err, "model overloaded")
}

type queryFails struct{ hashEmbedder }

func (queryFails) EmbedQuery(context.Context, string) ([]float32, error) {
	return nil, errors.New("model overloaded")
}

func indexOf(names []string, n string) int {
	for i, x := range names {
		if x == n {
			return i
		}
	}
	return -1
}

func TestEmbeddingQueryWithNoMeaningMatchesNothing(t *testing.T) {
	var docs, queries int
	r, _ := newRetriever(t, retrieve.WithEmbedder(hashEmbedder{&docs, &queries}))
	// Words shorter than three letters get no dimension: a zero vector.
	_, err := r.Select(context.Background(), "is it ok", 2, nil)
	assert.ErrorIs(t, err, retrieve.ErrNoMatch)
	got, err := r.Rank(context.Background(), "weather forecast", 10)
	require.NoError(t, err)
	assert.Equal(t, []string{"get_weather"}, got, "only tools of positive similarity")
}
