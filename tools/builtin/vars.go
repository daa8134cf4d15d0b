package builtin

import (
	"context"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/vars"
)

// buildVars builds the vars tool (the run's working memory); it takes no
// settings.
func buildVars(_ context.Context, settings map[string]any, _ string) ([]tools.Tool, error) {
	if err := config.Decode(settings, &struct{}{}); err != nil {
		return nil, err
	}
	return []tools.Tool{vars.New()}, nil
}
