package layout

// Layer is one floor of the module's import graph: its packages may import
// packages of lower floors only, never of their own floor or above.
type Layer struct {
	// Name says what the floor holds.
	Name string
	// Packages are the floor's packages, as import paths relative to the
	// module ("." for the root package).
	Packages []string
}

// MaxChain is the most packages the longest chain of in-module imports
// between production packages may hold, cmd/planner included: 11 since
// mcpserver, a front door over server, sits between server and the
// command line.
const MaxChain = 11

// Layers returns the floors of the module, bottom first. The import-rule
// test (layout_test.go) fails when a package is on no floor or imports one
// on its own floor or above; docs/architecture.md renders this table and a
// test keeps the two the same.
func Layers() []Layer {
	return []Layer{
		{"foundations: the graph runtime, the YAML schema, plans, verifiers, scrubbing, the tool contract", []string{
			"graph", "config", "plan", "verify", "eval/stats", "redact", "corpus", "tools", "tools/keyword", "hooks", "llm/middleware", "llm/usage",
			"internal/par", "internal/textutil",
			// test harnesses, imported by tests only
			"internal/hostile", "internal/integrationlog", "internal/layout", "llm/llmtest", "server/browsertest",
		}},
		{"the run's data, its events and the leaves: run state, trace events, providers, cassettes, built-in tool families", []string{
			"state", "trace", "audit", "autopilot", "internal/temporaltest", "internal/npmclients", "tools/mcp/mcptest", "llm/cassette", "llm/provider/adapter", "executor/parse",
			"tools/calc", "tools/clock", "tools/code", "tools/files", "tools/httpfetch", "tools/lctool", "tools/mcp",
			"tools/search", "tools/serpapi", "tools/sqltool", "tools/vars", "tools/weather",
		}},
		{"run services: the journal, OpenTelemetry, tool retrieval; each provider's adapter, the standard-library tool families", []string{
			"journal", "telemetry", "telemetry/otlp", "tools/docstore", "tools/retrieve", "tools/toolset", "eval/score", "eval/viewer",
			"llm/respcache", "llm/provider/anthropic", "llm/provider/googleai", "llm/provider/mistral", "llm/provider/ollama", "llm/provider/openai",
		}},
		{"models and stores: the model call, the journal's stores, the built-in tool set", []string{
			"llm", "llm/provider", "journal/journaltest", "journal/memstore", "journal/sqlitestore", "tools/builtin",
		}},
		{"the node-kind contract and the scripted model", []string{
			"nodekind", "llm/scripted", "tools/retrieve/retrievetest",
		}},
		{"the ReAct engine, the pipeline builder, suites", []string{
			"executor", "pipeline", "eval/suite",
		}},
		{"plan-step executors, the small node kinds, the simulator", []string{
			"executor/steps", "nodes", "nodes/join", "nodes/flow", "nodes/general", "nodes/compose", "nodes/autopilot", "eval/sim", "eval/trajectory",
		}},
		{"the planner and re-planner nodes", []string{"planner", "replanner"}},
		{"the public Go API: Engine, Pipeline, Run, the registry of every node kind", []string{"."}},
		{"comparisons of pipelines on suites; the command line's full set of providers and tools", []string{"eval/compare", "full", "internal/schema"}},
		{"programs on the public API: the HTTP server, Temporal, the CLI's wiring", []string{
			"server", "temporal", "internal/app", "autopilot/fit",
		}},
		{"front doors over the server: MCP", []string{"mcpserver"}},
		{"the command line", []string{"cmd/planner"}},
	}
}
