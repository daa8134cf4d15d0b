package builtin

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/sqltool"
	"github.com/planner-engine/planner/tools/toolset"
)

// buildSQL builds the tools of a sql entry: sql_query and sql_schema over
// the SQLite database file path (relative to the pipeline's folder),
// read-only unless write: true. The other keys are sqltool.Config's. The file
// must exist (create: true, with write: true, makes it). sql_query's Close
// closes the database's connection pool (the pipeline's Close calls it).
func buildSQL(ctx context.Context, settings map[string]any, baseDir string) ([]tools.Tool, error) {
	var cfg sqltool.Config
	if err := config.Decode(settings, &cfg); err != nil {
		return nil, err
	}
	if strings.TrimSpace(cfg.Path) == "" {
		return nil, toolset.RequiredSetting("path", "the SQLite database file, relative to the pipeline file, such as path: ./data.db")
	}
	if err := toolset.NonNegativeSettings(map[string]int64{
		"max_rows": int64(cfg.MaxRows), "max_cell_bytes": int64(cfg.MaxCellBytes),
		"max_output_bytes": int64(cfg.MaxOutputBytes), "timeout": int64(cfg.Timeout),
	}); err != nil {
		return nil, err
	}
	if cfg.Create && !cfg.Write {
		return nil, config.SettingErrorf("create", "create needs write: true; a read-only database is never created")
	}
	if cfg.ApproveWrites != nil && !cfg.Write {
		return nil, config.SettingErrorf("approve_writes", "approve_writes applies only with write: true")
	}
	cfg.Path = toolset.PipelinePath(cfg.Path, baseDir)
	db, err := sqltool.Open(ctx, cfg)
	switch {
	case errors.Is(err, sqltool.ErrNoDatabase), errors.Is(err, sqltool.ErrInvalidConfig):
		return nil, &config.SettingError{Key: "path", Err: fmt.Errorf("%w: %w", config.ErrSettings, err)}
	case err != nil:
		return nil, fmt.Errorf("sql: %w", err)
	}
	return db.Tools(), nil
}
