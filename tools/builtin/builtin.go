// Package builtin has the families of the built-in tools that bring
// libraries with them (search and docstore a bleve index, sql SQLite,
// code Starlark, http_fetch an HTML parser, wikipedia and web_search
// langchaingo's tools, mcp the MCP SDK) and Factory, which builds every
// built-in tool from pipeline `tools:` entries: those families and the
// ones of package tools/toolset (calculator, get_time, weather, vars,
// files, serpapi). Factory is the command line's tool set; a program that
// needs only some tools registers their families instead
// (planner.WithTools(toolset.New(toolset.Calculator(), builtin.Search()))),
// and compiles only the packages of the ones it names but those of this
// package's families, which it shares.
//
// An entry may yield several tools (files yields list_files, read_file,
// search_files and, with write: true, write_file; {mcp: {...}} the tools
// of an MCP server). Entries that need a setting to mean anything (files
// needs root, sql a path, mcp a command or url, serpapi an API key in the
// environment) fail without it with ErrMissingSetting.
package builtin

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/corpus"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/lctool"
	"github.com/planner-engine/planner/tools/search"
	"github.com/planner-engine/planner/tools/toolset"
	"github.com/tmc/langchaingo/tools/duckduckgo"
	"github.com/tmc/langchaingo/tools/wikipedia"
)

// UserAgent identifies planner to web APIs that ask for one.
const UserAgent = "planner/0.1 (+https://github.com/planner-engine/planner)"

// ErrMissingSetting marks a tools entry that lacks a setting its tool
// cannot do without; it is toolset.ErrMissingSetting.
var ErrMissingSetting = toolset.ErrMissingSetting

// Search is the family "search": BM25 search over a corpus (package
// tools/search), with the settings corpus ("demo", the default, or a
// folder or .jsonl file), top_k and snippet_length.
func Search() toolset.Family { return toolset.Family{Name: "search", Build: buildSearch} }

// Wikipedia is the family "wikipedia": Wikipedia's search API, with the
// setting timeout (default 20s).
func Wikipedia() toolset.Family { return toolset.Family{Name: "wikipedia", Build: buildWikipedia} }

// WebSearch is the family "web_search": DuckDuckGo, with the settings
// timeout (default 20s) and max_results (default 5).
func WebSearch() toolset.Family { return toolset.Family{Name: "web_search", Build: buildWebSearch} }

// HTTPFetch is the family "http_fetch": fetching a web page as text
// (package tools/httpfetch).
func HTTPFetch() toolset.Family { return toolset.Family{Name: "http_fetch", Build: buildHTTPFetch} }

// SQL is the family "sql": read-only (by default) queries on a SQLite
// file (package tools/sqltool); path is required.
func SQL() toolset.Family { return toolset.Family{Name: "sql", Build: buildSQL} }

// Docstore is the family "docstore": the search_page and lookup tools of
// ReAct's document store (package tools/docstore).
func Docstore() toolset.Family { return toolset.Family{Name: "docstore", Build: buildDocstore} }

// Code is the family "code": a hermetic Starlark interpreter (package
// tools/code).
func Code() toolset.Family { return toolset.Family{Name: "code", Build: buildCode} }

// MCP is the family "mcp": the tools of a Model Context Protocol server
// (package tools/mcp), entries {mcp: {command: [...]}} or {mcp: {url: ...}}.
func MCP() toolset.Family { return toolset.Family{Name: "mcp", Build: buildMCP} }

// Families returns every built-in family: toolset.Basic() and this
// package's.
func Families() []toolset.Family {
	return append(toolset.Basic(), Search(), Wikipedia(), WebSearch(), HTTPFetch(), SQL(), Docstore(), Code(), MCP())
}

// Factory builds every built-in tool (Families); it implements
// pipeline.ToolFactory. The zero value is ready to use.
type Factory struct{}

// Names lists the built-in tool names, sorted.
func Names() []string { return toolset.New(Families()...).Names() }

// Names lists the built-in tool names, sorted: a pipeline's load error
// for an unknown tool suggests the closest.
func (Factory) Names() []string { return Names() }

// Tools implements pipeline.ToolFactory. An unknown name fails with an
// error wrapping tools.ErrUnknownTool that lists the built-in tools.
func (Factory) Tools(ctx context.Context, spec config.Tool, baseDir string) ([]tools.Tool, error) {
	f := toolset.New(Families()...)
	if !f.Has(spec.Name) {
		return nil, fmt.Errorf("%w %q (built-in tools: %s)", tools.ErrUnknownTool, spec.Name, strings.Join(f.Names(), ", "))
	}
	return f.Tools(ctx, spec, baseDir)
}

// corpusSource resolves a corpus setting: "demo" (default) is the embedded
// demo corpus; anything else is a folder of .md/.txt files or a .jsonl
// file, relative to the pipeline file.
func corpusSource(name, baseDir string) search.Source {
	if name == "" || name == "demo" {
		return search.FromFS(corpus.Demo())
	}
	return search.FromPath(toolset.PipelinePath(name, baseDir))
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
