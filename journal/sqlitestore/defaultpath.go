package sqlitestore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrNoHome is returned by DefaultPath when no variable names a store and
// there is no home directory to put the default one in.
var ErrNoHome = errors.New("sqlitestore: no home directory for the default thread store")

// DefaultPath is the thread store the command line and the server use
// when none is given: $PLANNER_STORE, else
// $XDG_STATE_HOME/planner/threads.db (an absolute XDG_STATE_HOME only),
// else $HOME/.local/state/planner/threads.db. getenv reads the variables
// (os.Getenv, or a test's own); an empty value counts as unset, and
// without HOME the home directory is os.UserHomeDir's.
func DefaultPath(getenv func(string) string) (string, error) {
	if p := getenv("PLANNER_STORE"); p != "" {
		return p, nil
	}
	if dir := getenv("XDG_STATE_HOME"); dir != "" && filepath.IsAbs(dir) {
		return filepath.Join(dir, "planner", "threads.db"), nil
	}
	home := getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("%w (give a store path, or set PLANNER_STORE or XDG_STATE_HOME): %w", ErrNoHome, err)
		}
	}
	return filepath.Join(home, ".local", "state", "planner", "threads.db"), nil
}
