// Package config defines the YAML pipeline schema and loads it through viper
// with unknown keys rejected, ${VAR} expansion, and errors that name the
// file, line and key.
//
// A pipeline file looks like:
//
//	name: react
//	description: ReAct agent with tools
//	llm: {provider: scripted, script: scripts/react.yaml}
//	tools: [calculator, {name: search, corpus: demo}]
//	limits: {max_steps: 50, timeout: 2m}
//	nodes:
//	  - id: act
//	    type: react
//	    max_iterations: 8      # any other key is a setting of the node type
//	edges:
//	  - {from: START, to: act}
//	  - {from: act, to: END}
//	  - {from: replan, to: {continue: execute, finish: finalize}}
//
// An edge whose to: is a list fans out: the branches run concurrently,
// each on its own copy of the run state (at most limits.max_parallel node
// executions at once, default 8), until they reach the `join` node that
// merges them; what leaves a branch is what its join takes:
//
//	nodes:
//	  - {id: a, type: cot}
//	  - {id: b, type: cot}
//	  - {id: pick, type: join, wait: all, merge: vote, from: answer, into: answer}
//	edges:
//	  - {from: START, to: [a, b]}
//	  - {from: a, to: pick}
//	  - {from: b, to: pick}
//	  - {from: pick, to: END}
package config

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"
)

// Pipeline is one YAML pipeline.
type Pipeline struct {
	// Name identifies the pipeline in traces and reports. Required.
	Name string `mapstructure:"name"`
	// Description is a one-line summary shown by `planner paradigms`.
	Description string `mapstructure:"description"`
	// LLM is the default model of every node. Optional: the --llm flag
	// overrides it; with neither, runs fail with a clear error.
	LLM LLM `mapstructure:"llm"`
	// Tools lists the tools available to nodes, by name or with settings.
	Tools []Tool `mapstructure:"tools"`
	// Limits bounds the run.
	Limits Limits `mapstructure:"limits"`
	// Nodes are the graph's nodes.
	Nodes []Node `mapstructure:"nodes"`
	// Edges join nodes; START and END are the virtual entry and exit.
	Edges []Edge `mapstructure:"edges"`
	// Inputs names the vars the pipeline expects to start with: when it
	// runs as a subgraph or a map's per-item pipeline (the parent passes
	// them with vars:), or from a caller (the vars of POST /api/runs and
	// of an MCP tool call), so that the load-time check of var references
	// accepts them when the file is built on its own. Optional.
	Inputs []string `mapstructure:"inputs"`
	// Extensions are the top-level keys that start with "x-": blocks the
	// pipeline defines once and refers to with YAML anchors and aliases
	// (x-sort: &sort {...}, then {id: a, <<: *sort}). planner ignores
	// them otherwise; any other unknown top-level key is an error.
	Extensions map[string]any `mapstructure:",remain"`

	// File is the path the pipeline was loaded from.
	File  string `mapstructure:"-"`
	lines lineIndex
}

// LLM configures a model.
type LLM struct {
	// Provider is openai, ollama, anthropic, googleai, mistral, scripted,
	// sim or replay.
	Provider string `mapstructure:"provider"`
	// Model is the provider's model name.
	Model string `mapstructure:"model"`
	// BaseURL overrides the provider endpoint (OpenAI-compatible servers).
	BaseURL string `mapstructure:"base_url"`
	// APIKeyEnv names the environment variable holding the key. Defaults
	// per provider (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...). Keys are never
	// written in YAML.
	APIKeyEnv string `mapstructure:"api_key_env"`
	// Temperature is the sampling temperature; unset uses the provider's.
	Temperature *float64 `mapstructure:"temperature"`
	// MaxTokens caps completion tokens; 0 uses the provider's default.
	MaxTokens int `mapstructure:"max_tokens"`
	// Timeout bounds each attempt of one model call (each retry gets its
	// own). 0 means the default 2m (middleware.DefaultCallTimeout) for real
	// providers and no per-call timeout for the offline ones (scripted, sim,
	// replay).
	Timeout time.Duration `mapstructure:"timeout"`
	// Script is the scripted model's script or the replay cassette path,
	// relative to the pipeline file.
	Script string `mapstructure:"script"`
	// Profile selects the sim model's fault profile (perfect, noisy, ...).
	Profile string `mapstructure:"profile"`
	// Seed seeds the offline models that draw at random (the simulator's
	// faults); compare sets it from --seed. Default 1.
	Seed uint64 `mapstructure:"seed"`
	// Retry configures retries of failed calls.
	Retry Retry `mapstructure:"retry"`
	// RateLimit bounds request rate and concurrency.
	RateLimit RateLimit `mapstructure:"rate_limit"`
	// MaxReplyBytes caps each text field of a model reply (its content, its
	// reasoning, each tool call's arguments), in bytes; a longer field is
	// cut and marked "[reply truncated: ...]". Zero or negative means
	// DefaultMaxReplyBytes (256 KiB); at most MaxMaxReplyBytes (64 MiB).
	// Applies to every provider, offline ones included; a recorded cassette
	// keeps the raw reply.
	MaxReplyBytes int `mapstructure:"max_reply_bytes"`
	// PromptCache (anthropic only) marks the stable prefix of each request
	// for Anthropic's prompt cache: the system prompt and, in loops, the
	// conversation up to the newest turn, where the prompt is long enough
	// to be cached (about 1024 tokens). Calls that repeat a cached prefix
	// within five minutes (the next ReAct step, the next task of a node)
	// pay a tenth of the input price for it; writing it to the cache costs
	// 1.25 times the input price once, so a prefix never read again costs
	// a quarter more. Unset means true; false sends requests unmarked.
	// Other providers ignore it (OpenAI caches long prompts by itself).
	PromptCache *bool `mapstructure:"prompt_cache" json:"PromptCache,omitempty"`
	// EmptyRetries is how many times a model call whose reply is empty (no
	// text, no tool call) is made again, with EmptyNudge appended to its
	// messages, before the empty reply goes to the node, which counts it
	// as a failure. It applies to every model call of every node,
	// finalizers included; a react node's max_empty_retries, when set,
	// takes its place for the loop's own turns. Unset means DefaultEmptyRetries (2);
	// 0 disables the retries; negative is an error.
	EmptyRetries *int `mapstructure:"empty_retries" json:"EmptyRetries,omitempty"`
	// EmptyNudge is the user message appended to a retried call's messages
	// (EmptyRetries). Empty means the default, llm.DefaultEmptyNudge:
	// "Your previous reply was empty. Reply again, following the
	// instructions above."
	EmptyNudge string `mapstructure:"empty_nudge" json:"EmptyNudge,omitempty"`
	// EmbeddingModel is the model that embeds texts for the providers that
	// offer embeddings (tool retrieval's methods "embedding" and "hybrid"),
	// called at the same endpoint (base_url) with the same key. Empty means
	// the provider's default: openai text-embedding-3-small, ollama
	// nomic-embed-text, googleai text-embedding-004, mistral mistral-embed
	// (the only one its adapter takes). anthropic and the offline providers
	// offer no embeddings and ignore it.
	EmbeddingModel string `mapstructure:"embedding_model" json:"EmbeddingModel,omitempty"`
}

// DefaultEmptyRetries is LLM.EmptyRetries when unset.
const DefaultEmptyRetries = 2

// EmptyReplyRetries returns EmptyRetries, or DefaultEmptyRetries when it
// is unset.
func (l LLM) EmptyReplyRetries() int {
	if l.EmptyRetries == nil {
		return DefaultEmptyRetries
	}
	return *l.EmptyRetries
}

// Model reply size limits.
const (
	// DefaultMaxReplyBytes is LLM.MaxReplyBytes when unset: 256 KiB.
	DefaultMaxReplyBytes = 256 << 10
	// MaxMaxReplyBytes is the largest LLM.MaxReplyBytes accepted: 64 MiB.
	MaxMaxReplyBytes = 64 << 20
)

// ReplyLimit returns MaxReplyBytes, or DefaultMaxReplyBytes when it is
// zero or negative.
func (l LLM) ReplyLimit() int {
	if l.MaxReplyBytes <= 0 {
		return DefaultMaxReplyBytes
	}
	return l.MaxReplyBytes
}

// Validate reports settings of l that cannot work, as an error wrapping
// ErrInvalid whose text names the key, such as "llm.max_reply_bytes".
func (l LLM) Validate() error {
	if key, msg := l.problem(); key != "" {
		return fmt.Errorf("%w: llm.%s: %s", ErrInvalid, key, msg)
	}
	return nil
}

// problem returns the key (relative to the llm block) and description of
// the first invalid setting of l, or "", "".
func (l LLM) problem() (key, msg string) {
	switch {
	case l.MaxReplyBytes > MaxMaxReplyBytes:
		return "max_reply_bytes", fmt.Sprintf("%d is more than the %d (64 MiB) allowed; leave it unset for the default %d (256 KiB)",
			l.MaxReplyBytes, MaxMaxReplyBytes, DefaultMaxReplyBytes)
	case l.Timeout < 0:
		return "timeout", fmt.Sprintf("%s is negative; leave it unset for the default (2m for real providers)", l.Timeout)
	case l.Retry.MaxRetryAfter < 0:
		return "retry.max_retry_after", fmt.Sprintf("%s is negative; leave it unset for the default 2m", l.Retry.MaxRetryAfter)
	case l.EmptyRetries != nil && *l.EmptyRetries < 0:
		return "empty_retries", fmt.Sprintf("%d is negative; use 0 to turn the retries of empty replies off, or leave it unset for the default %d",
			*l.EmptyRetries, DefaultEmptyRetries)
	case l.EmptyNudge != "" && strings.TrimSpace(l.EmptyNudge) == "":
		return "empty_nudge", "is blank; write the message to send after an empty reply, or leave it unset for the default"
	case l.EmbeddingModel != "" && strings.TrimSpace(l.EmbeddingModel) == "":
		return "embedding_model", "is blank; name the provider's embedding model, or leave it unset for the provider's default"
	}
	return "", ""
}

// Retry configures model-call retries.
type Retry struct {
	// MaxAttempts is the total number of tries. Default 3; 1 disables retries.
	MaxAttempts int `mapstructure:"max_attempts"`
	// BaseDelay is the first backoff. Default 500ms.
	BaseDelay time.Duration `mapstructure:"base_delay"`
	// MaxDelay caps one backoff. Default 20s.
	MaxDelay time.Duration `mapstructure:"max_delay"`
	// MaxRetryAfter is the longest wait a server may ask for (Retry-After)
	// before the call fails at once instead of waiting. Default 2m. Waits
	// that would pass the run's deadline (limits.timeout) fail at once too.
	MaxRetryAfter time.Duration `mapstructure:"max_retry_after"`
}

// RateLimit bounds model calls.
type RateLimit struct {
	// RequestsPerSecond caps the call rate; 0 means unlimited.
	RequestsPerSecond float64 `mapstructure:"requests_per_second"`
	// MaxConcurrent caps calls in flight; 0 means unlimited.
	MaxConcurrent int `mapstructure:"max_concurrent"`
}

// Tool is one tool entry; a bare string is shorthand for {name: ...}.
// An entry {mcp: {command: [...]}} or {mcp: {url: ...}} names an MCP
// server instead of a built-in tool: it loads with Name MCPTool and the
// mapping under mcp as its Settings (an approve key beside mcp is kept).
type Tool struct {
	// Name is the built-in tool's name.
	Name string `mapstructure:"name"`
	// Settings are the tool's other keys (corpus, timeout, ...).
	Settings map[string]any `mapstructure:",remain"`
}

// MCPTool is the Name of a tools entry that names an MCP server; a
// pipeline may list several.
const MCPTool = "mcp"

// liftMCP turns an entry {mcp: {...}, approve: ...} into Name MCPTool
// with the mapping under mcp as its settings.
func (t *Tool) liftMCP() error {
	raw, ok := t.Settings[MCPTool]
	if !ok {
		return nil
	}
	if t.Name != "" {
		return errors.New(`an entry has either "name" (a built-in tool) or "mcp" (an MCP server), not both`)
	}
	inner, ok := raw.(map[string]any)
	if !ok {
		return errors.New("mcp must be a mapping with a command (the server's argv) or a url")
	}
	settings := make(map[string]any, len(inner)+len(t.Settings))
	for k, v := range inner {
		settings[k] = v
	}
	for k, v := range t.Settings {
		if k == MCPTool {
			continue
		}
		if k != "approve" {
			return fmt.Errorf("key %q belongs inside the mcp mapping", k)
		}
		settings[k] = v
	}
	t.Name, t.Settings = MCPTool, settings
	return nil
}

// Limits bounds a run.
type Limits struct {
	// MaxSteps bounds node executions per run. Default 50.
	MaxSteps int `mapstructure:"max_steps"`
	// Timeout bounds the whole run, model calls, retries and tools
	// included. Default DefaultTimeout (10m); a negative value (for
	// example -1s) means no limit.
	Timeout time.Duration `mapstructure:"timeout"`
	// MaxModelCalls bounds the model calls of one run; once reached, a
	// ReAct loop stops with failure "budget" and its finalizer answers
	// from the work so far (one more call), other nodes fail the run.
	// Default 0: no bound.
	MaxModelCalls int `mapstructure:"max_model_calls"`
	// MaxTokens bounds the prompt plus completion tokens of one run, as
	// MaxModelCalls does. Default 0: no bound.
	MaxTokens int `mapstructure:"max_tokens"`
	// MaxCostUSD bounds the cost of one run in US dollars (the price
	// table's figure), as MaxModelCalls does. Default 0: no bound.
	MaxCostUSD float64 `mapstructure:"max_cost_usd"`
	// MaxParallel bounds how many node executions of parallel branches
	// (an edge whose to: is a list) run at once in one run, over all its
	// fan-outs; the model calls inside a node (self_consistency samples)
	// are bounded by the node's own settings. Default DefaultMaxParallel
	// (8).
	MaxParallel int `mapstructure:"max_parallel"`
}

// DefaultMaxParallel is Limits.MaxParallel when unset.
const DefaultMaxParallel = 8

// DefaultMaxSteps is Limits.MaxSteps when unset.
const DefaultMaxSteps = 50

// DefaultTimeout is Limits.Timeout when unset: no run waits without bound
// unless its pipeline says so.
const DefaultTimeout = 10 * time.Minute

// Node is one node declaration.
type Node struct {
	// ID is unique within the pipeline.
	ID string `mapstructure:"id"`
	// Type selects the node kind (see `planner paradigms` / the README).
	Type string `mapstructure:"type"`
	// Settings are every other key, validated by the node kind.
	Settings map[string]any `mapstructure:",remain"`
}

// Edge joins nodes. To is a node id, a map from route label to node id,
// or a list of node ids: a fan-out, whose branches run concurrently, each
// on its own copy of the run state, until they reach their `join` node
// (see FanOut).
type Edge struct {
	From string `mapstructure:"from"`
	To   any    `mapstructure:"to"`
}

// FanOut returns the node ids of an edge whose To is a list, in order,
// and true; nil and false for any other edge. It fails when an item is
// not a node id.
func (e Edge) FanOut() ([]string, bool, error) {
	list, ok := e.To.([]any)
	if !ok {
		return nil, false, nil
	}
	if len(list) == 0 {
		return nil, true, errors.New("a fan-out lists at least one node id")
	}
	out := make([]string, len(list))
	for i, t := range list {
		s, ok := t.(string)
		if !ok || strings.TrimSpace(s) == "" {
			return nil, true, fmt.Errorf("fan-out item %d must be a node id, got %v", i+1, t)
		}
		out[i] = s
	}
	return out, true, nil
}

// Targets returns the edge's targets: route label ("" for a plain edge) to
// node id, or an error when To has the wrong shape. A fan-out (a list,
// FanOut) has no targets of this kind: it returns an empty map.
func (e Edge) Targets() (map[string]string, error) {
	switch v := e.To.(type) {
	case []any:
		if _, _, err := e.FanOut(); err != nil {
			return nil, err
		}
		return map[string]string{}, nil
	case string:
		return map[string]string{"": v}, nil
	case map[string]any:
		out := make(map[string]string, len(v))
		for k, t := range v {
			s, ok := t.(string)
			if !ok {
				return nil, fmt.Errorf("route %q must map to a node id, got %T", k, t)
			}
			out[k] = s
		}
		return out, nil
	case nil:
		return nil, errors.New("edge has no 'to'")
	}
	return nil, fmt.Errorf("'to' must be a node id, a map of route to node id or a list of node ids (a fan-out), got %T", e.To)
}

// Sentinel errors.
var (
	// ErrInvalid marks every configuration error.
	ErrInvalid = errors.New("invalid pipeline")
)

// Error is a configuration error located in a file.
type Error struct {
	File string
	Line int
	Key  string
	Msg  string
	Err  error
}

func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	return loc + ": " + e.Msg
}

// Unwrap returns the cause, which always wraps ErrInvalid.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an Error at the line of key (a dotted path such as
// "nodes[2].type"; the nearest existing parent's line is used).
func (p *Pipeline) Errorf(key string, cause error, format string, args ...any) *Error {
	if cause == nil {
		cause = ErrInvalid
	} else if !errors.Is(cause, ErrInvalid) {
		cause = fmt.Errorf("%w: %w", ErrInvalid, cause)
	}
	return &Error{File: p.File, Line: p.lines.find(key), Key: key, Msg: fmt.Sprintf(format, args...), Err: cause}
}

// Line returns the line of a dotted key path, or 0.
func (p *Pipeline) Line(key string) int { return p.lines.find(key) }

// Dir returns the folder of the pipeline file, for resolving relative paths.
func (p *Pipeline) Dir() string { return filepath.Dir(p.File) }

// Load reads, expands and strictly decodes a pipeline file, then checks
// its own structure (ids, types present, edge shapes). Graph-level checks
// (reachability, routes) happen when the pipeline is built.
func Load(path string) (*Pipeline, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Msg: err.Error(), Err: fmt.Errorf("%w: %w", ErrInvalid, err)}
	}
	return Parse(path, raw, os.LookupEnv)
}

// Parse decodes pipeline YAML read from path; lookup resolves ${VAR} and
// ${VAR:-default} references, which are replaced in the text before it is
// parsed. A set variable's value is used even when empty, values are never
// expanded again, a default may hold further references (up to 8 levels),
// and an unset variable without a default is an error naming its line.
func Parse(path string, raw []byte, lookup func(string) (string, bool)) (*Pipeline, error) {
	return parse(path, raw, lookup, nil)
}

// ParseAllowed is Parse for YAML from an untrusted source (a pipeline
// posted to the HTTP server): ${VAR} references see only the variables
// allow lets through, looked up with lookup. A reference to any other
// variable counts as unset (its default applies), and one without a
// default is an error that says the variable is not allowed, never
// whether it is set.
func ParseAllowed(path string, raw []byte, allow EnvAllowList, lookup func(string) (string, bool)) (*Pipeline, error) {
	return parse(path, raw, allow.Lookup(lookup), func(name string) bool { return !allow.Allows(name) })
}

// parse is Parse; denied, when not nil, says which variables lookup never
// sees, for the error about a missing one.
func parse(path string, raw []byte, lookup func(string) (string, bool), denied func(string) bool) (*Pipeline, error) {
	p := &Pipeline{File: path}
	expanded, missing, err := expandEnv(raw, lookup)
	if err != nil {
		var nest *envNestingError
		line := 0
		if errors.As(err, &nest) {
			line = lineAt(raw, nest.Offset)
		}
		return nil, &Error{File: path, Line: line, Msg: err.Error(), Err: fmt.Errorf("%w: %w", ErrInvalid, err)}
	}
	if len(missing) > 0 {
		name := missing[0].Name
		msg := fmt.Sprintf("environment variable %s is not set (export it, or write ${%s:-default})", name, name)
		if denied != nil && denied(name) {
			msg = fmt.Sprintf("environment variable %s is not one this pipeline may read (the server's allow-list, planner serve --allow-env, does not name it); write ${%s:-default}", name, name)
		}
		return nil, &Error{File: path, Line: lineAt(raw, missing[0].Offset), Key: name, Msg: msg, Err: ErrInvalid}
	}
	// Lines are indexed after expansion, so that references inside flow
	// collections ({model: ${MODEL}}) parse; they match the file's lines
	// unless a value spans lines.
	idx, err := indexLines(expanded)
	if err != nil {
		line := yamlErrLine(err)
		return nil, &Error{File: path, Line: line, Msg: "YAML syntax: " + cleanYAMLErr(err), Err: fmt.Errorf("%w: %w", ErrInvalid, err)}
	}
	p.lines = idx
	v := viper.New()
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(expanded)); err != nil {
		return nil, &Error{File: path, Msg: "YAML: " + err.Error(), Err: fmt.Errorf("%w: %w", ErrInvalid, err)}
	}
	// mapstructure decodes a key named "-" into the field tagged "-"
	// (File) instead of reporting it.
	if v.InConfig("-") {
		return nil, p.Errorf("-", nil, "%s", unknownKey("-", "", ""))
	}
	hook := mapstructure.ComposeDecodeHookFunc(
		mapstructure.StringToTimeDurationHookFunc(),
		toolShorthandHook,
	)
	if err := v.UnmarshalExact(p, viper.DecodeHook(hook)); err != nil {
		return nil, p.decodeError(err, v.AllSettings())
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	return p, nil
}

var invalidKeys = regexp.MustCompile(`'([^']*)' has invalid keys: ([^\n]+)`)

// decodeError turns an error of decoding raw (the file's settings, as
// viper read them) into p into one line at the key's line: an unknown key
// with the nearest known one and the others, or a value of the wrong type
// with what the key wants ("limits.max_steps: want a whole number, got
// \"five\"").
func (p *Pipeline) decodeError(err error, raw map[string]any) error {
	if m := invalidKeys.FindStringSubmatch(err.Error()); m != nil {
		keys := strings.Split(m[2], ", ")
		sort.Strings(keys)
		path := m[1]
		if strings.HasPrefix(path, "config.") {
			path = "" // mapstructure names the root by its Go type
		}
		full := keys[0]
		if path != "" {
			full = path + "." + keys[0]
		}
		return p.Errorf(full, nil, "%s", unknownKey(keys[0], path, ""))
	}
	if key, msg, ok := typeProblem(err, reflect.TypeFor[Pipeline](), raw); ok {
		return p.Errorf(key, err, "%s: %s", key, msg)
	}
	return p.Errorf("", err, "%v", err)
}

// unknownKey says that name is not a key of the section at path ("" for
// the top level): the known key it most likely misspells first, then
// every known key, then more (a further hint, or "").
func unknownKey(name, path, more string) string {
	known := knownAt(path)
	list := "see the README"
	if len(known) > 0 {
		list = strings.Join(known, ", ")
	}
	if more != "" {
		more = "; " + more
	}
	return fmt.Sprintf("unknown key %q%s (%sknown keys: %s%s)", name, inWhere(path), DidYouMean(name, known), list, more)
}

func inWhere(path string) string {
	if path == "" {
		return " at top level"
	}
	return " in " + path
}

var indexSuffix = regexp.MustCompile(`\[\d+\]`)

// sections maps a key path (list indexes removed) to the struct decoded
// there, so that unknown-key errors can list the keys that are known.
var sections = map[string]reflect.Type{
	"":               reflect.TypeFor[Pipeline](),
	"llm":            reflect.TypeFor[LLM](),
	"limits":         reflect.TypeFor[Limits](),
	"edges":          reflect.TypeFor[Edge](),
	"llm.retry":      reflect.TypeFor[Retry](),
	"llm.rate_limit": reflect.TypeFor[RateLimit](),
}

// knownAt lists the keys of the section at path, in declaration order;
// none for a path that is not a section.
func knownAt(path string) []string {
	t, ok := sections[indexSuffix.ReplaceAllString(path, "")]
	if !ok {
		return nil
	}
	var keys []string
	for f := range t.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
		if f.IsExported() && name != "-" && name != "" && opts != "remain" {
			keys = append(keys, name)
		}
	}
	return keys
}

func toolShorthandHook(from, to reflect.Type, data any) (any, error) {
	if from.Kind() == reflect.String && to == reflect.TypeOf(Tool{}) {
		return map[string]any{"name": data}, nil
	}
	return data, nil
}

func (p *Pipeline) check() error {
	for _, k := range slices.Sorted(maps.Keys(p.Extensions)) {
		if !strings.HasPrefix(k, "x-") {
			return p.Errorf(k, nil, "%s", unknownKey(k, "", "a block kept for YAML anchors needs a name starting with x-"))
		}
	}
	if strings.TrimSpace(p.Name) == "" {
		return p.Errorf("name", nil, "missing required key \"name\"")
	}
	if len(p.Nodes) == 0 {
		return p.Errorf("nodes", nil, "a pipeline needs at least one node under \"nodes\"")
	}
	seen := map[string]int{}
	for i, n := range p.Nodes {
		key := fmt.Sprintf("nodes[%d]", i)
		if strings.TrimSpace(n.ID) == "" {
			return p.Errorf(key, nil, "node %d has no \"id\"", i+1)
		}
		if n.ID == "START" || n.ID == "END" {
			return p.Errorf(key+".id", nil, "node id %q is reserved; choose another id", n.ID)
		}
		if prev, dup := seen[n.ID]; dup {
			return p.Errorf(key+".id", nil, "duplicate node id %q (first declared at line %d)", n.ID, p.Line(fmt.Sprintf("nodes[%d]", prev)))
		}
		seen[n.ID] = i
		if strings.TrimSpace(n.Type) == "" {
			return p.Errorf(key, nil, "node %q has no \"type\"", n.ID)
		}
	}
	for i, e := range p.Edges {
		key := fmt.Sprintf("edges[%d]", i)
		if e.From == "" {
			return p.Errorf(key, nil, "edge %d has no \"from\"", i+1)
		}
		if _, err := e.Targets(); err != nil {
			return p.Errorf(key+".to", nil, "edge from %q: %v", e.From, err)
		}
	}
	toolSeen := map[string]bool{}
	for i := range p.Tools {
		if err := p.Tools[i].liftMCP(); err != nil {
			return p.Errorf(fmt.Sprintf("tools[%d]", i), nil, "tool %d: %v", i+1, err)
		}
		t := p.Tools[i]
		if t.Name == "" {
			return p.Errorf(fmt.Sprintf("tools[%d]", i), nil, "tool %d has no \"name\" (or \"mcp\" for an MCP server)", i+1)
		}
		if t.Name == MCPTool {
			continue
		}
		if toolSeen[t.Name] {
			return p.Errorf(fmt.Sprintf("tools[%d]", i), nil, "tool %q listed twice", t.Name)
		}
		toolSeen[t.Name] = true
	}
	if key, msg := p.LLM.problem(); key != "" {
		return p.Errorf("llm."+key, nil, "llm.%s: %s", key, msg)
	}
	if p.Limits.MaxSteps < 0 {
		return p.Errorf("limits.max_steps", nil, "max_steps must be positive")
	}
	for _, b := range []struct {
		key string
		v   float64
	}{{"max_model_calls", float64(p.Limits.MaxModelCalls)}, {"max_tokens", float64(p.Limits.MaxTokens)}, {"max_cost_usd", p.Limits.MaxCostUSD}} {
		if b.v < 0 {
			return p.Errorf("limits."+b.key, nil, "limits.%s must not be negative (0 or leaving it out sets no bound)", b.key)
		}
	}
	if p.Limits.MaxParallel < 0 {
		return p.Errorf("limits.max_parallel", nil, "limits.max_parallel must be positive (leave it out for the default %d)", DefaultMaxParallel)
	}
	if p.Limits.MaxSteps == 0 {
		p.Limits.MaxSteps = DefaultMaxSteps
	}
	if p.Limits.MaxParallel == 0 {
		p.Limits.MaxParallel = DefaultMaxParallel
	}
	if p.Limits.Timeout == 0 {
		p.Limits.Timeout = DefaultTimeout
	}
	return nil
}

// NodeLine returns the line of node i's key (or the node itself).
func (p *Pipeline) NodeLine(i int, key string) int {
	if key != "" {
		if l := p.lines.exact(fmt.Sprintf("nodes[%d].%s", i, strings.ToLower(key))); l > 0 {
			return l
		}
	}
	return p.Line(fmt.Sprintf("nodes[%d]", i))
}

// Sub decodes an inline pipeline written under key of p (a node's
// `graph:` block, key "nodes[3].graph") and checks it as Load checks a
// file. Its errors name p's file and the lines under key; relative paths
// resolve against p's folder. An inline pipeline has no name of its own
// (name is its position, key, unless it sets one) and may leave out
// llm, which the caller then takes from p.
func (p *Pipeline) Sub(key string, raw map[string]any) (*Pipeline, error) {
	key = strings.ToLower(key)
	sub := &Pipeline{File: p.File, lines: lineIndex{}}
	prefix := key + "."
	for k, line := range p.lines {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			sub.lines[rest] = line
		}
	}
	sub.lines[""] = p.lines.find(key)
	if _, ok := raw["name"]; !ok {
		raw = maps.Clone(raw)
		raw["name"] = key
	}
	var md mapstructure.Metadata
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		Result:     sub,
		Metadata:   &md,
		DecodeHook: mapstructure.ComposeDecodeHookFunc(mapstructure.StringToTimeDurationHookFunc(), toolShorthandHook),
	})
	if err != nil {
		return nil, p.Errorf(key, err, "%s: %v", key, err)
	}
	if err := dec.Decode(raw); err != nil {
		if bad, msg, ok := typeProblem(err, reflect.TypeFor[Pipeline](), raw); ok {
			return nil, sub.Errorf(bad, err, "%s: %s: %s", key, bad, msg)
		}
		return nil, p.Errorf(key, err, "%s: %v", key, err)
	}
	if len(md.Unused) > 0 {
		sort.Strings(md.Unused)
		bad := md.Unused[0]
		return nil, sub.Errorf(bad, nil, "%s: %s", key, unknownKey(bad, "", ""))
	}
	if err := sub.check(); err != nil {
		return nil, err
	}
	return sub, nil
}
