package nodes

import (
	"fmt"

	"github.com/planner-engine/planner/config"
)

// count is a count setting of a node: 0 (unset) takes def, a negative
// value is an error naming key.
type count struct {
	key string
	v   *int
	def int
}

// applyCounts fills in the defaults of counts and rejects negative ones.
func applyCounts(counts ...count) error {
	for _, c := range counts {
		if *c.v < 0 {
			return &config.SettingError{Key: c.key, Err: fmt.Errorf("%w: %s must be positive, got %d", config.ErrSettings, c.key, *c.v)}
		}
		if *c.v == 0 {
			*c.v = c.def
		}
	}
	return nil
}
