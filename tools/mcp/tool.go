package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/planner-engine/planner/tools"
)

// Tool is one tool of an MCP server as a planner tool. It implements
// tools.Tool, tools.Schemer, tools.MetaProvider and io.Closer, and is safe
// for concurrent use.
type Tool struct {
	client *Client
	name   string // the planner name: prefix + server name, sanitized
	remote string // the server's name
	desc   string
	schema map[string]any
	meta   tools.Meta
	sole   *param // the argument plain-text input goes to, if any
}

// Tool is a planner tool with a schema and metadata, and owns a server.
var (
	_ tools.Tool         = (*Tool)(nil)
	_ tools.Schemer      = (*Tool)(nil)
	_ tools.MetaProvider = (*Tool)(nil)
	_ io.Closer          = (*Tool)(nil)
)

// param is a top-level argument of a tool's schema.
type param struct {
	name string
	typ  string // JSON-schema type; "" when not declared
}

// Name implements tools.Tool: the prefix plus the server's tool name.
func (t *Tool) Name() string { return t.name }

// RemoteName returns the tool's name on the server.
func (t *Tool) RemoteName() string { return t.remote }

// Description implements tools.Tool: the server's description of the
// tool (or its title).
func (t *Tool) Description() string { return t.desc }

// Schema implements tools.Schemer: the server's JSON schema of the tool's
// arguments, as a fresh copy.
func (t *Tool) Schema() map[string]any { return cloneMap(t.schema) }

// Meta implements tools.MetaProvider. ReadOnly comes from the tool's
// readOnlyHint annotation, Timeout is the call timeout, and Network is set
// for URL servers and tools annotated openWorldHint: true.
func (t *Tool) Meta() tools.Meta { return t.meta }

// Close implements io.Closer: it closes the shared Client, stopping the
// server for all of its tools.
func (t *Tool) Close() error { return t.client.Close() }

// Call implements tools.Tool. input is a JSON object of arguments, or, for
// a tool whose schema has one required string argument (or only one
// argument), the plain text of that argument.
func (t *Tool) Call(ctx context.Context, input string) (string, error) {
	args, err := t.arguments(input)
	if err != nil {
		return "", err
	}
	return t.client.call(ctx, t, args)
}

// makeTools turns the server's tools into planner tools, applying
// Include, Exclude and Prefix.
func (c *Client) makeTools(cn *conn) ([]*Tool, error) {
	var names []string
	for _, st := range cn.list {
		names = append(names, st.Name)
	}
	lookup := func(n string) (string, bool) {
		if _, ok := cn.tools[n]; ok {
			return n, true
		}
		if c.cfg.Prefix != "" {
			if rest, ok := strings.CutPrefix(n, c.cfg.Prefix); ok {
				if _, ok := cn.tools[rest]; ok {
					return rest, true
				}
			}
		}
		return "", false
	}
	unknown := func(field, n string) error {
		return &ConfigError{Field: field, Err: fmt.Errorf("%w: server %q has no tool %q; its tools are: %s",
			tools.ErrUnknownTool, c.cfg.Name, n, strings.Join(names, ", "))}
	}
	var include map[string]bool
	if len(c.cfg.Include) > 0 {
		include = map[string]bool{}
		for _, n := range c.cfg.Include {
			r, ok := lookup(n)
			if !ok {
				return nil, unknown("include", n)
			}
			include[r] = true
		}
	}
	exclude := map[string]bool{}
	for _, n := range c.cfg.Exclude {
		r, ok := lookup(n)
		if !ok {
			return nil, unknown("exclude", n)
		}
		exclude[r] = true
	}
	var out []*Tool
	byName := map[string]string{}
	for _, st := range cn.list {
		if (include != nil && !include[st.Name]) || exclude[st.Name] {
			continue
		}
		t := c.newTool(st)
		if prev, dup := byName[t.name]; dup {
			return nil, &ConfigError{Field: "exclude", Err: fmt.Errorf("the server's tools %q and %q both become the planner tool %q; exclude one of them",
				prev, st.Name, t.name)}
		}
		byName[t.name] = st.Name
		out = append(out, t)
	}
	if len(out) == 0 {
		if len(cn.list) == 0 {
			return nil, fmt.Errorf("%w: server %s offers no tools", ErrStartup, c.label)
		}
		return nil, &ConfigError{Field: "exclude", Err: fmt.Errorf("include and exclude leave none of the tools of server %q: %s",
			c.cfg.Name, strings.Join(names, ", "))}
	}
	return out, nil
}

func (c *Client) newTool(st *gomcp.Tool) *Tool {
	t := &Tool{
		client: c,
		name:   toolName(c.cfg.Prefix + st.Name),
		remote: st.Name,
		schema: normalizeSchema(st.InputSchema),
		meta:   tools.Meta{Timeout: c.cfg.CallTimeout, Network: c.cfg.URL != ""},
	}
	if a := st.Annotations; a != nil {
		t.meta.ReadOnly = a.ReadOnlyHint
		if a.OpenWorldHint != nil && *a.OpenWorldHint {
			t.meta.Network = true
		}
	}
	t.desc = st.Description
	if t.desc == "" {
		t.desc = st.Title
	}
	if t.desc == "" && st.Annotations != nil {
		t.desc = st.Annotations.Title
	}
	if t.desc == "" {
		t.desc = fmt.Sprintf("Tool %s of the MCP server %s.", st.Name, c.cfg.Name)
	}
	t.sole = soleParam(t.schema)
	return t
}

// toolName keeps letters, digits, '_' and '-' and turns anything else into
// '_', as model APIs require of tool names.
func toolName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			return r
		}
		return '_'
	}, s)
}

// call runs the tool on the server.
func (c *Client) call(ctx context.Context, t *Tool, args map[string]any) (string, error) {
	cn, err := c.session(ctx)
	if err != nil {
		return "", fmt.Errorf("%s: %w", t.name, err)
	}
	if _, ok := cn.tools[t.remote]; !ok {
		return "", fmt.Errorf("%s: %w: server %q no longer offers the tool %q", t.name, tools.ErrUnknownTool, c.cfg.Name, t.remote)
	}
	cctx, cancel := context.WithTimeoutCause(ctx, c.cfg.CallTimeout, errCallTimeout)
	defer cancel()
	stop := context.AfterFunc(c.life, cancel)
	defer stop()
	res, err := cn.sess.CallTool(cctx, &gomcp.CallToolParams{Name: t.remote, Arguments: args})
	if err != nil {
		return "", fmt.Errorf("%s: %w", t.name, c.callError(ctx, cctx, cn, t, err))
	}
	out := resultText(res)
	if res.IsError {
		if out == "" {
			out = "(the server gave no message)"
		}
		return "", fmt.Errorf("%s: %w: %s", t.name, ErrToolError, out)
	}
	return out, nil
}

// callError classifies a failed call: closed client, cancelled, timed
// out, rejected by the server, or a broken connection.
func (c *Client) callError(ctx, cctx context.Context, cn *conn, t *Tool, err error) error {
	switch {
	case c.life.Err() != nil:
		return ErrClosed
	case ctx.Err() != nil:
		return context.Cause(ctx)
	case errors.Is(context.Cause(cctx), errCallTimeout):
		return fmt.Errorf("%w after %s (call_timeout)", tools.ErrToolTimeout, c.cfg.CallTimeout)
	}
	var werr *jsonrpc.Error
	if errors.As(err, &werr) && !errors.Is(err, gomcp.ErrConnectionClosed) && !errors.Is(err, gomcp.ErrSessionMissing) {
		switch werr.Code {
		case codeClientClosing, codeServerClosing, codeRejected:
			// Raised by the transport, not answered by the server.
		case jsonrpc.CodeInvalidParams:
			return fmt.Errorf("%w: %w: %s; %s", ErrToolError, tools.ErrBadInput, werr.Message, t.expected())
		default:
			return fmt.Errorf("%w: the server rejected the call: %s", ErrToolError, werr.Message)
		}
	}
	return c.fail(cn, err)
}

// JSON-RPC error codes the SDK's transport raises itself.
const (
	codeClientClosing = -32003
	codeServerClosing = -32004
	codeRejected      = -32005
)

// resultText renders a tool result for the model: text parts joined with
// newlines, placeholders for images and audio, embedded resources as their
// text (or URI), and the structured content as JSON when there is nothing
// else.
func resultText(res *gomcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *gomcp.TextContent:
			parts = append(parts, c.Text)
		case *gomcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data)))
		case *gomcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data)))
		case *gomcp.EmbeddedResource:
			parts = append(parts, resourceText(c.Resource))
		case *gomcp.ResourceLink:
			s := "[resource " + c.URI
			if c.Name != "" && c.Name != c.URI {
				s += " (" + c.Name + ")"
			}
			if c.Description != "" {
				s += ": " + c.Description
			}
			parts = append(parts, s+"]")
		default:
			if b, err := json.Marshal(c); err == nil {
				parts = append(parts, string(b))
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			return string(b)
		}
	}
	return strings.Join(parts, "\n")
}

func resourceText(r *gomcp.ResourceContents) string {
	switch {
	case r == nil:
		return "[resource]"
	case r.Text != "":
		return r.Text
	case len(r.Blob) > 0:
		return fmt.Sprintf("[resource %s, %s, %d bytes]", r.URI, orUnknown(r.MIMEType), len(r.Blob))
	default:
		return "[resource " + r.URI + "]"
	}
}

func orUnknown(mime string) string {
	if mime == "" {
		return "of unknown type"
	}
	return mime
}

// arguments turns a tool input into the call's arguments: a JSON object
// as it is, or plain text as the tool's single argument.
func (t *Tool) arguments(input string) (map[string]any, error) {
	s := stripFence(strings.TrimSpace(input))
	var jsonErr error
	if strings.HasPrefix(s, "{") {
		m, err := decodeObject(s)
		if err == nil {
			return t.renameInput(m), nil
		}
		jsonErr = err
	}
	switch {
	case (s == "" && !t.hasRequired()) || !t.hasParams():
		// A tool without arguments ignores the "none" or "{}" a model
		// writes for it.
		return map[string]any{}, nil
	case t.sole != nil && s != "":
		return map[string]any{t.sole.name: t.sole.coerce(s)}, nil
	}
	got := "plain text"
	switch {
	case s == "":
		got = "no input"
	case jsonErr != nil:
		got = "invalid JSON (" + jsonErr.Error() + ")"
	case strings.HasPrefix(s, "[") || strings.HasPrefix(s, `"`):
		got = "JSON that is not an object"
	}
	return nil, fmt.Errorf("%s: %w: got %s; %s", t.name, tools.ErrBadInput, got, t.expected())
}

// expected says which arguments the tool takes, for error messages.
func (t *Tool) expected() string {
	props, _ := t.schema["properties"].(map[string]any)
	if len(props) == 0 {
		return "it takes no arguments: send {}"
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	req := requiredOf(t.schema)
	var fields []string
	for _, n := range names {
		typ := typeOf(props[n])
		if typ == "" {
			typ = "any"
		}
		f := fmt.Sprintf("%q: <%s>", n, typ)
		if slices.Contains(req, n) {
			f += " (required)"
		}
		fields = append(fields, f)
	}
	return "send a JSON object of its arguments: {" + strings.Join(fields, ", ") + "}"
}

func (t *Tool) hasRequired() bool { return len(requiredOf(t.schema)) > 0 }

func (t *Tool) hasParams() bool {
	props, _ := t.schema["properties"].(map[string]any)
	return len(props) > 0
}

// renameInput maps {"input": ...}, the argument planner gives tools
// without a schema, onto the tool's single argument, or drops it for a
// tool without arguments.
func (t *Tool) renameInput(m map[string]any) map[string]any {
	v, ok := m["input"]
	if !ok || len(m) != 1 || t.sole != nil && t.sole.name == "input" {
		return m
	}
	if !t.hasParams() {
		return map[string]any{}
	}
	if t.sole == nil {
		return m
	}
	if s, ok := v.(string); ok {
		v = t.sole.coerce(s)
	}
	return map[string]any{t.sole.name: v}
}

// coerce converts plain text to the argument's type when the text is a
// JSON value of that type, and keeps it as a string otherwise.
func (p *param) coerce(s string) any {
	switch p.typ {
	case "", "string":
		var str string
		if strings.HasPrefix(s, `"`) && json.Unmarshal([]byte(s), &str) == nil {
			return str
		}
		return s
	case "number", "integer":
		var n json.Number
		if json.Unmarshal([]byte(s), &n) == nil {
			return n
		}
	case "boolean":
		switch strings.ToLower(s) {
		case "true":
			return true
		case "false":
			return false
		}
	case "array":
		var a []any
		if decodeJSON(s, &a) == nil {
			return a
		}
		return []any{s}
	case "object":
		if m, err := decodeObject(s); err == nil {
			return m
		}
	}
	return s
}

// soleParam finds the argument plain text goes to: the one required
// string argument, or else the only argument.
func soleParam(schema map[string]any) *param {
	props, _ := schema["properties"].(map[string]any)
	req := requiredOf(schema)
	if len(req) == 1 {
		if p, ok := props[req[0]]; ok && typeOf(p) == "string" {
			return &param{name: req[0], typ: "string"}
		}
	}
	if len(props) == 1 {
		for n, p := range props {
			return &param{name: n, typ: typeOf(p)}
		}
	}
	return nil
}

func requiredOf(schema map[string]any) []string {
	var out []string
	switch r := schema["required"].(type) {
	case []any:
		for _, v := range r {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
	case []string:
		out = append(out, r...)
	}
	return out
}

// typeOf returns a property schema's type; of a union such as
// ["string", "null"], the first that is not "null".
func typeOf(p any) string {
	m, _ := p.(map[string]any)
	switch t := m["type"].(type) {
	case string:
		return t
	case []any:
		for _, v := range t {
			if s, ok := v.(string); ok && s != "null" {
				return s
			}
		}
	}
	return ""
}

// normalizeSchema returns the server's input schema as a map with "type":
// "object" and "properties", without the "$schema" key that some model
// APIs reject.
func normalizeSchema(in any) map[string]any {
	var m map[string]any
	switch v := in.(type) {
	case map[string]any:
		m = cloneMap(v)
	case nil:
	default:
		if b, err := json.Marshal(v); err == nil {
			_ = json.Unmarshal(b, &m)
		}
	}
	if m == nil {
		m = map[string]any{}
	}
	delete(m, "$schema")
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
	}
	if _, ok := m["properties"]; !ok {
		m["properties"] = map[string]any{}
	}
	return m
}

func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return cloneMap(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = cloneValue(e)
		}
		return out
	default:
		return v
	}
}

// stripFence removes a Markdown code fence around s.
func stripFence(s string) string {
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") || len(s) < 6 {
		return s
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "```"), "```")
	if i := strings.IndexByte(s, '\n'); i >= 0 && !strings.ContainsAny(s[:i], "{[\"") {
		s = s[i+1:] // the language tag
	}
	return strings.TrimSpace(s)
}

func decodeObject(s string) (map[string]any, error) {
	var m map[string]any
	if err := decodeJSON(s, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("null is not an object")
	}
	return m, nil
}

// decodeJSON decodes exactly one JSON value, keeping numbers exact.
func decodeJSON(s string, out any) error {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("unexpected text after the JSON value")
	}
	return nil
}
