package builtin

import (
	"context"
	"fmt"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/corpus"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/docstore"
	"github.com/planner-engine/planner/tools/toolset"
)

// docstoreSettings are the keys of a docstore entry.
type docstoreSettings struct {
	// Source is the corpus: "demo" (the default) for the embedded demo
	// corpus, or a folder of .md/.txt/.jsonl files, a docstore .jsonl file
	// or one .md/.txt file, relative to the pipeline's folder.
	Source string `mapstructure:"source"`
	// Format is default, wikienv or langchain. Default "default".
	Format string `mapstructure:"format"`
	// SearchName and LookupName name the two tools. Defaults "search_page"
	// and "lookup".
	SearchName string `mapstructure:"search_name"`
	LookupName string `mapstructure:"lookup_name"`
	// Similar is how many similar titles a failed search lists. Default 5
	// (10 in the langchain format).
	Similar int `mapstructure:"similar"`
	// AutoSuggest, in the langchain format only, opens the best search
	// result when no title matches. Default true.
	AutoSuggest *bool `mapstructure:"auto_suggest"`
}

// buildDocstore builds the two tools of a docstore entry: a page search
// and a keyword lookup over one corpus, which keep each run's open page
// and lookup position in the run's tools.RunState (see package docstore).
// The search tool closes the store's index when the pipeline closes.
func buildDocstore(ctx context.Context, settings map[string]any, baseDir string) ([]tools.Tool, error) {
	var s docstoreSettings
	if err := config.Decode(settings, &s); err != nil {
		return nil, err
	}
	format, err := docstore.ParseFormat(s.Format)
	if err != nil {
		return nil, config.SettingErrorf("format", "unknown format %q (formats: default, wikienv, langchain)", s.Format)
	}
	if s.Similar < 0 {
		return nil, config.SettingErrorf("similar", "similar must be at least 1, got %d", s.Similar)
	}
	if s.AutoSuggest != nil && format != docstore.FormatLangChain {
		return nil, config.SettingErrorf("auto_suggest", "auto_suggest applies only with format: langchain")
	}
	opts := []docstore.Option{docstore.WithFormat(format)}
	names := [2]string{docstore.DefaultSearchName, docstore.DefaultLookupName}
	if v := strings.TrimSpace(s.SearchName); v != "" {
		names[0] = v
	}
	if v := strings.TrimSpace(s.LookupName); v != "" {
		names[1] = v
	}
	if strings.EqualFold(names[0], names[1]) {
		return nil, config.SettingErrorf("lookup_name", "the lookup tool needs a name other than the search tool's (%q)", names[0])
	}
	opts = append(opts, docstore.WithNames(names[0], names[1]))
	if s.Similar > 0 {
		opts = append(opts, docstore.WithSimilar(s.Similar))
	}
	if s.AutoSuggest != nil {
		opts = append(opts, docstore.WithAutoSuggest(*s.AutoSuggest))
	}
	c, err := loadDocstore(ctx, s.Source, baseDir)
	if err != nil {
		return nil, &config.SettingError{Key: "source", Err: fmt.Errorf("docstore: %w", err)}
	}
	store, err := docstore.New(ctx, c, opts...)
	if err != nil {
		return nil, &config.SettingError{Key: "source", Err: fmt.Errorf("docstore: %w", err)}
	}
	return []tools.Tool{&docstoreSearch{SearchTool: store.SearchTool(), store: store}, store.LookupTool()}, nil
}

// loadDocstore reads the corpus a source setting names: "" or "demo" is
// the embedded demo corpus; anything else is a path, relative to baseDir
// unless absolute.
func loadDocstore(ctx context.Context, source, baseDir string) (*docstore.Corpus, error) {
	source = strings.TrimSpace(source)
	if source == "" || source == "demo" {
		return docstore.ReadFS(ctx, corpus.Demo())
	}
	return docstore.Load(ctx, toolset.PipelinePath(source, baseDir))
}

// docstoreSearch is a docstore's search tool that also owns the store: the
// pipeline closes it (io.Closer), which releases the store's index.
type docstoreSearch struct {
	*docstore.SearchTool
	store *docstore.Store
}

// Close releases the store's search index.
func (t *docstoreSearch) Close() error { return t.store.Close() }
