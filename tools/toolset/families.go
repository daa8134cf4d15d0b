package toolset

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/calc"
	"github.com/planner-engine/planner/tools/clock"
	"github.com/planner-engine/planner/tools/files"
	"github.com/planner-engine/planner/tools/serpapi"
	"github.com/planner-engine/planner/tools/vars"
	"github.com/planner-engine/planner/tools/weather"
)

// Calculator is the family "calculator": exact arithmetic (package
// tools/calc), with the settings max_bits and precision (calc's defaults).
func Calculator() Family { return Family{Name: "calculator", Build: buildCalculator} }

// Clock is the family "get_time": the current date and time (package
// tools/clock); it takes no settings.
func Clock() Family { return Family{Name: "get_time", Build: buildClock} }

// Weather is the family "weather": forecasts from Open-Meteo (package
// tools/weather), with the keys of weather.Config (days 1 to 7).
func Weather() Family { return Family{Name: "weather", Build: buildWeather} }

// Vars is the family "vars": the run's working memory (package
// tools/vars); it takes no settings.
func Vars() Family { return Family{Name: "vars", Build: buildVars} }

// Files is the family "files": list_files, read_file, search_files and,
// with write: true, write_file over a folder (package tools/files); root
// is required.
func Files() Family { return Family{Name: "files", Build: buildFiles} }

// SerpAPI is the family "serpapi": Google search through SerpApi (package
// tools/serpapi); its key comes from the environment.
func SerpAPI() Family { return Family{Name: "serpapi", Build: buildSerpAPI} }

// Basic returns the families of this package, those of the tools that
// need nothing beyond the standard library.
func Basic() []Family {
	return []Family{Calculator(), Clock(), Weather(), Vars(), Files(), SerpAPI()}
}

func buildCalculator(_ context.Context, settings map[string]any, _ string) ([]tools.Tool, error) {
	var s struct {
		// MaxBits bounds a result's size in bits (calc default).
		MaxBits int `mapstructure:"max_bits"`
		// Precision is the digits shown for inexact results (calc default).
		Precision int `mapstructure:"precision"`
	}
	if err := config.Decode(settings, &s); err != nil {
		return nil, err
	}
	var opts []calc.Option
	if s.MaxBits > 0 {
		opts = append(opts, calc.WithMaxBits(s.MaxBits))
	}
	if s.Precision > 0 {
		opts = append(opts, calc.WithPrecision(s.Precision))
	}
	return []tools.Tool{calc.New(opts...)}, nil
}

func buildClock(_ context.Context, settings map[string]any, _ string) ([]tools.Tool, error) {
	if err := config.Decode(settings, &struct{}{}); err != nil {
		return nil, err
	}
	return []tools.Tool{clock.New(nil)}, nil
}

func buildWeather(_ context.Context, settings map[string]any, _ string) ([]tools.Tool, error) {
	var cfg weather.Config
	if err := config.Decode(settings, &cfg); err != nil {
		return nil, err
	}
	if cfg.Days < 0 || cfg.Days > 7 {
		return nil, &config.SettingError{Key: "days", Err: fmt.Errorf("%w: days must be 1 to 7, got %d", config.ErrSettings, cfg.Days)}
	}
	return []tools.Tool{weather.New(cfg)}, nil
}

// buildVars builds the vars tool (the run's working memory); it takes no
// settings.
func buildVars(_ context.Context, settings map[string]any, _ string) ([]tools.Tool, error) {
	if err := config.Decode(settings, &struct{}{}); err != nil {
		return nil, err
	}
	return []tools.Tool{vars.New()}, nil
}

// buildFiles builds the tools of a files entry: list_files, read_file and
// search_files over the folder root (relative to the pipeline's folder),
// and write_file with write: true. The other keys are files.Config's.
func buildFiles(_ context.Context, settings map[string]any, baseDir string) ([]tools.Tool, error) {
	var cfg files.Config
	if err := config.Decode(settings, &cfg); err != nil {
		return nil, err
	}
	if strings.TrimSpace(cfg.Root) == "" {
		return nil, RequiredSetting("root", "the folder the file tools may access, relative to the pipeline file, such as root: ./docs")
	}
	if err := NonNegativeSettings(map[string]int64{
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
	cfg.Root = PipelinePath(cfg.Root, baseDir)
	f, err := files.New(cfg)
	if err != nil {
		return nil, &config.SettingError{Key: "root", Err: fmt.Errorf("%w: %w", config.ErrSettings, err)}
	}
	return f.Tools(), nil
}

// buildSerpAPI builds the serpapi tool (Google search through SerpApi)
// from its settings, the keys of serpapi.Config: api_key_env (default
// SERPAPI_API_KEY; the key itself is never written in a pipeline),
// location, hl and gl (default: SerpApi's), num (organic results shown,
// 1 to 10, default 3), timeout (15s), max_chars (4000) and base_url
// (SerpApi's endpoint). Without a key in the environment it fails with
// ErrMissingSetting, keyed api_key_env, so a listing of every built-in
// skips it.
func buildSerpAPI(_ context.Context, settings map[string]any, _ string) ([]tools.Tool, error) {
	var cfg serpapi.Config
	if err := config.Decode(settings, &cfg); err != nil {
		return nil, err
	}
	t, err := serpapi.New(cfg)
	if err != nil {
		var ce *serpapi.ConfigError
		if !errors.As(err, &ce) {
			return nil, err
		}
		if errors.Is(err, serpapi.ErrMissingKey) {
			return nil, &config.SettingError{Key: ce.Key, Err: fmt.Errorf("%w: %w: %w", config.ErrSettings, ErrMissingSetting, ce.Err)}
		}
		return nil, &config.SettingError{Key: ce.Key, Err: fmt.Errorf("%w: %w", config.ErrSettings, ce.Err)}
	}
	return []tools.Tool{t}, nil
}
