// Package toolset builds a pipeline's tools (its `tools:` entries) from
// the tool families a program registers, so that a program compiles only
// the tools it names: planner.WithTools(toolset.New(toolset.Calculator(),
// toolset.Clock())). A Family builds the tools of one entry name from the
// entry's settings; this package has the families of the tools that need
// nothing beyond the standard library (calculator, get_time, weather,
// vars, files, serpapi), and package tools/builtin has the rest (search,
// docstore, sql, code, http_fetch, wikipedia, web_search, mcp) and a
// Factory of every family, which the command line uses.
package toolset

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/tools"
)

// Builder builds the tools of one `tools:` entry from its settings;
// baseDir is the pipeline file's folder, which relative paths in the
// settings are taken from. Errors about a setting are *config.SettingError
// naming its key.
type Builder func(ctx context.Context, settings map[string]any, baseDir string) ([]tools.Tool, error)

// Family is the tools of one entry name: Build builds the tools of an
// entry named Name (an entry may yield several tools, as files does).
type Family struct {
	// Name is the entry's name in a pipeline's tools: list.
	Name string
	// Build builds the entry's tools.
	Build Builder
}

// Factory builds the tools of the families it was made with; it
// implements pipeline.ToolFactory (planner.WithTools). The zero value has
// no families. It is immutable and safe for concurrent use.
type Factory struct {
	families map[string]Builder
}

// New returns a Factory of families; of two families of the same name,
// the later wins.
func New(families ...Family) Factory {
	f := Factory{families: make(map[string]Builder, len(families))}
	for _, fam := range families {
		f.families[fam.Name] = fam.Build
	}
	return f
}

// Names lists the names of the factory's families, sorted.
func (f Factory) Names() []string {
	out := make([]string, 0, len(f.families))
	for n := range f.families {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Has reports whether the factory has a family named name.
func (f Factory) Has(name string) bool {
	_, ok := f.families[name]
	return ok
}

// Tools implements pipeline.ToolFactory: it builds spec's tools with the
// family of spec.Name, and fails with an error wrapping
// tools.ErrUnknownTool that lists the registered families when there is
// none.
func (f Factory) Tools(ctx context.Context, spec config.Tool, baseDir string) ([]tools.Tool, error) {
	build, ok := f.families[spec.Name]
	if !ok || build == nil {
		names := f.Names()
		if len(names) == 0 {
			names = []string{"none"}
		}
		return nil, fmt.Errorf("%w %q (registered tools: %s; planner.WithTools registers them)", tools.ErrUnknownTool, spec.Name, strings.Join(names, ", "))
	}
	return build(ctx, spec.Settings, baseDir)
}

// ErrMissingSetting marks a tools entry that lacks a setting its tool
// cannot do without: files without root, sql without path. It comes
// wrapped in a *config.SettingError (which wraps config.ErrSettings too),
// so a listing that builds every family with empty settings can tell
// such entries from broken ones and skip them.
var ErrMissingSetting = errors.New("required setting missing")

// RequiredSetting is the error for a required setting key left out: a
// *config.SettingError wrapping config.ErrSettings and ErrMissingSetting;
// what says what the setting holds.
func RequiredSetting(key, what string) error {
	return &config.SettingError{Key: key, Err: fmt.Errorf("%w: %w: %s is required: %s", config.ErrSettings, ErrMissingSetting, key, what)}
}

// NonNegativeSettings refuses a negative value among limits (by setting
// key), naming its key; the keys are checked in sorted order.
func NonNegativeSettings(limits map[string]int64) error {
	keys := make([]string, 0, len(limits))
	for k := range limits {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if limits[k] < 0 {
			return config.SettingErrorf(k, "%s must not be negative (0 or leaving it out takes the default)", k)
		}
	}
	return nil
}

// PipelinePath makes a relative path relative to baseDir, the pipeline's
// folder; an absolute one is returned as it is.
func PipelinePath(p, baseDir string) string {
	p = strings.TrimSpace(p)
	if !filepath.IsAbs(p) && baseDir != "" {
		return filepath.Join(baseDir, p)
	}
	return p
}
