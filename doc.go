// Package planner embeds the planner engine in a Go program: load a YAML
// pipeline and run tasks through it with the defaults of the planner
// command line, given the providers, tools and keyword index it registers
// (package full registers the command line's, all of them).
//
//	eng, err := planner.New(full.Options()...)
//	if err != nil {
//		return err
//	}
//	defer eng.Close()
//	p, err := eng.Load(ctx, "configs/cot.yaml", planner.WithLLM("openai:gpt-4o-mini"))
//	if err != nil {
//		return err
//	}
//	res, err := p.Run(ctx, "What is 17 * 23 + 4?")
//	if err != nil {
//		return err
//	}
//	fmt.Println(res.Answer, res.Complete, res.Usage.CostUSD)
//
// # Defaults
//
// What an Engine can build is registered, so that a program compiles only
// what it names: the real model providers (WithProviders: the adapters of
// packages llm/provider/openai, anthropic, ollama, googleai, mistral, or
// provider.All()), the tools (WithTools: families of packages
// tools/toolset and tools/builtin, or builtin.Factory{}, every one) and
// the BM25 keyword index of tool retrieval and recall (WithKeywordIndex:
// search.Keywords{}). New with no options registers none of them: it has
// the offline providers only, no tools and no index. The command line
// registers all of them (package full: planner.New(full.Options()...)).
//
// An Engine built by New otherwise wires what `planner run` does:
//
//   - the real providers registered, with their API keys from the
//     environment, the offline "scripted" model (scripted:FILE, replies
//     from a script) and "replay" (replay:FILE, a cassette recorded
//     WithRecording played back); anthropic requests mark their stable
//     prefix for Anthropic's prompt cache (llm.prompt_cache, default true;
//     see adapter.Config.PromptCache);
//   - usage measured from the provider's report, else estimated with the
//     o200k tokenizer (loaded on first use), and priced from the built-in
//     price table (usage.DefaultPriceTable);
//   - around every model, the middleware of package llm/middleware set by
//     the llm block: retries with backoff (each wait traced as a retry
//     event), rate limits, a per-attempt timeout (default
//     middleware.DefaultCallTimeout for real providers) and a reply size
//     limit (llm.max_reply_bytes);
//   - an empty model reply (no text, no tool call) retried with a nudge
//     message, up to llm.empty_retries times (default 2), for every
//     node's model calls;
//   - for providers that offer embeddings (openai and OpenAI-compatible
//     servers, ollama, googleai, mistral), an embedder on llm.Model for
//     tool retrieval (llm.embedding_model, default the provider's);
//   - every built-in node type;
//   - a secret scrubber (redact.New) applied to every trace event, the
//     trace file and the Result's answer.
//
// Each default can be changed with an Option (New), a LoadOption
// (Engine.Load) or a RunOption (Pipeline.Run). A run prints nothing: its
// trace events are collected in Result.Trace and sent to the sinks given
// WithTraceSink (trace.NewTerminal(os.Stderr) prints the command line's
// stream) and to the WithTraceFile file.
//
// # Errors
//
// Errors wrap the package's sentinel errors (ErrNoModel, ErrRun,
// ErrInvalidConfig, ...) with their details; test for them with
// errors.Is.
//
// The node package github.com/planner-engine/planner/planner (the Planner
// node type) has the same package name as this one; import it under
// another name when a program needs both.
package planner
