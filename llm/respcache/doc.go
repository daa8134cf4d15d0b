// Package respcache is an opt-in, on-disk, content-addressed cache of
// model replies, so that re-running a comparison (planner compare --cache
// DIR), or another pipeline or model making the very same request, does
// not pay for the same model call twice.
//
// A Cache is a directory (Open). Each run gets its own hook from it
// (Cache.ForRun), a hooks.ProviderHook: it sits inside the metering, so a
// call it answers passes every other hook of the run (budgets, usage,
// trace events, spans) as a live one does. On a hit it answers with the
// stored reply and the usage measured when that reply was live
// (hooks.ModelResult.Usage with Measured set), so a cached run reports the
// same tokens and cost as the live run did; what was not paid again is
// counted in the hook's Stats (SavedUSD, SavedTokens) and marked in the
// run's trace by an info event per hit (Data: "cache": "hit", "key", the
// first 12 hex digits of the entry's key, "saved_usd", "saved_tokens",
// "node", and "role" when the call has one). A call whose options carry a streaming function has it fed the
// cached text once, as a single chunk (and its reasoning function the
// cached reasoning), so streaming consumers still see the reply. On a
// miss it makes the call, measures the reply with hooks.ModelCall.Measure
// and stores it.
//
// # What is keyed
//
// The key is the SHA-256 of a canonical JSON encoding of the request:
// the provider and model names of the call (hooks.ModelCall), every
// message (its role and every part: text, image URLs, binary parts by
// their bytes, tool calls with their ids and arguments, tool results),
// and every call option that changes the reply, read by applying the
// call's []llms.CallOption to an llms.CallOptions: model, temperature
// (whether it was set at all, and its value), max tokens, candidate count,
// stop words, top-k, top-p, seed, minimum and maximum length, N, the
// repetition, frequency and presence penalties, JSON mode, response MIME
// type, the tools offered (type, name, description, JSON schema, strict),
// the tool choice, the deprecated functions and function-call behaviour,
// and the metadata. The encoding is the one cassettes and the journal
// record a request with (cassette.NewRequest), so JSON schemas are keyed
// by their JSON value, not their spelling. Function-valued options (the
// streaming functions) are not keyed.
//
// Settings of a model that its calls do not carry (the pipeline's
// llm.base_url, llm.max_tokens, the simulator's profile and seed) are not
// seen by the hook: give them with WithModelSettings, or two models that
// differ only there share replies. Nothing of the caller (node, role,
// task) is keyed, so identical requests from different nodes or pipelines
// share a reply; offline models that answer from the caller's identity
// rather than the request (the simulator, the scripted model) need
// WithCaller. API keys are never key material: the key is made of
// request content only, and the entry stores no request at all.
//
// # Sampled and greedy calls
//
// A call is greedy when its temperature is explicitly 0: set by a call
// option (llms.WithTemperature(0)) or, when the call sets none, by the
// model's configured temperature given with WithModelTemperature. Every
// other call is sampled: a temperature above 0, or none known (providers
// then sample at their default temperature, often 1).
//
// A greedy call's key is the request alone: it is shared by every run,
// every repeat and every pipeline that makes it. A sampled call's key adds
// the run's repeat index (ForRun's repeat, compare --repeats) and the
// call's occurrence, the number of identical sampled requests the same run
// made before it: the repeats of a comparison stay independent samples,
// and so do the samples a run draws on purpose (self-consistency, Tree of
// Thoughts proposals), while a re-run of the same repeat gets the same
// samples back, one each. An occurrence whose call failed is given to the
// next identical request, so a retry takes the place of the call it
// retries.
//
// # On-disk layout
//
// An entry is one JSON file, DIR/<first 2 hex digits of the key>/<key>.json,
// holding the format version (FormatVersion), the key, the provider and
// model, when it was stored, whether it was sampled (and its repeat and
// occurrence), the usage measured when it was live (tokens and cost, and
// whether the tokens were estimated) and the reply: each choice's content,
// reasoning, stop reason, tool calls, function call and generation info
// (values that cannot be encoded as JSON become a "<unserialisable T>"
// string), its strings scrubbed of secrets (WithScrubber; a hit then
// answers with the scrubbed text). A reply that failed, or that has no choice, is not stored. When
// the metering gave the call no measure (hooks.ModelCall.Measure is nil:
// nobody meters the call) the reply is stored with zero usage and answers
// later calls with zero usage.
//
// # Sharing
//
// A Cache is safe for concurrent use, and a directory is safe to share
// between processes: an entry is written to a temporary file in its
// folder and renamed into place, so no reader sees a torn entry, even of a
// process killed while writing, and concurrent writers of one key leave one
// whole entry. An entry that cannot be read or decoded (truncated,
// corrupt, of another format version) is a miss and is overwritten by the
// live reply; it never fails a run, nor does a failure to store an entry
// (Stats.StoreErrors counts those). Within one process, identical calls
// made at the same time are made once: the later ones wait for the first
// and are answered from its entry. Entries are never expired: delete the
// directory, or any of its files, to forget them; a temporary file left by
// a killed process (".tmp-" prefix) is ignored and may be deleted.
package respcache
