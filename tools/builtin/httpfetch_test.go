package builtin

import (
	"context"
	"testing"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/httpfetch"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBuildHTTPFetchDecodesSettings(t *testing.T) {
	ts, err := buildHTTPFetch(context.Background(), map[string]any{
		"allow_hosts":   "example.com,*.wikipedia.org",
		"max_bytes":     "4096",
		"max_chars":     5000,
		"timeout":       "7s",
		"max_redirects": 2,
		"links":         true,
	}, "")
	require.NoError(t, err)
	require.Len(t, ts, 1)
	tool := ts[0].(*httpfetch.Tool)
	assert.Equal(t, "http_fetch", tool.Name())
	assert.Equal(t, httpfetch.Config{
		AllowHosts: []string{"example.com", "*.wikipedia.org"}, MaxBytes: 4096, MaxChars: 5000, Timeout: 7 * time.Second,
		MaxRedirects: 2, MaxURLLength: httpfetch.DefaultMaxURLLength, UserAgent: UserAgent, Links: true,
	}, tool.Config())
	assert.Equal(t, tools.Meta{ReadOnly: true, Network: true, Timeout: 7 * time.Second}, tools.MetaOf(tool))
	d := tool.Description()
	assert.Equal(t, tools.CleanDescription(d), d)
	assert.NotRegexp(t, `^"|"$|[\t\n]|  `, d)
}

func TestBuildHTTPFetchDefaultsAndPost(t *testing.T) {
	ts, err := buildHTTPFetch(context.Background(), nil, "")
	require.NoError(t, err)
	cfg := ts[0].(*httpfetch.Tool).Config()
	assert.Equal(t, UserAgent, cfg.UserAgent)
	assert.EqualValues(t, httpfetch.DefaultMaxBytes, cfg.MaxBytes)
	assert.Equal(t, httpfetch.DefaultTimeout, cfg.Timeout)
	assert.False(t, tools.MetaOf(ts[0]).NeedsApproval)

	ts, err = buildHTTPFetch(context.Background(), map[string]any{"allow_post": true, "user_agent": "my-bot/2"}, "")
	require.NoError(t, err)
	meta := tools.MetaOf(ts[0])
	assert.True(t, meta.NeedsApproval, "a tool that may POST needs a human's approval")
	assert.False(t, meta.ReadOnly)
	assert.Equal(t, "my-bot/2", ts[0].(*httpfetch.Tool).Config().UserAgent)
}

func TestBuildHTTPFetchRejectsBadSettings(t *testing.T) {
	for key, settings := range map[string]map[string]any{
		"max_byte":       {"max_byte": 10},                    // unknown key
		"allow_loopback": {"allow_loopback": true},            // the test-only hatch is not a setting
		"max_bytes":      {"max_bytes": -1},                   // out of range
		"timeout":        {"timeout": "soon"},                 // not a duration
		"max_redirects":  {"max_redirects": 50},               // over the limit
		"allow_hosts":    {"allow_hosts": []any{"localhost"}}, // never fetchable
	} {
		_, err := buildHTTPFetch(context.Background(), settings, "")
		require.ErrorIs(t, err, config.ErrSettings, key)
		var se *config.SettingError
		require.ErrorAs(t, err, &se, key)
		assert.Equal(t, key, se.Key)
	}
}

func TestBuiltHTTPFetchRefusesLocalAddresses(t *testing.T) {
	ts, err := buildHTTPFetch(context.Background(), nil, "")
	require.NoError(t, err)
	for _, u := range []string{"http://127.0.0.1/", "http://localhost:8080/", "http://169.254.169.254/latest/meta-data/", "file:///etc/passwd"} {
		_, err := ts[0].Call(context.Background(), u)
		require.ErrorIs(t, err, tools.ErrBadInput, u)
	}
}
