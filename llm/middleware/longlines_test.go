package middleware

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

func TestStringCapperCutsStringsAtCharacterAndEscapeBoundaries(t *testing.T) {
	long := strings.Repeat("a\"b\\c\nd\u00e9\u65e5\U0001F680\x01<", 100)
	in, err := json.Marshal(map[string]any{"short": "ok", "long": long, "n": 12, "list": []any{long, "x"}})
	require.NoError(t, err)
	for _, max := range []int{5, 7, 10, 33, 100, 1000} { // keys are strings too: at least their length
		for _, step := range []int{1, 3, 7, 4096} {
			c := stringCapper{max: max}
			var out []byte
			for i := 0; i < len(in); i += step {
				out = c.append(out, in[i:min(i+step, len(in))])
			}
			var got struct {
				Short, Long string
				N           int
				List        []string
			}
			require.NoError(t, json.Unmarshal(out, &got), "max %d step %d: %s", max, step, out)
			assert.Equal(t, "ok", got.Short)
			assert.Equal(t, 12, got.N)
			for _, s := range []string{got.Long, got.List[0]} {
				assert.True(t, strings.HasPrefix(long, s), "a prefix of the string")
				assert.LessOrEqual(t, len(s), max)
				assert.Greater(t, len(s), max-4, "cut at most a character early")
			}
			assert.Equal(t, "x", got.List[1])
		}
	}
}

// sseServer is a round tripper that answers with body as an SSE stream.
type sseServer struct {
	status      int
	contentType string
	body        string
	ctx         context.Context
}

func (s *sseServer) RoundTrip(req *http.Request) (*http.Response, error) {
	s.ctx = req.Context()
	return &http.Response{StatusCode: s.status, Header: http.Header{"Content-Type": {s.contentType}},
		Body: io.NopCloser(strings.NewReader(s.body)), ContentLength: int64(len(s.body)), Request: req}, nil
}

// halves splits an event in two: its "text" in halves.
func halves(event []byte, _ int) [][]byte {
	var m map[string]string
	if json.Unmarshal(event, &m) != nil {
		return nil
	}
	t := m["text"]
	a, _ := json.Marshal(map[string]string{"type": m["type"], "text": t[:len(t)/2]})
	b, _ := json.Marshal(map[string]string{"type": m["type"], "text": t[len(t)/2:]})
	return [][]byte{a, b}
}

func readAll(t *testing.T, rt http.RoundTripper, ctx context.Context) string {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://model.test/v1/chat", nil)
	require.NoError(t, err)
	resp, err := rt.RoundTrip(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

func TestLongLineTransportSplitsOnlyLongDataLines(t *testing.T) {
	long := strings.Repeat("x", LongStreamLine)
	body := ": comment\n\nevent: delta\ndata: {\"type\":\"d\",\"text\":\"short\"}\n\n" +
		"event: delta\ndata: {\"type\":\"d\",\"text\":\"" + long + "\"}\n\n" +
		"data: [DONE]\n"
	srv := &sseServer{status: 200, contentType: "text/event-stream; charset=utf-8", body: body}
	got := readAll(t, &LongLineTransport{Base: srv, Split: halves}, context.Background())
	half := long[:len(long)/2]
	assert.Equal(t, ": comment\n\nevent: delta\ndata: {\"type\":\"d\",\"text\":\"short\"}\n\n"+
		"event: delta\ndata: {\"text\":\""+half+"\",\"type\":\"d\"}\n\nevent: delta\ndata: {\"text\":\""+half+"\",\"type\":\"d\"}\n\n"+
		"data: [DONE]\n", got)

	// Not an event stream, or not a success: untouched.
	for _, s := range []*sseServer{
		{status: 200, contentType: "application/json", body: body},
		{status: 500, contentType: "text/event-stream", body: body},
	} {
		assert.Equal(t, body, readAll(t, &LongLineTransport{Base: s, Split: halves}, context.Background()))
	}
	// A line Split cannot rewrite passes on.
	odd := "data: not json " + long + "\n\n"
	assert.Equal(t, odd, readAll(t, &LongLineTransport{Base: &sseServer{status: 200, contentType: "text/event-stream", body: odd}, Split: halves}, context.Background()))
}

func TestLongLineTransportCutsStringsToTheReplyLimit(t *testing.T) {
	big := strings.Repeat("é", 200_000)
	body := "data: {\"text\":\"" + big + "\"}\n\n"
	srv := &sseServer{status: 200, contentType: "text/event-stream", body: body}
	var seen string
	next := GenerateFunc(func(ctx context.Context, _ []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
		seen = readAll(t, &LongLineTransport{Base: srv, Split: func(ev []byte, _ int) [][]byte { return [][]byte{ev} }}, ctx)
		return nil, nil
	})
	text := func() string {
		var ev struct{ Text string }
		require.NoError(t, json.Unmarshal(bytes.TrimSpace(bytes.TrimPrefix([]byte(seen), []byte("data:"))), &ev))
		return ev.Text
	}
	_, _ = NewReplyLimit(20001)(Wrap(nil, next)).GenerateContent(context.Background(), nil)
	assert.Equal(t, strings.Repeat("é", 10001), text(), "the limit plus one byte, whole characters")
	_, _ = NewReplyLimit(10)(Wrap(nil, next)).GenerateContent(context.Background(), nil)
	assert.Equal(t, strings.Repeat("é", minStreamedString/2), text(), "never less than minStreamedString: keys are strings too")

	got := readAll(t, &LongLineTransport{Base: srv}, context.Background())
	assert.Equal(t, body, got, "without a reply limit, strings up to DefaultMaxStreamedString pass")
}
