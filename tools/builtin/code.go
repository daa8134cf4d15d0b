package builtin

import (
	"context"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/code"
)

// buildCode builds the code tool, a hermetic Starlark (Python-like)
// interpreter, from the keys of code.Config: max_steps (10,000,000),
// timeout (5s), max_output (16384 bytes), max_source (65536 bytes),
// max_depth (1000), max_value_size (16 MiB, in bytes) and max_memory
// (256 MiB, in bytes). Leaving a key out, or 0, takes its default; a
// negative value, or a timeout under a millisecond (a number without a
// unit is nanoseconds), is an error.
func buildCode(_ context.Context, settings map[string]any, _ string) ([]tools.Tool, error) {
	var cfg code.Config
	if err := config.Decode(settings, &cfg); err != nil {
		return nil, err
	}
	for _, l := range []struct {
		key string
		n   int64
	}{
		{"max_depth", int64(cfg.MaxDepth)},
		{"max_memory", cfg.MaxMemory},
		{"max_output", int64(cfg.MaxOutput)},
		{"max_source", int64(cfg.MaxSource)},
		{"max_value_size", int64(cfg.MaxValueSize)},
		{"timeout", int64(cfg.Timeout)},
	} {
		if l.n < 0 {
			return nil, config.SettingErrorf(l.key, "%s must not be negative (0 or leaving it out takes the default)", l.key)
		}
	}
	if cfg.Timeout > 0 && cfg.Timeout < time.Millisecond {
		return nil, config.SettingErrorf("timeout", "timeout %s is too short; write a duration with a unit, such as 5s", cfg.Timeout)
	}
	return []tools.Tool{code.New(cfg)}, nil
}
