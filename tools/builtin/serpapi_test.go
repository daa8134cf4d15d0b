package builtin_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/builtin"
	"github.com/planner-engine/planner/tools/serpapi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSerpAPIWithoutAKeySaysWhichVariableToSet(t *testing.T) {
	t.Setenv("SERPAPI_API_KEY", "")
	_, err := builtin.Factory{}.Tools(context.Background(), config.Tool{Name: "serpapi"}, "")
	require.ErrorIs(t, err, builtin.ErrMissingSetting)
	require.ErrorIs(t, err, serpapi.ErrMissingKey)
	require.ErrorIs(t, err, config.ErrSettings)
	var se *config.SettingError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "api_key_env", se.Key)
	assert.Contains(t, err.Error(), "set the environment variable SERPAPI_API_KEY")
}

func TestSerpAPISettingsAreChecked(t *testing.T) {
	t.Setenv("SERPAPI_API_KEY", "a-serpapi-key-for-tests")
	for key, val := range map[string]any{
		"num":      11,
		"timeout":  "-1s",
		"base_url": "ftp://serpapi.com",
		"api_key":  "keys are never written in a pipeline",
	} {
		_, err := builtin.Factory{}.Tools(context.Background(), config.Tool{Name: "serpapi", Settings: map[string]any{key: val}}, "")
		require.ErrorIs(t, err, config.ErrSettings, key)
		assert.NotErrorIs(t, err, builtin.ErrMissingSetting, key)
		var se *config.SettingError
		require.ErrorAs(t, err, &se, key)
		assert.Equal(t, key, se.Key)
	}
}

func TestSerpAPIBuiltFromSettingsSearches(t *testing.T) {
	var mu sync.Mutex
	var got http.Header
	var query map[string][]string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got, query = r.Header.Clone(), r.URL.Query()
		mu.Unlock()
		_, _ = w.Write([]byte(`{"answer_box": {"type": "organic_result", "answer": "Canberra"}}`))
	}))
	t.Cleanup(srv.Close)
	t.Setenv("MY_SERPAPI_KEY", "key-from-my-variable")
	ts, err := builtin.Factory{}.Tools(context.Background(), config.Tool{Name: "serpapi", Settings: map[string]any{
		"api_key_env": "MY_SERPAPI_KEY", "base_url": srv.URL, "num": 5, "hl": "en", "gl": "au", "timeout": "5s",
	}}, "")
	require.NoError(t, err)
	require.Len(t, ts, 1)
	reg, err := tools.NewRegistry(ts)
	require.NoError(t, err)
	out, err := reg.Call(context.Background(), "serpapi", "capital of Australia")
	require.NoError(t, err)
	assert.Equal(t, "Google answer box:\nAnswer: Canberra", out)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, "application/json", got.Get("Accept"))
	assert.Equal(t, []string{"key-from-my-variable"}, query["api_key"])
	assert.Equal(t, []string{"au"}, query["gl"])
	assert.Equal(t, []string{"en"}, query["hl"])
	assert.Contains(t, ts[0].Description(), "top 5 results")
	assert.Equal(t, "5s", tools.MetaOf(ts[0]).Timeout.String())
}
