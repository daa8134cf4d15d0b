package builtin

import (
	"context"
	"errors"
	"fmt"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/serpapi"
)

// buildSerpAPI builds the serpapi tool (Google search through SerpApi)
// from its settings, the keys of serpapi.Config: api_key_env (default
// SERPAPI_API_KEY; the key itself is never written in a pipeline),
// location, hl and gl (default: SerpApi's), num (organic results shown,
// 1 to 10, default 3), timeout (15s), max_chars (4000) and base_url
// (SerpApi's endpoint). Without a key in the environment it fails with
// ErrMissingSetting, keyed api_key_env, so a listing of every built-in
// skips it.
func buildSerpAPI(_ context.Context, settings map[string]any, _ string) ([]tools.Tool, error) {
	var cfg serpapi.Config
	if err := config.Decode(settings, &cfg); err != nil {
		return nil, err
	}
	t, err := serpapi.New(cfg)
	if err != nil {
		var ce *serpapi.ConfigError
		if !errors.As(err, &ce) {
			return nil, err
		}
		if errors.Is(err, serpapi.ErrMissingKey) {
			return nil, &config.SettingError{Key: ce.Key, Err: fmt.Errorf("%w: %w: %w", config.ErrSettings, ErrMissingSetting, ce.Err)}
		}
		return nil, &config.SettingError{Key: ce.Key, Err: fmt.Errorf("%w: %w", config.ErrSettings, ce.Err)}
	}
	return []tools.Tool{t}, nil
}
