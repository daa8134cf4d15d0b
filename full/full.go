// Package full is the command line's set of what an Engine can build:
// every real model provider (provider.All: openai, ollama, anthropic,
// googleai, mistral), every built-in tool (builtin.Factory) and the BM25
// keyword index of tool retrieval and recall (search.Keywords). A program
// that wants the command line's behaviour builds its Engine with it:
//
//	eng, err := planner.New(full.Options()...)
//
// It compiles every provider SDK and tool library (Google's genai SDK and
// gRPC, bleve, SQLite, Starlark, the MCP SDK). A program that needs less
// registers only what it names: planner.WithProviders(openai.Adapter()),
// planner.WithTools(toolset.New(toolset.Calculator())), and so on.
package full

import (
	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/llm/provider"
	"github.com/planner-engine/planner/tools/builtin"
	"github.com/planner-engine/planner/tools/search"
)

// Options returns the options that register the full set:
// planner.WithProviders(provider.All()...),
// planner.WithTools(builtin.Factory{}) and
// planner.WithKeywordIndex(search.Keywords{}). Options given after them
// to planner.New win (a WithTools of your own, a WithProvider of the same
// name).
func Options() []planner.Option {
	return []planner.Option{
		planner.WithProviders(provider.All()...),
		planner.WithTools(builtin.Factory{}),
		planner.WithKeywordIndex(search.Keywords{}),
	}
}
