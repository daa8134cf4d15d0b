// Package builtin builds the built-in tools from pipeline `tools:` entries:
// calculator, search, get_time, weather, wikipedia, web_search,
// http_fetch, files, sql, code, docstore, vars, serpapi, and the tools of
// MCP servers (entries {mcp: {...}}). An entry may yield several tools
// (files yields list_files, read_file, search_files and, with write: true,
// write_file). Entries that need a setting to mean anything (files needs
// root, sql a path, mcp a command or url, serpapi an API key in the
// environment) fail without it with ErrMissingSetting.
package builtin

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/corpus"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/calc"
	"github.com/planner-engine/planner/tools/clock"
	"github.com/planner-engine/planner/tools/lctool"
	"github.com/planner-engine/planner/tools/search"
	"github.com/planner-engine/planner/tools/weather"
	"github.com/tmc/langchaingo/tools/duckduckgo"
	"github.com/tmc/langchaingo/tools/wikipedia"
)

// UserAgent identifies planner to web APIs that ask for one.
const UserAgent = "planner/0.1 (+https://github.com/planner-engine/planner)"

// Factory builds built-in tools. The zero value is ready to use.
type Factory struct{}

// builder builds the tools of one entry from its settings.
type builder func(ctx context.Context, settings map[string]any, baseDir string) ([]tools.Tool, error)

func builders() map[string]builder {
	return map[string]builder{
		"calculator": buildCalculator,
		"search":     buildSearch,
		"get_time":   buildClock,
		"weather":    buildWeather,
		"wikipedia":  buildWikipedia,
		"web_search": buildWebSearch,
		"http_fetch": buildHTTPFetch,
		"files":      buildFiles,
		"sql":        buildSQL,
		"docstore":   buildDocstore,
		"code":       buildCode,
		"mcp":        buildMCP,
		"vars":       buildVars,
		"serpapi":    buildSerpAPI,
	}
}

// Names lists the built-in tool names, sorted.
func Names() []string {
	var out []string
	for n := range builders() {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Tools implements pipeline.ToolFactory.
func (Factory) Tools(ctx context.Context, spec config.Tool, baseDir string) ([]tools.Tool, error) {
	b, ok := builders()[spec.Name]
	if !ok {
		return nil, fmt.Errorf("%w %q (built-in tools: %s)", tools.ErrUnknownTool, spec.Name, strings.Join(Names(), ", "))
	}
	return b(ctx, spec.Settings, baseDir)
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

// corpusSource resolves a corpus setting: "demo" (default) is the embedded
// demo corpus; anything else is a folder of .md/.txt files or a .jsonl
// file, relative to the pipeline file.
func corpusSource(name, baseDir string) search.Source {
	if name == "" || name == "demo" {
		return search.FromFS(corpus.Demo())
	}
	return search.FromPath(pipelinePath(name, baseDir))
}

func buildSearch(ctx context.Context, settings map[string]any, baseDir string) ([]tools.Tool, error) {
	var s struct {
		// Corpus is "demo" (default), a folder or a .jsonl file.
		Corpus string `mapstructure:"corpus"`
		// TopK is the number of results (search default 3).
		TopK int `mapstructure:"top_k"`
		// SnippetLength caps each snippet in characters (search default).
		SnippetLength int `mapstructure:"snippet_length"`
	}
	if err := config.Decode(settings, &s); err != nil {
		return nil, err
	}
	var opts []search.Option
	if s.TopK > 0 {
		opts = append(opts, search.WithTopK(s.TopK))
	}
	if s.SnippetLength > 0 {
		opts = append(opts, search.WithSnippetLength(s.SnippetLength))
	}
	t, err := search.New(ctx, corpusSource(s.Corpus, baseDir), opts...)
	if err != nil {
		return nil, err
	}
	return []tools.Tool{t}, nil
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

func buildWikipedia(_ context.Context, settings map[string]any, _ string) ([]tools.Tool, error) {
	var s struct {
		// Timeout bounds one call. Default 20s.
		Timeout time.Duration `mapstructure:"timeout"`
	}
	if err := config.Decode(settings, &s); err != nil {
		return nil, err
	}
	w := wikipedia.New(UserAgent)
	return []tools.Tool{lctool.Wrap(w, lctool.WithName("wikipedia"), lctool.WithMeta(tools.Meta{ReadOnly: true, Network: true, Timeout: orDuration(s.Timeout, 20*time.Second)}))}, nil
}

func buildWebSearch(_ context.Context, settings map[string]any, _ string) ([]tools.Tool, error) {
	var s struct {
		// Timeout bounds one call. Default 20s.
		Timeout time.Duration `mapstructure:"timeout"`
		// MaxResults caps the results. Default 5.
		MaxResults int `mapstructure:"max_results"`
	}
	if err := config.Decode(settings, &s); err != nil {
		return nil, err
	}
	if s.MaxResults <= 0 {
		s.MaxResults = 5
	}
	d, err := duckduckgo.New(s.MaxResults, UserAgent)
	if err != nil {
		return nil, fmt.Errorf("web_search: %w", err)
	}
	return []tools.Tool{lctool.Wrap(d, lctool.WithName("web_search"), lctool.WithMeta(tools.Meta{ReadOnly: true, Network: true, Timeout: orDuration(s.Timeout, 20*time.Second)}))}, nil
}

func orDuration(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// ErrMissingSetting marks a tools entry that lacks a setting its tool
// cannot do without: files without root, sql without path. It comes
// wrapped in a *config.SettingError (which wraps config.ErrSettings too),
// so a listing that builds every built-in with empty settings can tell
// such entries from broken ones and skip them.
var ErrMissingSetting = errors.New("required setting missing")

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
