package builtin

import (
	"context"
	"errors"
	"fmt"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/httpfetch"
)

// buildHTTPFetch builds the http_fetch tool from its settings, the keys of
// httpfetch.Config: allow_hosts (default: any public host), allow_post
// (default false; true makes each call need approval), max_bytes (2 MiB),
// max_chars (20000), timeout (20s), max_redirects (5; negative: none),
// max_url_length (2048), user_agent (UserAgent) and links (false). No
// setting lifts the tool's address checks.
func buildHTTPFetch(_ context.Context, settings map[string]any, _ string) ([]tools.Tool, error) {
	var cfg httpfetch.Config
	if err := config.Decode(settings, &cfg); err != nil {
		return nil, err
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = UserAgent
	}
	t, err := httpfetch.New(cfg)
	if err != nil {
		var ce *httpfetch.ConfigError
		if errors.As(err, &ce) {
			return nil, &config.SettingError{Key: ce.Key, Err: fmt.Errorf("%w: %w", config.ErrSettings, ce.Err)}
		}
		return nil, err
	}
	return []tools.Tool{t}, nil
}
