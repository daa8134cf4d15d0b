package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"
	"time"
	"unicode"
)

// DefaultTimeout bounds a tool call when neither the tool nor the registry
// sets a timeout.
const DefaultTimeout = 30 * time.Second

// Registry holds the tools of a run and calls them safely. It is immutable
// after construction and safe for concurrent use.
type Registry struct {
	tools   map[string]Tool
	byNorm  map[string]string
	names   []string
	timeout time.Duration
}

// Option configures a Registry.
type Option func(*Registry)

// WithTimeout sets the default per-call timeout for tools that do not
// declare one. Optional. Defaults to DefaultTimeout (30s).
func WithTimeout(d time.Duration) Option {
	return func(r *Registry) {
		if d > 0 {
			r.timeout = d
		}
	}
}

// NewRegistry returns a registry of the given tools. Two tools whose names
// normalise to the same key are an error.
func NewRegistry(ts []Tool, opts ...Option) (*Registry, error) {
	r := &Registry{tools: map[string]Tool{}, byNorm: map[string]string{}, timeout: DefaultTimeout}
	for _, o := range opts {
		o(r)
	}
	for _, t := range ts {
		name := t.Name()
		norm := NormalizeName(name)
		if norm == "" {
			return nil, fmt.Errorf("tool with empty name: %w", ErrBadInput)
		}
		if prev, dup := r.byNorm[norm]; dup {
			return nil, fmt.Errorf("tools %q and %q have the same name once case and separators are ignored", prev, name)
		}
		r.tools[name] = t
		r.byNorm[norm] = name
		r.names = append(r.names, name)
	}
	sort.Strings(r.names)
	return r, nil
}

// With returns a registry of r's tools and extra, with r's default
// timeout. A name that clashes with another (NormalizeName) is an error,
// as in NewRegistry. r may be nil.
func (r *Registry) With(extra ...Tool) (*Registry, error) {
	timeout := DefaultTimeout
	var ts []Tool
	if r != nil {
		timeout = r.timeout
		ts = r.Tools()
	}
	return NewRegistry(append(ts, extra...), WithTimeout(timeout))
}

// NormalizeName folds case and drops separators ('_', '-', spaces, dots), so
// "Web-Search", "web_search" and "websearch" resolve to the same tool.
func NormalizeName(s string) string {
	var b strings.Builder
	for _, r := range strings.TrimSpace(s) {
		switch {
		case r == '_' || r == '-' || r == '.' || unicode.IsSpace(r):
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// Names returns the registered tool names, sorted.
func (r *Registry) Names() []string {
	if r == nil {
		return nil
	}
	return append([]string(nil), r.names...)
}

// Len returns the number of tools.
func (r *Registry) Len() int {
	if r == nil {
		return 0
	}
	return len(r.names)
}

// Resolve finds a tool by exact or normalised name.
func (r *Registry) Resolve(name string) (Tool, bool) {
	if r == nil {
		return nil, false
	}
	if t, ok := r.tools[name]; ok {
		return t, true
	}
	if canon, ok := r.byNorm[NormalizeName(name)]; ok {
		return r.tools[canon], true
	}
	return nil, false
}

// Has reports whether name resolves to a tool.
func (r *Registry) Has(name string) bool {
	_, ok := r.Resolve(name)
	return ok
}

// WithNames returns the set of r's tool names plus extra names (pseudo-tools
// that a node handles itself, such as a model worker). r may be nil.
func (r *Registry) WithNames(extra ...string) NameSet {
	return NameSet{reg: r, extra: extra}
}

// NameSet is a registry's tool names plus extra names, matched as Resolve
// matches them (case and separators ignored).
type NameSet struct {
	reg   *Registry
	extra []string
}

// Has reports whether name is a registered tool or one of the extra names.
func (s NameSet) Has(name string) bool {
	if s.reg.Has(name) {
		return true
	}
	n := NormalizeName(name)
	for _, e := range s.extra {
		if NormalizeName(e) == n {
			return true
		}
	}
	return false
}

// Names returns the registered names, sorted, then the extra names.
func (s NameSet) Names() []string {
	var out []string
	if s.reg != nil {
		out = s.reg.Names()
	}
	return append(out, s.extra...)
}

// Tools returns the tools in name order.
func (r *Registry) Tools() []Tool {
	out := make([]Tool, 0, r.Len())
	for _, n := range r.Names() {
		out = append(out, r.tools[n])
	}
	return out
}

// Subset returns a registry of only the named tools (resolved tolerantly).
func (r *Registry) Subset(names []string) (*Registry, error) {
	ts := make([]Tool, 0, len(names))
	for _, n := range names {
		t, ok := r.Resolve(n)
		if !ok {
			return nil, r.unknown(n)
		}
		ts = append(ts, t)
	}
	return NewRegistry(ts, WithTimeout(r.timeout))
}

func (r *Registry) unknown(name string) error {
	return &UnknownToolError{Name: name, Known: r.Names()}
}

// UnknownToolError is the error of a name that matches no tool of a
// registry: the name, and the tools there are. It matches
// ErrUnknownTool.
type UnknownToolError struct {
	Name  string
	Known []string
}

// Error says which name is unknown and lists the tools there are.
func (e *UnknownToolError) Error() string {
	return fmt.Sprintf("%s %q; available tools: %s", ErrUnknownTool, e.Name, strings.Join(e.Known, ", "))
}

// Is reports whether target is ErrUnknownTool.
func (e *UnknownToolError) Is(target error) bool { return target == ErrUnknownTool }

// MetaOf returns a tool's metadata, or the zero Meta.
func MetaOf(t Tool) Meta {
	if m, ok := t.(MetaProvider); ok {
		return m.Meta()
	}
	return Meta{}
}

// SchemaOf returns a tool's JSON schema, or a schema with one string
// property "input".
func SchemaOf(t Tool) map[string]any {
	if s, ok := t.(Schemer); ok {
		if sc := s.Schema(); sc != nil {
			return sc
		}
	}
	return StringSchema("input", "the tool input")
}

// StringSchema is the JSON schema of a single required string argument
// name, described by description: the schema of most tools, which take
// one text input.
func StringSchema(name, description string) map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			name: map[string]any{"type": "string", "description": description},
		},
		"required": []any{name},
	}
}

// Call runs the named tool with a timeout, turning panics into ErrToolPanic
// and overruns into ErrToolTimeout. A tool that ignores its context is
// abandoned (its goroutine finishes in the background) so the caller is
// never blocked past the timeout. It does not ask for approval of tools
// whose Meta says NeedsApproval: the engine's tool calls (node.ToolCall)
// do, through package journal.
func (r *Registry) Call(ctx context.Context, name, input string) (string, error) {
	t, ok := r.Resolve(name)
	if !ok {
		return "", r.unknown(name)
	}
	return r.Run(ctx, t, input)
}

// Run calls t, a tool Resolve returned (or a copy of one bound to a
// caller's state), as Call does: under its timeout, a panic recovered as
// ErrToolPanic.
func (r *Registry) Run(ctx context.Context, t Tool, input string) (string, error) {
	meta := MetaOf(t)
	timeout := r.timeout
	if meta.Timeout > 0 {
		timeout = meta.Timeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: fmt.Errorf("tool %q: %w: %v\n%s", t.Name(), ErrToolPanic, p, firstFrames(debug.Stack()))}
			}
		}()
		out, err := t.Call(cctx, input)
		done <- result{out, err}
	}()
	select {
	case res := <-done:
		if res.err != nil && cctx.Err() != nil && ctx.Err() == nil {
			return res.out, fmt.Errorf("tool %q: %w after %s: %w", t.Name(), ErrToolTimeout, timeout, res.err)
		}
		return res.out, res.err
	case <-cctx.Done():
		if ctx.Err() != nil {
			return "", fmt.Errorf("tool %q: %w", t.Name(), context.Cause(ctx))
		}
		return "", fmt.Errorf("tool %q: %w after %s", t.Name(), ErrToolTimeout, timeout)
	}
}

func firstFrames(stack []byte) string {
	lines := strings.Split(string(stack), "\n")
	if len(lines) > 12 {
		lines = lines[:12]
	}
	return strings.Join(lines, "\n")
}

// Info is a tool's description for listings and prompts.
type Info struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Schema      map[string]any `json:"schema"`
	Meta        Meta           `json:"meta"`
}

// Infos describes every tool, in name order, each description tidied by
// CleanDescription.
func (r *Registry) Infos() []Info {
	out := make([]Info, 0, r.Len())
	for _, t := range r.Tools() {
		out = append(out, Info{Name: t.Name(), Description: CleanDescription(t.Description()), Schema: SchemaOf(t), Meta: MetaOf(t)})
	}
	return out
}

// CleanDescription tidies a tool description for listings and prompts: each
// line is trimmed and loses a pair of double quotes that wraps it whole
// (langchaingo's DuckDuckGo tool writes its description as quoted,
// tab-indented lines), and every run of white space, line breaks included,
// becomes one space.
func CleanDescription(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if inner, ok := strings.CutPrefix(l, `"`); ok {
			if inner, ok = strings.CutSuffix(inner, `"`); ok && !strings.Contains(inner, `"`) {
				l = inner
			}
		}
		lines[i] = l
	}
	return strings.Join(strings.Fields(strings.Join(lines, " ")), " ")
}

// SchemaJSON renders a tool's schema compactly for prompts.
func SchemaJSON(t Tool) string {
	b, err := json.Marshal(SchemaOf(t))
	if err != nil {
		return "{}"
	}
	return string(b)
}

// PromptList renders tools for a prompt: one line per tool with its name,
// description and input schema, followed by the pseudo-tools in extra.
func PromptList(reg *Registry, extra ...Info) string {
	var b strings.Builder
	infos := append(reg.Infos(), extra...)
	if len(infos) == 0 {
		b.WriteString("(no tools: describe steps a worker can do by reasoning)\n")
	}
	for _, in := range infos {
		schema, err := json.Marshal(in.Schema)
		if err != nil {
			schema = []byte("{}")
		}
		fmt.Fprintf(&b, "- %s: %s Input schema: %s\n", in.Name, strings.Join(strings.Fields(in.Description), " "), schema)
	}
	return b.String()
}
