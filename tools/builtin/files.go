package builtin

import (
	"context"
	"fmt"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/files"
)

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
