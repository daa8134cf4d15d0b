package builtin

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/files"
)

// ErrMissingSetting marks a tools entry that lacks a setting its tool
// cannot do without: files without root, sql without path. It comes
// wrapped in a *config.SettingError (which wraps config.ErrSettings too),
// so a listing that builds every built-in with empty settings can tell
// such entries from broken ones and skip them.
var ErrMissingSetting = errors.New("required setting missing")

// buildFiles builds the tools of a files entry: list_files, read_file and
// search_files over the folder root (relative to the pipeline's folder),
// and write_file with write: true. The other keys are files.Config's.
func buildFiles(_ context.Context, settings map[string]any, baseDir string) ([]tools.Tool, error) {
	var cfg files.Config
	if err := config.Decode(settings, &cfg); err != nil {
		return nil, err
	}
	if strings.TrimSpace(cfg.Root) == "" {
		return nil, requiredSetting("root", "the folder the file tools may access, relative to the pipeline file, such as root: ./docs")
	}
	if err := nonNegativeSettings(map[string]int64{
		"max_read_bytes": int64(cfg.MaxReadBytes), "max_write_bytes": int64(cfg.MaxWriteBytes),
		"max_entries": int64(cfg.MaxEntries), "max_depth": int64(cfg.MaxDepth), "max_matches": int64(cfg.MaxMatches),
		"max_search_file_bytes": cfg.MaxSearchFileBytes, "timeout": int64(cfg.Timeout),
	}); err != nil {
		return nil, err
	}
	if cfg.ApproveWrites != nil && !cfg.Write {
		return nil, config.SettingErrorf("approve_writes", "approve_writes applies only with write: true")
	}
	if cfg.MaxWriteBytes != 0 && !cfg.Write {
		return nil, config.SettingErrorf("max_write_bytes", "max_write_bytes applies only with write: true")
	}
	cfg.Root = pipelinePath(cfg.Root, baseDir)
	f, err := files.New(cfg)
	if err != nil {
		return nil, &config.SettingError{Key: "root", Err: fmt.Errorf("%w: %w", config.ErrSettings, err)}
	}
	return f.Tools(), nil
}

// requiredSetting is the error for a required setting key left out.
func requiredSetting(key, what string) error {
	return &config.SettingError{Key: key, Err: fmt.Errorf("%w: %w: %s is required: %s", config.ErrSettings, ErrMissingSetting, key, what)}
}

// nonNegativeSettings refuses a negative value among limits, naming its
// key; the keys are checked in sorted order.
func nonNegativeSettings(limits map[string]int64) error {
	keys := make([]string, 0, len(limits))
	for k := range limits {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if limits[k] < 0 {
			return config.SettingErrorf(k, "%s must not be negative (0 or leaving it out takes the default)", k)
		}
	}
	return nil
}

// pipelinePath makes a relative path relative to baseDir, the pipeline's
// folder.
func pipelinePath(p, baseDir string) string {
	p = strings.TrimSpace(p)
	if !filepath.IsAbs(p) && baseDir != "" {
		return filepath.Join(baseDir, p)
	}
	return p
}
