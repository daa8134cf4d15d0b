package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/tools/search"
)

// errPathRefused marks a path of a posted pipeline that the server will
// not read.
var errPathRefused = errors.New("path refused")

// within reports whether p is root or lies under it (both cleaned,
// absolute, symbolic links resolved).
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && filepath.IsLocal(rel)
}

// resolve returns p with its symbolic links resolved, and whether it
// exists. Of a path that does not exist, the longest part that does is
// resolved and the rest appended. ok is false when a part of p exists but
// cannot be resolved (a link to nothing, a loop of links, a folder it may
// not read): where such a link leads is unknown, so the path is refused.
func resolve(p string) (resolved string, exists, ok bool) {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r, true, true
	}
	rest := ""
	for dir := p; ; {
		if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return p, false, false // there, but not resolvable
		}
		parent := filepath.Dir(dir)
		rest = filepath.Join(filepath.Base(dir), rest)
		if parent == dir {
			return p, false, false
		}
		if r, err := filepath.EvalSymlinks(parent); err == nil {
			return filepath.Join(r, rest), false, true
		}
		dir = parent
	}
}

// confiner checks and rewrites the paths of a posted pipeline
// (config.Pipeline.MapPaths) before it is built:
//
//   - every path must resolve, symbolic links followed, under the
//     server's root; any other is refused with the same message whether
//     or not it exists, which names the path only as the pipeline wrote
//     it (and so is a path through a link that leads nowhere, whose
//     target cannot be told apart);
//   - a path that exists must be a regular file or a folder (never a FIFO,
//     a device or a socket, which could block the validation or read a
//     device), and so must every corpus file of a corpus folder a tool
//     reads whole (search's corpus, docstore's source), links resolved
//     under the root too;
//   - the setting is replaced by the resolved path, so that the tool opens
//     what was checked;
//   - a corpus a tool reads whole holds at most maxBytes in its corpus
//     files, so that a validation's memory is bounded;
//   - a sql database that does not exist and that the entry would create
//     (write and create) is created in scratch, a folder the validation
//     deletes, never under the root.
type confiner struct {
	ctx      context.Context
	root     string // the resolved root
	cfg      *config.Pipeline
	scratch  string
	maxBytes int64
}

func (c *confiner) check(ps config.PathSetting) (string, error) {
	refused := fmt.Errorf("%w: %q is outside the folder this server reads (its --root)", errPathRefused, ps.Value)
	p, exists, ok := resolve(ps.Path)
	if !ok || !within(c.root, p) {
		return "", refused
	}
	if !exists {
		if c.creates(ps.Key) {
			return filepath.Join(c.scratch, filepath.Base(p)), nil
		}
		return p, nil
	}
	st, err := os.Stat(p)
	if err != nil {
		return "", refused
	}
	if !st.Mode().IsRegular() && !st.IsDir() {
		return "", fmt.Errorf("%w: %q is not a regular file or a folder", errPathRefused, ps.Value)
	}
	size := st.Size()
	if ps.Walked && st.IsDir() {
		if size, err = c.checkCorpus(ps.Value, p); err != nil {
			return "", err
		}
	}
	if ps.Walked && size > c.maxBytes {
		return "", fmt.Errorf("%w: %q holds more than the %d bytes of corpus the server reads to validate a pipeline; check the file with planner validate",
			errPathRefused, ps.Value, c.maxBytes)
	}
	return p, nil
}

// checkCorpus checks the corpus files of the folder dir (value in the
// pipeline), those search.WalkCorpus visits and the tools read, and
// returns their size in all. It stops once they pass maxBytes.
func (c *confiner) checkCorpus(value, dir string) (int64, error) {
	var size int64
	err := search.WalkCorpus(c.ctx, os.DirFS(dir), func(rel, _ string) error {
		name := filepath.Join(dir, filepath.FromSlash(rel))
		shown := filepath.ToSlash(filepath.Join(value, filepath.FromSlash(rel)))
		fi, err := os.Lstat(name)
		if err != nil {
			return fmt.Errorf("%w: %q: %w", errPathRefused, shown, errors.Unwrap(err))
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			r, exists, ok := resolve(name)
			if !exists || !ok || !within(c.root, r) {
				return fmt.Errorf("%w: %q is a link to outside the folder this server reads (its --root)", errPathRefused, shown)
			}
			if fi, err = os.Stat(r); err != nil {
				return fmt.Errorf("%w: %q: %w", errPathRefused, shown, errors.Unwrap(err))
			}
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%w: %q is not a regular file", errPathRefused, shown)
		}
		if size += fi.Size(); size > c.maxBytes {
			return fs.SkipAll
		}
		return nil
	})
	return size, err
}

// creates reports whether the setting at key is the path of a sql entry
// that creates its database (write: true, create: true).
func (c *confiner) creates(key string) bool {
	var i int
	if _, err := fmt.Sscanf(key, "tools[%d].path", &i); err != nil || i < 0 || i >= len(c.cfg.Tools) || !strings.HasSuffix(key, ".path") {
		return false
	}
	t := c.cfg.Tools[i]
	return t.Name == "sql" && t.Settings["write"] == true && t.Settings["create"] == true
}
