package files

import (
	"context"
	"os"
	"slices"
	"strings"
	"time"
)

// walkEnd says why a walk stopped before visiting everything.
type walkEnd int

const (
	walkDone walkEnd = iota
	// walkStopped means visit asked to stop.
	walkStopped
	// walkScanLimit means MaxScan entries were visited.
	walkScanLimit
	// walkTimeLimit means the soft deadline passed.
	walkTimeLimit
)

// note describes an early end for the model, or "" for none.
func (w walkEnd) note() string {
	switch w {
	case walkScanLimit:
		return "the walk stopped after visiting " + itoa(MaxScan) + " entries; narrow the path"
	case walkTimeLimit:
		return "the walk stopped at the time limit; narrow the path"
	}
	return ""
}

// walker walks a folder tree of the root.
type walker struct {
	root       *os.Root
	maxDepth   int
	includeGit bool
	deadline   time.Time
	scanned    int
	// unreadable counts folders that could not be read.
	unreadable int
}

// walk visits the entries under the folder dir (a cleaned relative path),
// depth-first in name order, down to maxDepth levels (1 visits dir's own
// entries). It does not enter folders reached through symbolic links
// (links are visited as entries), nor ".git" unless includeGit. visit
// returns false to stop the walk.
func (w *walker) walk(ctx context.Context, dir string, depth int, visit func(entry) bool) (walkEnd, error) {
	if err := ctx.Err(); err != nil {
		return walkDone, err
	}
	d, err := w.root.Open(dir)
	if err != nil {
		w.unreadable++
		return walkDone, nil
	}
	ents, err := d.ReadDir(-1)
	_ = d.Close()
	if err != nil && len(ents) == 0 {
		w.unreadable++
		return walkDone, nil
	}
	slices.SortFunc(ents, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, de := range ents {
		if de.Name() == ".git" && !w.includeGit {
			continue
		}
		if w.scanned >= MaxScan {
			return walkScanLimit, nil
		}
		w.scanned++
		if err := ctx.Err(); err != nil {
			return walkDone, err
		}
		if time.Now().After(w.deadline) {
			return walkTimeLimit, nil
		}
		e := statEntry(w.root, dir, de, depth)
		if !visit(e) {
			return walkStopped, nil
		}
		if e.kind == kindDir && !e.link && depth < w.maxDepth {
			end, err := w.walk(ctx, e.rel, depth+1, visit)
			if err != nil || end != walkDone {
				return end, err
			}
		}
	}
	return walkDone, nil
}
