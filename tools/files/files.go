package files

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/planner-engine/planner/tools"
)

// Tool names.
const (
	// ListName is the name of the listing tool.
	ListName = "list_files"
	// ReadName is the name of the reading tool.
	ReadName = "read_file"
	// SearchName is the name of the search tool.
	SearchName = "search_files"
	// WriteName is the name of the writing tool, built only with
	// Config.Write.
	WriteName = "write_file"
)

// Defaults of the Config fields.
const (
	// DefaultMaxReadBytes is Config.MaxReadBytes when unset: 32 KiB.
	DefaultMaxReadBytes = 32 << 10
	// DefaultMaxWriteBytes is Config.MaxWriteBytes when unset: 1 MiB.
	DefaultMaxWriteBytes = 1 << 20
	// DefaultMaxEntries is Config.MaxEntries when unset.
	DefaultMaxEntries = 200
	// DefaultMaxDepth is Config.MaxDepth when unset.
	DefaultMaxDepth = 8
	// DefaultMaxMatches is Config.MaxMatches when unset.
	DefaultMaxMatches = 50
	// DefaultMaxSearchFileBytes is Config.MaxSearchFileBytes when unset:
	// 1 MiB.
	DefaultMaxSearchFileBytes = 1 << 20
	// DefaultTimeout is Config.Timeout when unset.
	DefaultTimeout = 10 * time.Second
	// MaxScan is how many directory entries one listing or search visits
	// at most; a walk that reaches it stops and says so.
	MaxScan = 50_000
)

// Errors the tools return, each wrapped with a message for the model.
// Those caused by the model's input (all but ErrInvalidConfig) also wrap
// tools.ErrBadInput.
var (
	// ErrInvalidConfig means New was given an unusable Config.
	ErrInvalidConfig = errors.New("invalid files configuration")
	// ErrOutsideRoot means a path is absolute, climbs above the root with
	// "..", or resolves outside the root through a symbolic link.
	ErrOutsideRoot = errors.New("path outside the root folder")
	// ErrBadPath means a path is empty or malformed (a NUL byte, say).
	ErrBadPath = errors.New("bad path")
	// ErrNotFound means no file or folder has that path.
	ErrNotFound = errors.New("not found")
	// ErrNotFile means a path names a folder or a special file where a
	// regular file is needed.
	ErrNotFile = errors.New("not a regular file")
	// ErrNotDir means a path names a file where a folder is needed.
	ErrNotDir = errors.New("not a folder")
	// ErrBinary means a file is not text.
	ErrBinary = errors.New("binary file")
	// ErrTooLarge means content to write exceeds Config.MaxWriteBytes.
	ErrTooLarge = errors.New("content too large")
	// ErrBadPattern means a glob or regular expression does not compile.
	ErrBadPattern = errors.New("bad pattern")
	// ErrBadArgument means a tool argument is missing, unknown or has the
	// wrong type or value.
	ErrBadArgument = errors.New("bad argument")
	// ErrReadOnlyPath means write_file was asked to write inside a .git
	// folder.
	ErrReadOnlyPath = errors.New("path may not be written")
	// ErrHardLink means a file has more than one hard link (name). A hard
	// link cannot be told from the file's other names, one of which may
	// lie outside the root folder (a link made inside the root to
	// /etc/shadow, or to a file the agent should not change), so
	// read_file, search_files and write_file refuse such files.
	ErrHardLink = errors.New("file has several hard links")
)

// Config configures an FS. Zero values take the documented defaults; only
// Root is required. The mapstructure tags are the keys of a pipeline's
// files tools entry.
type Config struct {
	// Root is the folder the tools may access. Required; it must exist.
	// A relative Root is relative to the working directory (the pipeline
	// builder resolves it against the pipeline's folder first).
	Root string `mapstructure:"root"`
	// Write adds the write_file tool. Default false: read-only tools only.
	Write bool `mapstructure:"write"`
	// ApproveWrites says whether write_file asks a human to approve each
	// call (its Meta.NeedsApproval). Default (nil) true.
	ApproveWrites *bool `mapstructure:"approve_writes"`
	// MaxReadBytes caps the text one read_file call returns. Default
	// DefaultMaxReadBytes (32 KiB).
	MaxReadBytes int `mapstructure:"max_read_bytes"`
	// MaxWriteBytes caps the content of one write_file call. Default
	// DefaultMaxWriteBytes (1 MiB).
	MaxWriteBytes int `mapstructure:"max_write_bytes"`
	// MaxEntries caps the entries one list_files call shows. Default
	// DefaultMaxEntries (200).
	MaxEntries int `mapstructure:"max_entries"`
	// MaxDepth caps the depth list_files recurses to (1 lists a folder's
	// own entries). Default DefaultMaxDepth (8).
	MaxDepth int `mapstructure:"max_depth"`
	// MaxMatches caps the matching lines one search_files call shows.
	// Default DefaultMaxMatches (50).
	MaxMatches int `mapstructure:"max_matches"`
	// MaxSearchFileBytes is the size above which search_files skips a
	// file. Default DefaultMaxSearchFileBytes (1 MiB).
	MaxSearchFileBytes int64 `mapstructure:"max_search_file_bytes"`
	// IncludeGit makes list_files and search_files enter ".git" folders.
	// Default false. write_file never writes inside one.
	IncludeGit bool `mapstructure:"include_git"`
	// LineNumbers makes read_file number the lines it shows unless a call
	// says otherwise (its line_numbers argument). Default false.
	LineNumbers bool `mapstructure:"line_numbers"`
	// Timeout bounds one call (each tool's Meta.Timeout); listings and
	// searches that run long stop early with the results so far. Default
	// DefaultTimeout (10s).
	Timeout time.Duration `mapstructure:"timeout"`
}

// FS is a file area: the tools over one root folder. It is immutable and
// safe for concurrent use. It opens the root afresh for each call, so it
// holds no open files and needs no closing.
type FS struct {
	cfg Config
	// dir is the absolute path of the root.
	dir string
}

// New checks cfg and returns the file area over cfg.Root. It fails with
// ErrInvalidConfig when Root is empty, missing or not a folder, or when a
// limit is negative.
func New(cfg Config) (*FS, error) {
	if cfg.Root == "" {
		return nil, fmt.Errorf("%w: root is required", ErrInvalidConfig)
	}
	dir, err := filepath.Abs(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("%w: root %q: %w", ErrInvalidConfig, cfg.Root, err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: root %q: %w", ErrInvalidConfig, cfg.Root, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%w: root %q is not a folder", ErrInvalidConfig, cfg.Root)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: root %q: %w", ErrInvalidConfig, cfg.Root, err)
	}
	_ = r.Close()
	for _, l := range []struct {
		name string
		v    int64
	}{
		{"max_read_bytes", int64(cfg.MaxReadBytes)}, {"max_write_bytes", int64(cfg.MaxWriteBytes)},
		{"max_entries", int64(cfg.MaxEntries)}, {"max_depth", int64(cfg.MaxDepth)},
		{"max_matches", int64(cfg.MaxMatches)}, {"max_search_file_bytes", cfg.MaxSearchFileBytes},
		{"timeout", int64(cfg.Timeout)},
	} {
		if l.v < 0 {
			return nil, fmt.Errorf("%w: %s must not be negative", ErrInvalidConfig, l.name)
		}
	}
	cfg.MaxReadBytes = tools.SettingOr(cfg.MaxReadBytes, DefaultMaxReadBytes)
	cfg.MaxWriteBytes = tools.SettingOr(cfg.MaxWriteBytes, DefaultMaxWriteBytes)
	cfg.MaxEntries = tools.SettingOr(cfg.MaxEntries, DefaultMaxEntries)
	cfg.MaxDepth = tools.SettingOr(cfg.MaxDepth, DefaultMaxDepth)
	cfg.MaxMatches = tools.SettingOr(cfg.MaxMatches, DefaultMaxMatches)
	cfg.MaxSearchFileBytes = tools.SettingOr(cfg.MaxSearchFileBytes, DefaultMaxSearchFileBytes)
	cfg.Timeout = tools.SettingOr(cfg.Timeout, DefaultTimeout)
	if cfg.ApproveWrites == nil {
		approve := true
		cfg.ApproveWrites = &approve
	}
	return &FS{cfg: cfg, dir: dir}, nil
}

// Dir returns the absolute path of the root folder.
func (f *FS) Dir() string { return f.dir }

// Tools returns the tools of the file area: list_files, read_file and
// search_files, plus write_file when Config.Write is set.
func (f *FS) Tools() []tools.Tool {
	ts := []tools.Tool{&listTool{f}, &readTool{f}, &searchTool{f}}
	if f.cfg.Write {
		ts = append(ts, &writeTool{f})
	}
	return ts
}

// readMeta is the metadata of the read-only tools.
func (f *FS) readMeta() tools.Meta {
	return tools.Meta{ReadOnly: true, Timeout: f.cfg.Timeout}
}

// openRoot opens the root folder for one call.
func (f *FS) openRoot() (*os.Root, error) {
	r, err := os.OpenRoot(f.dir)
	if err != nil {
		// Name the cause without the root's host path.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("the root folder cannot be opened: %w", err)
	}
	return r, nil
}

// openStat opens the root folder for one call and looks up rel in it.
// The caller closes the root; on an error it is closed already.
func (f *FS) openStat(rel string) (*os.Root, fs.FileInfo, error) {
	root, err := f.openRoot()
	if err != nil {
		return nil, nil, err
	}
	info, err := root.Stat(rel)
	if err != nil {
		_ = root.Close()
		return nil, nil, pathError(rel, err)
	}
	return root, info, nil
}

// softDeadline is when a walk started now stops early: three quarters of
// the timeout, so that partial results come back before the registry
// gives up on the call.
func (f *FS) softDeadline() time.Time {
	return time.Now().Add(f.cfg.Timeout * 3 / 4)
}
