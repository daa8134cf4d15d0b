// Package planner embeds the planner engine in a Go program: load a YAML
// pipeline and run tasks through it with exactly the defaults of the
// planner command line.
//
//	eng, err := planner.New()
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
// An Engine built by New with no options wires what `planner run` does:
//
//   - the model providers of package llm/provider (openai, anthropic,
//     ollama, ... with their API keys from the environment), the offline
//     "scripted" model (scripted:FILE, replies from a script) and "replay"
//     (replay:FILE, a cassette recorded WithRecording played back);
//     anthropic requests mark their stable prefix for Anthropic's prompt
//     cache (llm.prompt_cache, default true; see provider.Config.PromptCache);
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
//   - every built-in tool and node type;
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
