package serpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/serpapi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testKey is the API key the tests configure; no error or observation
// may contain it. The '+' and '/' make its URL-escaped form differ.
const testKey = "0a1b2c3d4e5f+60718293a4b5/c6d7e8f9serp"

// page is one canned SerpApi answer.
type page struct {
	status int
	body   string
}

// fake is a SerpApi stand-in that answers every search with its page and
// records the requests.
type fake struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []*http.Request
}

func newFake(t *testing.T, p page) *fake {
	t.Helper()
	f := &fake{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.reqs = append(f.reqs, r.Clone(context.Background()))
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(p.status)
		_, _ = w.Write([]byte(p.body))
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) requests() []*http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*http.Request(nil), f.reqs...)
}

// config is a Config that searches srv with testKey and sees no
// environment.
func config(srv *httptest.Server) serpapi.Config {
	return serpapi.Config{
		APIKey:    testKey,
		BaseURL:   srv.URL + "/search.json",
		Client:    srv.Client(),
		LookupEnv: func(string) (string, bool) { return "", false },
	}
}

func newTool(t *testing.T, cfg serpapi.Config) *serpapi.Tool {
	t.Helper()
	tool, err := serpapi.New(cfg)
	require.NoError(t, err)
	return tool
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return string(b)
}

// search serves p and runs one search for query.
func search(t *testing.T, p page, query string) (string, error) {
	t.Helper()
	f := newFake(t, p)
	return newTool(t, config(f.srv)).Call(context.Background(), query)
}

// assertNoKey fails when s shows the key, plain or URL-escaped.
func assertNoKey(t *testing.T, s string) {
	t.Helper()
	assert.NotContains(t, s, testKey)
	assert.NotContains(t, s, url.QueryEscape(testKey))
	assert.NotContains(t, s, "api_key=")
}

func TestAnswersFromThePartOfThePageThatHasOne(t *testing.T) {
	cases := []struct {
		fixture string
		want    []string
		not     []string
	}{
		{"answer_box.json",
			[]string{"Google answer box:\nAnswer: 1971\nThe first edition of Unix was released to the public in November 1971",
				"Source: Unix - Wikipedia <https://en.wikipedia.org/wiki/Unix>"},
			[]string{"Highlighted", "knowledge graph", "History of Unix", "Google results"}},
		{"answer_box_list.json",
			[]string{"Highlighted: Steep 12 to 18 hours\n- Grind the coffee coarsely.\n- Stir it into cold water.\n- Steep 12 to 18 hours.\n- Strain and serve.",
				"Source: How to make cold brew coffee - Example Recipes <https://example.com/cold-brew>"},
			[]string{"Answer:", "Google results"}},
		{"answer_box_table.json",
			[]string{"Mountain | Height (m)\nMount Everest | 8,849\nK2 | 8,611"}, nil},
		{"answer_box_calculator.json",
			[]string{"Google answer box:\nAnswer: 121,932,631,112,635,269"}, []string{"Google results"}},
		{"sports.json",
			[]string{"Google sports results: Real Madrid CF\nReal Madrid 2 vs Girona 1 (La Liga, Matchday 14, Yesterday, FT)"},
			[]string{"knowledge graph", "Official site"}},
		{"knowledge_graph.json",
			[]string{"Google knowledge graph: Marie Curie (Physicist)\nMarie Salomea Skłodowska-Curie was a Polish",
				"Born: November 7, 1867, Warsaw, Poland\nDied: July 4, 1934, Passy, France\nSpouse: Pierre Curie (m. 1895–1906)\nAwards: Nobel Prize in Physics, Nobel Prize in Chemistry",
				"Source: Wikipedia <https://en.wikipedia.org/wiki/Marie_Curie>"},
			[]string{"/m/053_8", "people", "search link", "Children", "Pierre Curie\n", "Header", "What did Marie Curie discover"}},
		{"organic.json",
			[]string{"Google results:\n[1] context package - Go Packages\nPackage context defines the Context type, which carries deadlines, cancellation signals, and other request-scoped values.\nhttps://pkg.go.dev/context\n\n" +
				"[2] Go Concurrency Patterns: Context - The Go Programming Language\nAt Google, we developed a context package that makes it easy to pass request-scoped values, cancellation signals, and deadlines.\nhttps://go.dev/blog/context\n\n" +
				"[3] Image result without snippet\nhttps://example.com/images"},
			[]string{"net/http", "Fifth result", "[4]"}},
	}
	for _, tc := range cases {
		t.Run(tc.fixture, func(t *testing.T) {
			out, err := search(t, page{http.StatusOK, fixture(t, tc.fixture)}, "anything")
			require.NoError(t, err)
			for _, w := range tc.want {
				assert.Contains(t, out, w)
			}
			for _, n := range tc.not {
				assert.NotContains(t, out, n)
			}
		})
	}
}

// TestAnswerOrder removes the winning part of a page one at a time: the
// answer box wins over sports results, those over the knowledge graph,
// that over the organic results.
func TestAnswerOrder(t *testing.T) {
	parts := []struct {
		key, value, shows string
	}{
		{"answer_box", `{"type": "organic_result", "answer": "Canberra", "title": "Capital"}`, "Answer: Canberra"},
		{"sports_results", `{"title": "Team", "games": [{"tournament": "Cup", "teams": [{"name": "A", "score": 3}, {"name": "B", "score": 0}]}]}`, "A 3 vs B 0 (Cup)"},
		{"knowledge_graph", `{"title": "Canberra", "type": "Capital of Australia", "description": "Canberra is the capital city of Australia."}`, "Canberra is the capital city"},
		{"organic_results", `[{"title": "Canberra - Wikipedia", "link": "https://en.wikipedia.org/wiki/Canberra", "snippet": "Capital city."}]`, "[1] Canberra - Wikipedia"},
	}
	for i := range parts {
		fields := make([]string, 0, len(parts))
		for _, p := range parts[i:] {
			fields = append(fields, fmt.Sprintf("%q: %s", p.key, p.value))
		}
		body := "{" + strings.Join(fields, ", ") + "}"
		out, err := search(t, page{http.StatusOK, body}, "capital of Australia")
		require.NoError(t, err, parts[i].key)
		assert.Contains(t, out, parts[i].shows, parts[i].key)
		for _, later := range parts[i+1:] {
			assert.NotContains(t, out, later.shows, "%s should win over %s", parts[i].key, later.key)
		}
	}
}

func TestEmptyPartsFallThrough(t *testing.T) {
	body := `{"answer_box": {"type": "organic_result", "title": "Only a title"},
		"sports_results": {"title": "No games"},
		"knowledge_graph": {"title": "Only a title"},
		"organic_results": [{"position": 1, "link": "https://example.com/no-title"}, {"title": "Kept", "link": "https://example.com/kept"}]}`
	out, err := search(t, page{http.StatusOK, body}, "q")
	require.NoError(t, err)
	assert.Equal(t, "Google results:\n[1] Kept\nhttps://example.com/kept", out)
}

func TestNoResultsIsAnObservation(t *testing.T) {
	for name, body := range map[string]string{
		"error":       fixture(t, "no_results.json"),
		"empty page":  `{"search_metadata": {"status": "Success"}}`,
		"wrong types": `{"answer_box": "text", "knowledge_graph": [1], "organic_results": {"a": 1}}`,
	} {
		t.Run(name, func(t *testing.T) {
			out, err := search(t, page{http.StatusOK, body}, "xqzvbnmwplkjh asdfgqwer")
			require.NoError(t, err)
			assert.Equal(t, `Google found no results for "xqzvbnmwplkjh asdfgqwer". Try other or fewer words.`, out)
		})
	}
}

func TestRequestCarriesQueryEngineKeyAndSettings(t *testing.T) {
	f := newFake(t, page{http.StatusOK, fixture(t, "organic.json")})
	cfg := config(f.srv)
	cfg.Location, cfg.Language, cfg.Country = "Austin, Texas, United States", "de", "at"
	cfg.BaseURL += "?no_cache=true"
	_, err := newTool(t, cfg).Call(context.Background(), `  "capital of Australia" `)
	require.NoError(t, err)
	plain := newTool(t, config(f.srv))
	_, err = plain.Call(context.Background(), `{"query": "Kepler's laws"}`)
	require.NoError(t, err)

	reqs := f.requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, http.MethodGet, reqs[0].Method)
	assert.Equal(t, "/search.json", reqs[0].URL.Path)
	q := reqs[0].URL.Query()
	assert.Equal(t, "capital of Australia", q.Get("q"))
	assert.Equal(t, "google", q.Get("engine"))
	assert.Equal(t, testKey, q.Get("api_key"))
	assert.Equal(t, "Austin, Texas, United States", q.Get("location"))
	assert.Equal(t, "de", q.Get("hl"))
	assert.Equal(t, "at", q.Get("gl"))
	assert.Equal(t, "true", q.Get("no_cache"))

	q = reqs[1].URL.Query()
	assert.Equal(t, "Kepler's laws", q.Get("q"))
	assert.Equal(t, "google", q.Get("engine"))
	assert.Equal(t, testKey, q.Get("api_key"))
	for _, k := range []string{"location", "hl", "gl", "num"} {
		assert.False(t, q.Has(k), "%s sent without a setting", k)
	}
}

func TestSerpApiErrorsMapToSentinels(t *testing.T) {
	cases := []struct {
		name   string
		p      page
		want   error
		substr string
	}{
		{"bad key 401", page{401, fixture(t, "invalid_key.json")}, serpapi.ErrInvalidKey, "check the key in SERPAPI_API_KEY"},
		{"key echoed 401", page{401, `{"error": "Invalid API key ` + testKey + `"}`}, serpapi.ErrInvalidKey, "Invalid API key [REDACTED]"},
		{"forbidden 403", page{403, `{"error": "This account has been deleted."}`}, serpapi.ErrInvalidKey, "HTTP 403: This account has been deleted."},
		{"run out 429", page{429, fixture(t, "quota.json")}, serpapi.ErrQuota, "Your account has run out of searches."},
		{"month 429", page{429, `{"error": "Your searches for the month are exhausted. You can upgrade plans on SerpApi.com website."}`}, serpapi.ErrQuota, "upgrade the plan"},
		{"run out 200", page{200, fixture(t, "quota.json")}, serpapi.ErrQuota, "HTTP 200"},
		{"server 500", page{500, `{"error": "Internal server error."}`}, serpapi.ErrServer, "try again later"},
		{"gateway 502 html", page{502, "<html><body>Bad gateway</body></html>"}, serpapi.ErrServer, "HTTP 502: Bad Gateway"},
		{"missing q 400", page{400, "{\"error\": \"Missing query `q` parameter.\"}"}, serpapi.ErrAPI, "HTTP 400: Missing query `q` parameter."},
		{"other error 200", page{200, "{\"error\": \"Unsupported `Nowhere` location - location parameter.\"}"}, serpapi.ErrAPI, "Unsupported `Nowhere` location"},
		{"html 200", page{200, "<!DOCTYPE html><html><body>Hi</body></html>"}, serpapi.ErrBadResponse, "not a JSON object"},
		{"cut json 200", page{200, `{"organic_results": [{"title": "x"`}, serpapi.ErrBadResponse, "not a JSON object"},
		{"array 200", page{200, `[1, 2]`}, serpapi.ErrBadResponse, "not a JSON object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := search(t, tc.p, "q")
			require.ErrorIs(t, err, tc.want)
			assert.Empty(t, out)
			assert.Contains(t, err.Error(), tc.substr)
			assertNoKey(t, err.Error())
			assertNoKey(t, fmt.Sprintf("%+v %#v", err, err))
		})
	}
}

func TestTransportErrorsHideTheKey(t *testing.T) {
	f := newFake(t, page{http.StatusOK, "{}"})
	tool := newTool(t, config(f.srv))
	f.srv.Close()
	_, err := tool.Call(context.Background(), "q")
	require.ErrorIs(t, err, serpapi.ErrRequest)
	var ue *url.Error
	assert.False(t, errors.As(err, &ue), "the *url.Error, which holds the URL, is dropped")
	assertNoKey(t, err.Error())
	assertNoKey(t, fmt.Sprintf("%+v %#v", err, err))
}

// slowServer answers after the request's context ends; with body it
// sends the headers and the start of a page first.
func slowServer(t *testing.T, body bool) *httptest.Server {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if body {
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte(`{"organic_results": [`))
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	return srv
}

func TestSlowServerTimesOut(t *testing.T) {
	for _, body := range []bool{false, true} {
		t.Run(fmt.Sprintf("body started %v", body), func(t *testing.T) {
			srv := slowServer(t, body)
			cfg := config(srv)
			cfg.Timeout = 50 * time.Millisecond
			start := time.Now()
			_, err := newTool(t, cfg).Call(context.Background(), "q")
			require.ErrorIs(t, err, serpapi.ErrTimeout)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Less(t, time.Since(start), 5*time.Second)
			assert.Contains(t, err.Error(), "after 50ms")
			assertNoKey(t, err.Error())
		})
	}
}

func TestCallerCancellationStopsTheSearch(t *testing.T) {
	srv := slowServer(t, false)
	ctx, cancel := context.WithCancel(context.Background())
	timer := time.AfterFunc(20*time.Millisecond, cancel)
	t.Cleanup(func() { timer.Stop(); cancel() })
	_, err := newTool(t, config(srv)).Call(ctx, "q")
	require.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, serpapi.ErrTimeout)
	assertNoKey(t, err.Error())
}

func TestCallerDeadlineIsATimeout(t *testing.T) {
	srv := slowServer(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	t.Cleanup(cancel)
	_, err := newTool(t, config(srv)).Call(ctx, "q")
	require.ErrorIs(t, err, serpapi.ErrTimeout)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "the caller's deadline passed")
	assertNoKey(t, err.Error())
}

func TestOversizedResponseIsRefused(t *testing.T) {
	out, err := search(t, page{http.StatusOK, `{"x": "` + strings.Repeat("a", serpapi.MaxResponseBytes) + `"}`}, "q")
	require.ErrorIs(t, err, serpapi.ErrBadResponse)
	assert.Empty(t, out)
	assert.Contains(t, err.Error(), "larger than")
}

func TestObservationIsScrubbedCountedAndClipped(t *testing.T) {
	body := `{"organic_results": [
		{"title": "Leaky page", "link": "https://example.com/?api_key=` + url.QueryEscape(testKey) + `", "snippet": "the key is ` + testKey + `"},
		{"title": "Second", "link": "https://example.com/2", "snippet": "two"}]}`
	f := newFake(t, page{http.StatusOK, body})
	cfg := config(f.srv)
	cfg.Results = 1
	out, err := newTool(t, cfg).Call(context.Background(), "q")
	require.NoError(t, err)
	assert.NotContains(t, out, testKey)
	assert.NotContains(t, out, url.QueryEscape(testKey))
	assert.Contains(t, out, "the key is [REDACTED]")
	assert.NotContains(t, out, "Second")

	cfg.MaxChars = 30
	out, err = newTool(t, cfg).Call(context.Background(), "q")
	require.NoError(t, err)
	assert.Equal(t, 31, utf8.RuneCountInString(out))
	assert.True(t, strings.HasSuffix(out, "…"), out)
}

func TestBadInputIsRefusedWithoutASearch(t *testing.T) {
	f := newFake(t, page{http.StatusOK, fixture(t, "organic.json")})
	tool := newTool(t, config(f.srv))
	for _, in := range []string{"", "   ", `""`, `{"query": ""}`, `{"query": `, `{"query": 3}`, strings.Repeat("a", serpapi.MaxQueryLength+1)} {
		_, err := tool.Call(context.Background(), in)
		require.ErrorIs(t, err, tools.ErrBadInput, "%.20q", in)
	}
	assert.Empty(t, f.requests())
}

func TestNewRefusesBadSettings(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	cases := []struct {
		key string
		mod func(*serpapi.Config)
	}{
		{"num", func(c *serpapi.Config) { c.Results = serpapi.MaxResults + 1 }},
		{"num", func(c *serpapi.Config) { c.Results = -1 }},
		{"timeout", func(c *serpapi.Config) { c.Timeout = -time.Second }},
		{"max_chars", func(c *serpapi.Config) { c.MaxChars = -1 }},
		{"base_url", func(c *serpapi.Config) { c.BaseURL = "ftp://serpapi.com/search" }},
		{"base_url", func(c *serpapi.Config) { c.BaseURL = "serpapi.com/search" }},
		{"base_url", func(c *serpapi.Config) { c.BaseURL = "https://user:pw@serpapi.com/search" }},
		{"api_key_env", func(c *serpapi.Config) { c.APIKey = "  " }},
	}
	for _, tc := range cases {
		cfg := config(srv)
		tc.mod(&cfg)
		_, err := serpapi.New(cfg)
		want := serpapi.ErrConfig
		if tc.key == "api_key_env" {
			want = serpapi.ErrMissingKey
		}
		require.ErrorIs(t, err, want, tc.key)
		var ce *serpapi.ConfigError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, tc.key, ce.Key)
	}
}

func TestKeyComesFromTheEnvironment(t *testing.T) {
	f := newFake(t, page{http.StatusOK, fixture(t, "organic.json")})
	env := map[string]string{"MY_SERP_KEY": " env-key-1234567890 "}
	lookup := func(name string) (string, bool) { v, ok := env[name]; return v, ok }

	cfg := config(f.srv)
	cfg.APIKey, cfg.LookupEnv = "", lookup
	_, err := serpapi.New(cfg)
	require.ErrorIs(t, err, serpapi.ErrMissingKey)
	var ce *serpapi.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "api_key_env", ce.Key)
	assert.Contains(t, err.Error(), "set the environment variable SERPAPI_API_KEY")

	cfg.APIKeyEnv = "MY_SERP_KEY"
	tool := newTool(t, cfg)
	_, err = tool.Call(context.Background(), "q")
	require.NoError(t, err)
	require.Len(t, f.requests(), 1)
	assert.Equal(t, "env-key-1234567890", f.requests()[0].URL.Query().Get("api_key"))
}

func TestToolDescribesItselfWithoutItsKey(t *testing.T) {
	f := newFake(t, page{http.StatusOK, "{}"})
	tool := newTool(t, config(f.srv))
	assert.Equal(t, "serpapi", tool.Name())
	assert.Equal(t, tools.Meta{ReadOnly: true, Network: true, Timeout: serpapi.DefaultTimeout}, tool.Meta())
	assert.Contains(t, tool.Description(), "top 3 results")
	assert.Equal(t, tools.CleanDescription(tool.Description()), tool.Description())
	schema, err := json.Marshal(tool.Schema())
	require.NoError(t, err)
	assert.Contains(t, string(schema), `"required":["query"]`)
	printed := fmt.Sprintf("%v %+v %#v %s", tool, tool, tool, tool)
	assertNoKey(t, printed)
	assert.Contains(t, printed, "SERPAPI_API_KEY")

	cfg := config(f.srv)
	cfg.Results = 5
	assert.Contains(t, newTool(t, cfg).Description(), "top 5 results")
}
