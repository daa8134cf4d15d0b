// Package scripted is an offline language model that plays back a script of
// replies. It exists for demos, tests and reproducing a run without a real
// provider; everything it says is labelled as scripted.
//
// # Script format (YAML or JSON; a .jsonl file is one reply per line)
//
//	strict: true          # default true: every call must match the next reply, in order
//	ignore_stop: false    # default false: cut replies at stop words, as real APIs do
//	fallback: ""          # non-strict only: reply used when no reply matches
//	replies:
//	  - node: act         # optional: must equal the calling node's id or type
//	    role: finalize    # optional: must equal the caller's role inside the node
//	    contains: "Paris" # optional: substring the prompt must contain
//	    regex: "step \\d" # optional: regular expression the prompt must match
//	    text: "Thought: ...\nAction: search\nAction Input: Paris"
//	    tool_calls:       # optional native tool calls
//	      - name: search
//	        arguments: {"query": "Paris"}   # an object or a JSON string
//	    split_choices: false  # put tool calls in a second choice, as Anthropic does
//	    error: ""         # make this call fail with this message instead
//	    times: 1          # how many calls this reply serves (default 1)
//
// The prompt a matcher sees is every message's text joined by newlines.
//
// # Per-task mode
//
// TaskModel plays, instead of one script, the replies each task of a
// suite carries (a suite JSONL task's "replies", in the Reply format, or
// strings that are a reply's text): every run of a task gets its task's
// replies in order, from the first, ignoring the prompt. A recorded run
// of a real model, its raw outputs as a task's replies, is then a
// regression test. The command line's --llm scripted, without a file,
// selects it.
//
// # Resuming a thread
//
// Each response names the reply that served it (GenerationInfo keys
// InfoReply and InfoScript or InfoTask), and a journaled run keeps the
// responses. A thread resumed in a new process (planner resume) replays
// its journaled calls without calling the model; on its first live call
// the model reads the journal's responses and counts the replies they
// name as used, so the run carries on with the next reply instead of
// starting the script over.
package scripted

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/internal/textutil"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/middleware"
	"github.com/tmc/langchaingo/llms"
	"gopkg.in/yaml.v3"
)

// Sentinel errors.
var (
	// ErrUnexpectedCall means no scripted reply matches a call. It matches
	// middleware.ErrPermanent: the call would fail again, so it is not
	// retried.
	ErrUnexpectedCall = middleware.Permanent("scripted model: unexpected call")
	// ErrBadScript means the script could not be read or is invalid.
	ErrBadScript = errors.New("scripted model: bad script")
	// ErrScriptedFailure is returned for replies that script an error.
	ErrScriptedFailure = errors.New("scripted model: scripted failure")
)

// Script is a parsed script.
type Script struct {
	// Strict requires every call to match the next unused reply in order.
	// Default true.
	Strict *bool `yaml:"strict" json:"strict"`
	// IgnoreStop returns replies uncut even when stop words are given,
	// imitating providers that ignore them. Default false.
	IgnoreStop bool `yaml:"ignore_stop" json:"ignore_stop"`
	// Fallback is the reply for unmatched calls in non-strict mode. Empty
	// means unmatched calls fail.
	Fallback string `yaml:"fallback" json:"fallback"`
	// Replies are the scripted replies.
	Replies []Reply `yaml:"replies" json:"replies"`
}

// Reply is one scripted reply and the conditions for using it.
type Reply struct {
	Node         string     `yaml:"node" json:"node,omitempty"`
	Role         string     `yaml:"role" json:"role,omitempty"`
	Contains     string     `yaml:"contains" json:"contains,omitempty"`
	Regex        string     `yaml:"regex" json:"regex,omitempty"`
	Text         string     `yaml:"text" json:"text,omitempty"`
	ToolCalls    []ToolCall `yaml:"tool_calls" json:"tool_calls,omitempty"`
	SplitChoices bool       `yaml:"split_choices" json:"split_choices,omitempty"`
	Error        string     `yaml:"error" json:"error,omitempty"`
	Times        int        `yaml:"times" json:"times,omitempty"`

	re *regexp.Regexp
}

// ToolCall is a scripted native tool call.
type ToolCall struct {
	ID        string `yaml:"id" json:"id,omitempty"`
	Name      string `yaml:"name" json:"name"`
	Arguments any    `yaml:"arguments" json:"arguments"`

	argsJSON string
}

// Model is the scripted model. It is safe for concurrent use; with
// concurrent callers use non-strict mode and matchers, since call order is
// then not fixed.
//
// A journaled run (a thread) resumed in another process replays its
// journaled model calls without calling the model. So that the script
// carries on where the journaled run left off, every response names the
// reply that served it (GenerationInfo InfoReply and InfoScript), and the
// first time the model is called live in a journal session it counts the
// replies the journal's responses name as used (see journal.Run's
// ModelResponses): in strict order, every reply up to the furthest one
// served; in non-strict mode, each reply once per journaled call it
// served. Resuming in the same process, with the model that served the
// journaled calls, changes nothing.
//
// By default the model keeps one place in its script for every call,
// whichever run makes it, so that a script can be written for several
// runs in turn. A run marked with PositionPerRun has a place of its own,
// starting at the script's first reply: a worker that serves many runs
// with one model (package temporal) gives each its whole script.
type Model struct {
	mu     sync.Mutex
	script Script
	path   string // the script file, for errors; "" for New
	name   string // the script's InfoScript (scriptName of path)
	shared position
	calls  int // calls served, in every position
}

// position is a place in a Model's script: the model's own, or a run's
// (PositionPerRun). The Model's mu guards it.
type position struct {
	used  []int
	calls int
	// resumed counts the replies resume marked used; synced is the
	// journal session it last read.
	resumed int
	synced  *journal.Run
}

var _ llms.Model = (*Model)(nil)

// Load reads a script file (.yaml, .yml, .json or .jsonl).
func Load(path string) (*Model, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadScript, err)
	}
	return parse(path, b)
}

// parse reads a script from b; path's extension selects the format and
// errors name it.
func parse(path string, b []byte) (*Model, error) {
	var s Script
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl":
		for i, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "//") {
				continue
			}
			var r Reply
			dec := json.NewDecoder(strings.NewReader(line))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&r); err != nil {
				return nil, fmt.Errorf("%w: %s:%d: %w", ErrBadScript, path, i+1, err)
			}
			if _, err := dec.Token(); !errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("%w: %s:%d: text after the reply's JSON object", ErrBadScript, path, i+1)
			}
			s.Replies = append(s.Replies, r)
		}
	default:
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		if err := dec.Decode(&s); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrBadScript, path, err)
		}
	}
	m, err := New(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m.path = path
	m.name = scriptName(path)
	return m, nil
}

// New returns a model playing s.
func New(s Script) (*Model, error) {
	for i := range s.Replies {
		r := &s.Replies[i]
		if r.Regex != "" {
			re, err := regexp.Compile(r.Regex)
			if err != nil {
				return nil, fmt.Errorf("%w: reply %d: regex: %w", ErrBadScript, i+1, err)
			}
			r.re = re
		}
		if r.Times == 0 {
			r.Times = 1
		}
		if r.Times < 0 {
			return nil, fmt.Errorf("%w: reply %d: times must be positive", ErrBadScript, i+1)
		}
		if err := r.prepareToolCalls(); err != nil {
			return nil, fmt.Errorf("%w: reply %d: %w", ErrBadScript, i+1, err)
		}
		if r.Text == "" && len(r.ToolCalls) == 0 && r.Error == "" {
			return nil, fmt.Errorf("%w: reply %d has no text, tool_calls or error", ErrBadScript, i+1)
		}
	}
	return &Model{script: s, shared: position{used: make([]int, len(s.Replies))}}, nil
}

// prepareToolCalls checks r's tool calls' arguments and keeps each as the
// JSON text a model returns.
func (r *Reply) prepareToolCalls() error {
	for j := range r.ToolCalls {
		args, err := argumentsJSON(r.ToolCalls[j].Arguments)
		if err != nil {
			return fmt.Errorf("tool call %q: %w", r.ToolCalls[j].Name, err)
		}
		r.ToolCalls[j].argsJSON = args
	}
	return nil
}

// Texts returns a strict script of plain text replies, for tests.
func Texts(texts ...string) *Model {
	s := Script{}
	for _, t := range texts {
		s.Replies = append(s.Replies, Reply{Text: t})
	}
	m, err := New(s)
	if err != nil {
		panic(err) // unreachable: text replies are always valid
	}
	return m
}

func (m *Model) strict() bool { return m.script.Strict == nil || *m.script.Strict }

// Calls returns how many calls the model has served (replies a resumed
// run's journal had served are not counted).
func (m *Model) Calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls
}

// Remaining returns how many scripted replies are unused in the model's
// own place (not the places of runs marked with PositionPerRun), counting a reply
// once per remaining time; the count stops at math.MaxInt.
func (m *Model) Remaining() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for i, r := range m.script.Replies {
		left := r.Times - m.shared.used[i]
		if left > math.MaxInt-n {
			return math.MaxInt
		}
		n += left
	}
	return n
}

// Call implements llms.Model's simple text interface.
func (m *Model) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

func (r *Reply) matches(c llm.CallMeta, prompt string) bool {
	if r.Node != "" && r.Node != c.Node && r.Node != c.Kind {
		return false
	}
	if r.Role != "" && r.Role != c.Role {
		return false
	}
	if r.Contains != "" && !strings.Contains(prompt, r.Contains) {
		return false
	}
	if r.re != nil && !r.re.MatchString(prompt) {
		return false
	}
	return true
}

// unexpected returns the ErrUnexpectedCall error for a call no reply
// matches at pos: the script file, the call's number, why no reply serves
// it (in strict order, what the next reply wants) and the call itself.
// m.mu is held.
func (m *Model) unexpected(pos *position, c llm.CallMeta, prompt string) error {
	script := "the script"
	if m.path != "" {
		script = m.path
	}
	left, next := 0, -1
	for i, r := range m.script.Replies {
		if n := r.Times - pos.used[i]; n > 0 {
			left += n
			if next < 0 {
				next = i
			}
		}
	}
	why := "every reply is used up"
	switch {
	case next >= 0 && m.strict():
		why = fmt.Sprintf("%s left; strict order: the next one, reply %d, wants %s",
			textutil.Count(left, "reply", "replies"), next+1, m.script.Replies[next].conditions())
	case next >= 0:
		why = fmt.Sprintf("none of the %s left matches", textutil.Count(left, "reply", "replies"))
	}
	return fmt.Errorf("%w: %s has no reply for call %d (%s): %s", ErrUnexpectedCall, script, pos.calls+pos.resumed+1, why, describe(c, prompt))
}

// conditions says what a call must be for r to serve it.
func (r *Reply) conditions() string {
	var parts []string
	if r.Node != "" {
		parts = append(parts, "node "+r.Node)
	}
	if r.Role != "" {
		parts = append(parts, "role "+r.Role)
	}
	if r.Contains != "" {
		parts = append(parts, fmt.Sprintf("a prompt containing %q", r.Contains))
	}
	if r.Regex != "" {
		parts = append(parts, fmt.Sprintf("a prompt matching %q", r.Regex))
	}
	if len(parts) == 0 {
		return "any call"
	}
	return strings.Join(parts, " and ")
}

func describe(c llm.CallMeta, prompt string) string {
	p := strings.TrimSpace(prompt)
	if r := []rune(p); len(r) > 400 {
		p = "…" + string(r[len(r)-400:])
	}
	who := c.Node
	if c.Kind != "" {
		who += " (" + c.Kind + ")"
	}
	if c.Role != "" {
		who += " role " + c.Role
	}
	if who == "" {
		who = "(unknown node)"
	}
	return fmt.Sprintf("call from node %s with prompt ending:\n%s", who, p)
}

// callOptions returns the call options that options set.
func callOptions(options []llms.CallOption) llms.CallOptions {
	var opts llms.CallOptions
	for _, o := range options {
		o(&opts)
	}
	return opts
}

// GenerateContent serves the next matching scripted reply.
func (m *Model) GenerateContent(ctx context.Context, msgs []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	opts := callOptions(options)
	caller := llm.CallMetaFrom(ctx)
	prompt := llm.MessagesText(msgs, "")

	m.mu.Lock()
	pos := m.positionFor(ctx)
	m.resume(ctx, pos)
	idx := -1
	for i := range m.script.Replies {
		r := &m.script.Replies[i]
		if pos.used[i] >= r.Times {
			continue
		}
		if r.matches(caller, prompt) {
			idx = i
			break
		}
		if m.strict() {
			break
		}
	}
	if idx < 0 {
		if !m.strict() && m.script.Fallback != "" {
			m.mu.Unlock()
			return m.respond(ctx, Reply{Text: m.script.Fallback}, -1, opts)
		}
		err := m.unexpected(pos, caller, prompt)
		m.mu.Unlock()
		return nil, err
	}
	pos.used[idx]++
	pos.calls++
	m.calls++
	reply := m.script.Replies[idx]
	m.mu.Unlock()
	if reply.Error != "" {
		return nil, fmt.Errorf("%w: %s", ErrScriptedFailure, reply.Error)
	}
	return m.respond(ctx, reply, idx, opts)
}

// respond answers with r, the reply at index idx of the script (-1 for
// the fallback).
func (m *Model) respond(ctx context.Context, r Reply, idx int, opts llms.CallOptions) (*llms.ContentResponse, error) {
	info := map[string]any{InfoScript: m.name}
	if idx >= 0 {
		info[InfoReply] = idx + 1
	}
	return respond(ctx, r, opts, m.script.IgnoreStop, info)
}

// respond turns r into the response a provider would give: its text cut
// at opts' stop words unless ignoreStop, streamed in chunks when opts
// stream, and its tool calls. Its choices' GenerationInfo holds info
// (the InfoReply and InfoScript or InfoTask keys) and "model": "scripted".
func respond(ctx context.Context, r Reply, opts llms.CallOptions, ignoreStop bool, info map[string]any) (*llms.ContentResponse, error) {
	text := r.Text
	if !ignoreStop {
		text = cutAtStop(text, opts.StopWords)
	}
	if opts.StreamingFunc != nil && text != "" {
		for _, chunk := range splitChunks(text) {
			if err := opts.StreamingFunc(ctx, []byte(chunk)); err != nil {
				return nil, fmt.Errorf("scripted model: streaming: %w", err)
			}
		}
	}
	info["model"] = "scripted"
	main := &llms.ContentChoice{Content: text, StopReason: "stop", GenerationInfo: info}
	resp := &llms.ContentResponse{Choices: []*llms.ContentChoice{main}}
	if len(r.ToolCalls) > 0 {
		calls := make([]llms.ToolCall, len(r.ToolCalls))
		for i, tc := range r.ToolCalls {
			id := tc.ID
			if id == "" {
				id = fmt.Sprintf("call_%d", i+1)
			}
			calls[i] = llms.ToolCall{ID: id, Type: "function", FunctionCall: &llms.FunctionCall{Name: tc.Name, Arguments: tc.argsJSON}}
		}
		if r.SplitChoices {
			resp.Choices = append(resp.Choices, &llms.ContentChoice{ToolCalls: calls, StopReason: "tool_use", GenerationInfo: info})
		} else {
			main.ToolCalls = calls
			main.StopReason = "tool_calls"
		}
	}
	return resp, nil
}

func argumentsJSON(a any) (string, error) {
	switch v := a.(type) {
	case nil:
		return "{}", nil
	case string:
		if !json.Valid([]byte(v)) {
			return "", fmt.Errorf("arguments %q are not valid JSON", v)
		}
		return v, nil
	default:
		b, err := json.Marshal(normalizeYAML(v))
		return string(b), err
	}
}

// normalizeYAML turns map[any]any (from older YAML decoders) into
// map[string]any so it can be marshalled as JSON.
func normalizeYAML(v any) any {
	switch t := v.(type) {
	case map[any]any:
		out := make(map[string]any, len(t))
		for k, val := range t {
			out[fmt.Sprint(k)] = normalizeYAML(val)
		}
		return out
	case map[string]any:
		for k, val := range t {
			t[k] = normalizeYAML(val)
		}
		return t
	case []any:
		for i := range t {
			t[i] = normalizeYAML(t[i])
		}
		return t
	}
	return v
}

// cutAtStop truncates text at the earliest stop word, as real APIs do.
func cutAtStop(text string, stops []string) string {
	cut := len(text)
	for _, s := range stops {
		if s == "" {
			continue
		}
		if i := strings.Index(text, s); i >= 0 && i < cut {
			cut = i
		}
	}
	return text[:cut]
}

func splitChunks(text string) []string {
	var out []string
	r := []rune(text)
	for len(r) > 0 {
		n := 8
		if n > len(r) {
			n = len(r)
		}
		out = append(out, string(r[:n]))
		r = r[n:]
	}
	return out
}

// Label describes the scripted provider in model listings and reports.
const Label = "scripted: offline replies from a script, not a real model"

// Build is the scripted provider's llm.Builder: it loads the script named by
// cfg.Script (or cfg.Model), resolved against baseDir when relative.
func Build(_ context.Context, cfg config.LLM, baseDir string) (llms.Model, error) {
	path := cfg.Script
	if path == "" {
		path = cfg.Model
	}
	if path == "" {
		return nil, fmt.Errorf("%w: the scripted provider needs a script file (llm.script, or --llm scripted:FILE)", llm.ErrBadSpec)
	}
	if !filepath.IsAbs(path) && baseDir != "" {
		path = filepath.Join(baseDir, path)
	}
	return Load(path)
}
