package nodes

import (
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestApplyCountsFillsDefaultsAndRejectsNegatives(t *testing.T) {
	a, b := 0, 4
	require.NoError(t, applyCounts(count{"a", &a, 3}, count{"b", &b, 9}))
	assert.Equal(t, 3, a, "0 takes the default")
	assert.Equal(t, 4, b, "a set value stays")

	c, d := 0, -2
	err := applyCounts(count{"c", &c, 1}, count{"depth", &d, 3})
	require.ErrorIs(t, err, config.ErrSettings)
	var se *config.SettingError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "depth", se.Key)
	assert.EqualError(t, err, `setting "depth": invalid settings: depth must be positive, got -2`)
}
