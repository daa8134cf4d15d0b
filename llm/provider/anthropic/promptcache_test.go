package anthropic

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMarkCacheBreakpointsLeavesWhatItCannotMarkAlone(t *testing.T) {
	for _, body := range []string{
		`not json`,
		`{"model":"m","messages":[]}`,
		`{"model":"m","system":"` + strings.Repeat("x", 5000) + `","messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}]}`,
	} {
		_, ok := markCacheBreakpoints([]byte(body), 4096)
		assert.False(t, ok, body[:min(len(body), 40)])
	}
	// A string content and a thinking block.
	body := `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("q", 5000) + `"},` +
		`{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"s"}]},{"role":"user","content":"more"}]}`
	out, ok := markCacheBreakpoints([]byte(body), 4096)
	require.True(t, ok)
	var req struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(out, &req))
	assert.JSONEq(t, `[{"type":"text","text":"`+strings.Repeat("q", 5000)+`","cache_control":{"type":"ephemeral"}}]`, string(req.Messages[0].Content))
	assert.JSONEq(t, `[{"type":"thinking","thinking":"hmm","signature":"s"}]`, string(req.Messages[1].Content))
	assert.JSONEq(t, `[{"type":"text","text":"more","cache_control":{"type":"ephemeral"}}]`, string(req.Messages[2].Content))
}
