package planner

import (
	"context"
	"fmt"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/llm/provider/adapter"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/keyword"
)

// What an Engine can build is registered, not assumed: its real model
// providers (WithProviders), its tools (WithTools) and its keyword index
// (WithKeywordIndex). A program compiles only the packages of what it
// names; the command line registers everything (provider.All(),
// builtin.Factory{}, search.Keywords{}).

// ErrNoKeywordIndex means a pipeline asks for a BM25 keyword index (tool
// retrieval by "bm25" or "hybrid" over more tools than max_tools, or the
// recall tool) and the Engine has none (WithKeywordIndex). Load fails with
// it, wrapped in a *config.Error naming the setting. It is
// executor.ErrNoKeywordIndex.
var ErrNoKeywordIndex = executor.ErrNoKeywordIndex

// WithProviders registers real model providers, each under its name
// (openai, ollama, anthropic, googleai, mistral) and labelled "real: NAME":
// the adapters of packages llm/provider/openai, ... (openai.Adapter()), or
// provider.All() for every one. Their models are built from the llm
// block (API key from the environment, base URL, temperature, ...; see
// adapter.Config) with an HTTP client whose timeout backs up the
// per-attempt timeout, and get the Engine's metering, pricing and
// middleware. Options accumulate; a later registration of a name wins, and
// WithProvider of the same name replaces it. Default: none, only the
// offline providers "scripted" and "replay": a pipeline or WithLLM that
// names a real provider fails to load with ErrUnknownProvider, whose
// message names this option.
func WithProviders(adapters ...adapter.Adapter) Option {
	return func(o *options) { o.adapters = append(o.adapters, adapters...) }
}

// WithKeywordIndex sets what builds the BM25 keyword indexes of the ReAct
// engine: its tool retrieval (tool_retrieval method "bm25", the default,
// or "hybrid", on once a loop has more tools than max_tools) and its
// recall tool's word search (recall, on with compaction "summarize").
// search.Keywords{} of package tools/search is the command line's (a
// bleve index). Default: none: a pipeline that needs one fails to load
// with a setting error wrapping ErrNoKeywordIndex that names the setting
// and this option; tool retrieval by "embedding" needs none.
func WithKeywordIndex(ix keyword.Indexer) Option {
	return func(o *options) { o.keywords = ix }
}

// noTools is the tool factory of an Engine built without WithTools: it
// has no tools.
type noTools struct{}

// Tools implements pipeline.ToolFactory: every name is unknown.
func (noTools) Tools(_ context.Context, spec config.Tool, _ string) ([]tools.Tool, error) {
	return nil, fmt.Errorf("%w %q: the engine has no tools; register them with planner.WithTools "+
		"(toolset.New(toolset.Calculator(), ...) for some families, builtin.Factory{} for every built-in tool)", tools.ErrUnknownTool, spec.Name)
}

// unknownProvider is the error for a provider name no registration has:
// it lists the registered providers and adds registerHint's.
func unknownProvider(name string, registered []string) error {
	return fmt.Errorf("%w %q (available: %s)%s", ErrUnknownProvider, name, strings.Join(registered, ", "), registerHint(name))
}

// registerHint says how to register name when it is a real provider
// (adapter.Providers), and is "" otherwise.
func registerHint(name string) string {
	if _, err := adapter.CapabilitiesOf(name); err != nil {
		return ""
	}
	pkg := strings.ToLower(strings.TrimSpace(name))
	return fmt.Sprintf("; register it with planner.WithProviders(%s.Adapter()) of package llm/provider/%s, or provider.All()", pkg, pkg)
}
