package sqlitestore

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// DefaultPath takes PLANNER_STORE first, then an absolute XDG_STATE_HOME,
// then HOME; empty and relative values are passed over.
func TestDefaultPath(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	state := filepath.Join(t.TempDir(), "state")
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"store variable", map[string]string{"PLANNER_STORE": "runs.db", "XDG_STATE_HOME": state, "HOME": home}, "runs.db"},
		{"state home", map[string]string{"PLANNER_STORE": "", "XDG_STATE_HOME": state, "HOME": home}, filepath.Join(state, "planner", "threads.db")},
		{"relative state home", map[string]string{"XDG_STATE_HOME": "rel", "HOME": home}, filepath.Join(home, ".local", "state", "planner", "threads.db")},
		{"home", map[string]string{"HOME": home}, filepath.Join(home, ".local", "state", "planner", "threads.db")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DefaultPath(func(k string) string { return tc.env[k] })
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// Without any variable and without a home directory, DefaultPath says
// what to set.
func TestDefaultPathNoHome(t *testing.T) {
	t.Setenv("HOME", "")
	_, err := DefaultPath(func(string) string { return "" })
	require.ErrorIs(t, err, ErrNoHome)
	assert.Contains(t, err.Error(), "PLANNER_STORE")
}
