package executor

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/keyword"
	"github.com/planner-engine/planner/tools/retrieve"
	"github.com/planner-engine/planner/trace"
	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/llms"
)

// DefaultMaxTools is ToolRetrieval.MaxTools's default.
const DefaultMaxTools = 12

// DefaultMaxShown is ToolRetrieval.MaxShown's default: the most tools one
// model call shows, whatever else the settings say. It is the most tools
// OpenAI's API accepts in one request; at the 80 or so prompt tokens an
// MCP server's tool takes, 128 tools are about 10,000 tokens, where an
// MCP server listing 10,000 tools made an 818,000-token prompt before
// the cap.
const DefaultMaxShown = 128

// ErrNoKeywordIndex means a loop needs a BM25 keyword index (tool
// retrieval by "bm25" or "hybrid", the recall tool's word search) and its
// nodekind.Env has none (Env.Keywords). It comes wrapped in a
// *config.SettingError naming the setting.
var ErrNoKeywordIndex = errors.New("no keyword index")

// keywordIndexFix says how to give an engine a keyword index, for the
// setting errors wrapping ErrNoKeywordIndex.
const keywordIndexFix = "build the engine with one (planner.WithKeywordIndex(search.Keywords{}) of package tools/search; the command line's engine has it)"

// First-call policies of tool retrieval (ToolRetrieval.FirstCall).
const (
	// FirstCallRetrieve selects the tools of a run's first model call by
	// the task alone.
	FirstCallRetrieve = "retrieve"
	// FirstCallAll shows every tool on a run's first model call, before
	// the model has written a thought; retrieval starts with the second.
	FirstCallAll = "all"
)

// Guard names of tool retrieval's trace events (kind guard).
const (
	// GuardToolNotShown: the model called a registered tool that the
	// call's prompt did not show; the call runs as any other.
	GuardToolNotShown = "tool_not_shown"
	// GuardToolRetrievalFallback: the tools could not be selected (the
	// query matched no tool, or the retriever failed), so the call shows
	// every tool, or, above max_shown, the tools used so far and the
	// first ones by name.
	GuardToolRetrievalFallback = "tool_retrieval_fallback"
	// GuardToolCap: a call would have shown more tools than
	// tool_retrieval.max_shown (retrieval disabled, first_call "all", a
	// fallback, or more tools used and found than max_shown), so it
	// shows at most max_shown of them; the event says how to show more.
	GuardToolCap = "tool_cap"
)

// ToolRetrieval configures tool retrieval (ReActConfig.ToolRetrieval,
// key tool_retrieval): when the loop has more tools than MaxTools, each
// model call shows only the MaxTools tools most relevant to the task and
// the model's latest thought, plus every tool already called in the run
// and the tools of Always. A call to a tool that was not shown still runs
// (guard event "tool_not_shown"). The zero value is valid and means every
// default.
type ToolRetrieval struct {
	// MaxTools is how many retrieved tools a model call shows; retrieval
	// is on only when the loop has more tools than this. Default 12.
	MaxTools int `mapstructure:"max_tools"`
	// MaxShown caps the tools one model call shows, however many the
	// loop has: when the loop has more tools than this, retrieval is on
	// even with Disabled set, first_call "all" and a fallback show a
	// selection instead of every tool, and a selection with many tools
	// used and found keeps the tools shown on every call (always, the
	// search tool), then the tools called, then those found, up to
	// MaxShown. Each time the cap changes what a call shows, the trace
	// gets a guard event "tool_cap" saying so. It must be at least
	// MaxTools. Default DefaultMaxShown (128), or MaxTools when that is
	// more; set it above the loop's tool count to show every tool.
	MaxShown int `mapstructure:"max_shown"`
	// Method ranks the tools: "bm25" (BM25 over each tool's name, split
	// into words, its description and its input schema's property names
	// and descriptions), "embedding" (cosine similarity of embeddings) or
	// "hybrid" (both, fused by rank). "embedding" and "hybrid" need a
	// model whose provider offers embeddings. Default "bm25".
	Method string `mapstructure:"method"`
	// Always names tools shown on every call, besides the retrieved ones
	// (general tools such as a calculator). Default: none.
	Always []string `mapstructure:"always"`
	// FirstCall is "retrieve" (the run's first call shows the tools
	// relevant to the task alone) or "all" (it shows every tool, since the
	// model has written no thought yet; its prompt is then the same for
	// every run of the loop, which prompt caches share). Default
	// "retrieve".
	FirstCall string `mapstructure:"first_call"`
	// Sticky keeps the previous call's selection (plus the tools called
	// since) while it still shows the tool that ranks first for the new
	// query, instead of selecting afresh on every call: the system
	// prompt, and with it the prompt-cache prefix, then changes only when
	// the model's need moves to a tool not shown. Default true.
	Sticky *bool `mapstructure:"sticky"`
	// Disabled turns retrieval off: every call shows every tool, as long
	// as the loop has no more tools than MaxShown (above it retrieval
	// stays on, with a "tool_cap" guard event). Default false.
	Disabled bool `mapstructure:"disabled"`
	// SearchTool adds a tool-search tool (named SearchToolName) to the
	// loop when retrieval is on: the model describes the capability it
	// needs, gets the SearchResults tools that match it best (all of the
	// loop's tools, ranked by Method as retrieval ranks them), and every
	// tool a search returned is shown on the run's later calls, as the
	// tools already called are. Its description, shown on every call
	// that shows a selection (a call that shows every tool leaves it
	// out), says that more tools exist than are listed. Default true.
	// (See executor/toolsearch.go.)
	SearchTool *bool `mapstructure:"search_tool"`
	// SearchToolName names the tool-search tool. Default "find_tools".
	SearchToolName string `mapstructure:"search_tool_name"`
	// SearchResults is how many tools one search returns. Default 5.
	SearchResults int `mapstructure:"search_results"`
}

// retrievalSettings is a ToolRetrieval with defaults applied.
type retrievalSettings struct {
	maxTools int
	maxShown int
	method   string
	always   []string
	firstAll bool
	sticky   bool
	disabled bool
	// search is the tool-search tool's settings (toolsearch.go).
	search searchSettings
}

// resolve applies the defaults and validates c. Errors are
// *config.SettingError keyed "tool_retrieval.KEY".
func (c ToolRetrieval) resolve() (retrievalSettings, error) {
	s := retrievalSettings{maxTools: c.MaxTools, maxShown: c.MaxShown, method: c.Method, always: c.Always, disabled: c.Disabled,
		sticky: c.Sticky == nil || *c.Sticky}
	key := func(k string) string { return "tool_retrieval." + k }
	switch {
	case s.maxTools == 0:
		s.maxTools = DefaultMaxTools
	case s.maxTools < 0:
		return s, config.SettingErrorf(key("max_tools"), "must be 1 or more, got %d (set disabled: true to show every tool)", s.maxTools)
	}
	switch {
	case s.maxShown == 0:
		s.maxShown = max(DefaultMaxShown, s.maxTools)
	case s.maxShown < 0:
		return s, config.SettingErrorf(key("max_shown"), "must be 1 or more, got %d (set it above the loop's tool count to show every tool)", s.maxShown)
	case s.maxShown < s.maxTools:
		return s, config.SettingErrorf(key("max_shown"), "%d is less than max_tools %d; a call shows max_tools retrieved tools, so max_shown must be at least that", s.maxShown, s.maxTools)
	}
	var err error
	if s.search, err = c.resolveSearch(); err != nil {
		return s, err
	}
	if s.method == "" {
		s.method = retrieve.MethodBM25
	}
	if methods := retrieve.Methods(); !slices.Contains(methods, s.method) {
		want := make([]string, len(methods))
		for i, m := range methods {
			want[i] = strconv.Quote(m)
		}
		return s, config.SettingErrorf(key("method"), "want one of %s, got %q", strings.Join(want, ", "), s.method)
	}
	switch c.FirstCall {
	case "", FirstCallRetrieve:
	case FirstCallAll:
		s.firstAll = true
	default:
		return s, config.SettingErrorf(key("first_call"), "want %q or %q, got %q", FirstCallRetrieve, FirstCallAll, c.FirstCall)
	}
	for i, a := range s.always {
		if strings.TrimSpace(a) == "" {
			return s, config.SettingErrorf(key("always"), "entry %d is empty; list tool names", i+1)
		}
	}
	return s, nil
}

// toolRetrieval is a loop's tool retrieval: its settings, the tools
// natively described (tools mode), and the retriever, built on the first
// run that needs it and kept for the loop's life.
type toolRetrieval struct {
	s        retrievalSettings
	reg      *tools.Registry
	embedder retrieve.Embedder
	// keywords builds the tools' BM25 index (methods bm25 and hybrid).
	keywords keyword.Indexer
	// always are the resolved names of s.always plus the tools the loop
	// adds itself (recall).
	always []string
	native map[string]llms.Tool
	// forced is set when retrieval is on only because the loop has more
	// tools than max_shown, although disabled is set.
	forced bool

	mu  sync.Mutex
	ret *retrieve.Retriever
	// building is closed when the build under way ends; nil when none
	// runs.
	building chan struct{}
}

// embedderOf returns the embedder of env's model (llm.Model.Embedder,
// which the factory sets for the providers that offer embeddings; else
// the model itself when it embeds), or nil when it offers none.
func embedderOf(env nodekind.Env) retrieve.Embedder {
	if env.Model.Embedder != nil {
		return env.Model.Embedder
	}
	switch m := env.Model.LLM.(type) {
	case retrieve.Embedder:
		return m
	case embeddings.EmbedderClient:
		if e, err := llm.EmbedderFrom(m); err == nil {
			return e
		}
	}
	return nil
}

// newToolRetrieval sets up l's tool retrieval, or returns nil when it is
// off: no more tools than max_tools, or disabled with no more tools than
// max_shown (above it, retrieval is on whatever disabled says). Errors
// are *config.SettingError.
func newToolRetrieval(env nodekind.Env, l *Loop, s retrievalSettings) (*toolRetrieval, error) {
	own := l.tools.Len()
	if l.s.recall {
		own--
	}
	if s.disabled && own <= s.maxShown {
		return nil, nil
	}
	// The settings are checked whether or not retrieval is on yet, so a
	// typo does not wait for the pipeline to grow past max_tools.
	tr := &toolRetrieval{s: s, reg: l.tools, keywords: env.Keywords, native: map[string]llms.Tool{}}
	for _, a := range s.always {
		t, ok := l.tools.Resolve(a)
		if !ok {
			return nil, config.SettingErrorf("tool_retrieval.always", "no tool %q; the loop's tools are %s", a, strings.Join(l.tools.Names(), ", "))
		}
		tr.always = append(tr.always, t.Name())
	}
	if s.method != retrieve.MethodBM25 {
		if tr.embedder = embedderOf(env); tr.embedder == nil {
			return nil, config.SettingErrorf("tool_retrieval.method", "%q needs embeddings, and this node's model (provider %q) offers none; use %q, or a provider that offers embeddings (openai and OpenAI-compatible servers, ollama, googleai, mistral; llm.embedding_model picks the model)",
				s.method, env.Model.Provider, retrieve.MethodBM25)
		}
	}
	// The loop's own recall tool is not one of the pipeline's tools: it
	// does not count toward max_tools.
	if l.s.recall {
		tr.always = append(tr.always, RecallToolName)
	}
	if own <= s.maxTools {
		return nil, nil
	}
	tr.forced = s.disabled
	if s.method != retrieve.MethodEmbedding && tr.keywords == nil {
		off := "or set disabled: true"
		if own > s.maxShown {
			off = fmt.Sprintf("or set max_shown to %d or more and disabled: true to show every tool on every call", own)
		}
		return nil, &config.SettingError{Key: "tool_retrieval.method", Err: fmt.Errorf(
			"%w: %w: %q ranks the loop's %d tools (more than max_tools %d) with a BM25 keyword index, and this engine has none; %s, or use method %q, %s",
			config.ErrSettings, ErrNoKeywordIndex, s.method, own, s.maxTools, keywordIndexFix, retrieve.MethodEmbedding, off)}
	}
	return tr, nil
}

// capNote is the advice of the tool_cap guard events: how to show more
// tools.
func (tr *toolRetrieval) capNote() string {
	return fmt.Sprintf("set tool_retrieval.max_shown to %d or more to show every tool (each call then costs their descriptions' tokens), or use find_tools to reach the others", len(tr.allTools()))
}

// retriever returns the loop's retriever, building it on first use (the
// tools' BM25 index, and their embeddings for "embedding" and "hybrid").
// One build runs at a time, outside the lock: callers that arrive during
// it wait for it, or for their own ctx to end. A failed build is tried
// again by the next call.
func (tr *toolRetrieval) retriever(ctx context.Context) (*retrieve.Retriever, error) {
	for {
		tr.mu.Lock()
		if tr.ret != nil {
			ret := tr.ret
			tr.mu.Unlock()
			return ret, nil
		}
		if wait := tr.building; wait != nil {
			tr.mu.Unlock()
			select {
			case <-wait:
				continue // built, or failed: look again
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}
		done := make(chan struct{})
		tr.building = done
		tr.mu.Unlock()

		opts := []retrieve.Option{retrieve.WithMethod(tr.s.method)}
		if tr.keywords != nil {
			opts = append(opts, retrieve.WithIndexer(tr.keywords))
		}
		if tr.embedder != nil {
			opts = append(opts, retrieve.WithEmbedder(tr.embedder))
		}
		ret, err := retrieve.New(ctx, tr.ranked(), opts...)
		tr.mu.Lock()
		tr.building = nil
		if err == nil {
			tr.ret = ret
		}
		tr.mu.Unlock()
		close(done)
		return ret, err
	}
}

// close releases the retriever's index. The loop runs it when it is
// garbage collected (the loop has no Close of its own).
func (tr *toolRetrieval) close() {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.ret != nil {
		_ = tr.ret.Close()
		tr.ret = nil
	}
}

// attachRetrieval sets l's tool retrieval and releases its retriever once
// l is unreachable.
func (l *Loop) attachRetrieval(tr *toolRetrieval) {
	if tr == nil {
		return
	}
	l.retrieval = tr
	runtime.AddCleanup(l, func(tr *toolRetrieval) { tr.close() }, tr)
}

// latestThought is the thought of the run's last step that has one.
func (r *run) latestThought() string {
	for i := len(r.steps) - 1; i >= 0; i-- {
		if t := strings.TrimSpace(r.steps[i].thought); t != "" {
			return t
		}
	}
	return ""
}

// usedTools are the registered tools the run has called, the tools
// shown on every call, and the tools the run's searches found
// (foundTools).
func (r *run) usedTools() []string {
	out := slices.Clone(r.l.retrieval.always)
	for _, s := range r.steps {
		for _, c := range s.calls {
			if c.tc.Tool != nil && !slices.Contains(out, c.tc.Name) {
				out = append(out, c.tc.Name)
			}
		}
	}
	return r.foundTools(out)
}

// selectTools chooses the tools the next model call shows: the max_tools
// most relevant to the task and the latest thought, plus the tools used
// so far, in the registry's order. Every tool is shown on the first call
// with first_call "all", and when the selection fails (guard event
// "tool_retrieval_fallback"); only ctx's end is an error.
//
// No call shows more than max_shown tools: above it, first_call "all"
// retrieves instead, a fallback shows the tools used so far and the
// first ones by name, and a selection is cut (capShown); each such
// call emits the guard event "tool_cap".
func (r *run) selectTools(ctx context.Context) ([]string, error) {
	tr := r.l.retrieval
	all := tr.allTools()
	step := len(r.steps) + 1
	capped := len(all) > tr.s.maxShown
	if tr.s.firstAll && len(r.steps) == 0 {
		if !capped {
			return all, nil
		}
		r.guard(GuardToolCap, step, fmt.Sprintf("tool retrieval: first_call %q would show all %d tools, more than max_shown (%d), so the first call shows the tools relevant to the task instead; %s",
			FirstCallAll, len(all), tr.s.maxShown, tr.capNote()), map[string]any{"tools": len(all), "max_shown": tr.s.maxShown})
	}
	query := retrieve.Query(r.in.Task, r.latestThought())
	used := r.usedTools()
	names, err := r.journaledRank(ctx, query, used)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		if journalStopped(err) {
			return nil, err
		}
		why := err.Error()
		if errors.Is(err, retrieve.ErrNoMatch) {
			why = "the task and the latest thought match no tool's name, description or schema"
		}
		if !capped {
			r.guard(GuardToolRetrievalFallback, step, "tool retrieval: showing every tool: "+why,
				map[string]any{"error": err.Error(), "tools": len(all)})
			return all, nil
		}
		names = r.fallbackTools(used)
		r.guard(GuardToolRetrievalFallback, step, fmt.Sprintf("tool retrieval: showing %d of %d tools (the tools used so far and the first by name; max_shown is %d): %s",
			len(names), len(all), tr.s.maxShown, why), map[string]any{"error": err.Error(), "tools": len(all), "shown": len(names)})
		r.guard(GuardToolCap, step, fmt.Sprintf("tool retrieval: the fallback would show all %d tools, more than max_shown (%d); the call shows %d; %s",
			len(all), tr.s.maxShown, len(names), tr.capNote()), map[string]any{"tools": len(all), "max_shown": tr.s.maxShown, "shown": len(names)})
		return r.capShown(tr.withSearchTool(names), used), nil
	}
	return r.capShown(tr.withSearchTool(names), used), nil
}

// fallbackTools is what a fallback shows when the loop has more tools
// than max_shown: the tools used so far (always, called, found) and the
// first of the others by name, max_tools of them, in the registry's
// order.
func (r *run) fallbackTools(used []string) []string {
	tr := r.l.retrieval
	var out []string
	extra := 0
	for _, n := range tr.allTools() {
		switch {
		case slices.Contains(used, n):
			out = append(out, n)
		case extra < tr.s.maxTools:
			out = append(out, n)
			extra++
		}
	}
	return out
}

// capShown returns names, a selection in the registry's order, cut to
// max_shown tools when it is longer: it keeps the tools shown on every
// call and the search tool first, then the tools in used (called, then
// found) in their order, then the others in names's order, and emits the
// guard event "tool_cap".
func (r *run) capShown(names, used []string) []string {
	tr := r.l.retrieval
	if len(names) <= tr.s.maxShown {
		return names
	}
	keep := make([]string, 0, tr.s.maxShown)
	add := func(n string) {
		if len(keep) < tr.s.maxShown && slices.Contains(names, n) && !slices.Contains(keep, n) {
			keep = append(keep, n)
		}
	}
	for _, group := range [][]string{tr.always, used, names} {
		for _, n := range group {
			add(n)
		}
	}
	var out []string
	for _, n := range names {
		if slices.Contains(keep, n) {
			out = append(out, n)
		}
	}
	r.guard(GuardToolCap, len(r.steps)+1, fmt.Sprintf("tool retrieval: the selection has %d tools (those retrieved, called, found and always shown), more than max_shown (%d); the call shows %d; %s",
		len(names), tr.s.maxShown, len(out), tr.capNote()), map[string]any{"tools": len(names), "max_shown": tr.s.maxShown, "shown": len(out)})
	return out
}

// stickTo returns the previous call's selection plus the tools in used
// when sticky is on and that selection (which did not show every tool)
// still shows the tool that ranks first for query among those not in
// used; otherwise it returns nil, and the tools are selected afresh.
func (r *run) stickTo(ranked []string, used []string) []string {
	tr := r.l.retrieval
	if !tr.s.sticky || len(r.shown) == 0 || len(r.shown) >= len(tr.allTools()) {
		return nil
	}
	for _, name := range ranked {
		if slices.Contains(used, name) {
			continue
		}
		if !slices.Contains(r.shown, name) {
			return nil
		}
		break
	}
	var out []string
	for _, name := range tr.reg.Names() {
		if slices.Contains(r.shown, name) || slices.Contains(used, name) {
			out = append(out, name)
		}
	}
	return out
}

// showTools selects the tools of the next model call (when retrieval is
// on) and returns opts with what that call needs: in text mode the
// system prompt is rendered again when the selection changed; in tools
// mode the call gets the selected tools natively (llms.WithTools after
// the loop's own options). A selection that did not change leaves the
// prompt as it was, byte for byte.
func (r *run) showTools(ctx context.Context, opts []llms.CallOption) ([]llms.CallOption, error) {
	tr := r.l.retrieval
	if tr == nil {
		return opts, nil
	}
	if tr.forced && r.shown == nil {
		r.guard(GuardToolCap, len(r.steps)+1, fmt.Sprintf("tool retrieval is on although disabled is set: the loop has %d tools, more than max_shown (%d), so each call shows the %d most relevant (max_tools) and the tools used so far; %s",
			len(tr.allTools()), tr.s.maxShown, tr.s.maxTools, tr.capNote()), map[string]any{"tools": len(tr.allTools()), "max_shown": tr.s.maxShown})
	}
	names, err := r.selectTools(ctx)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(names, r.shown) {
		r.shown = names
		if r.system, err = r.l.system.Render(r.st, r.l.systemDataFor(names)); err != nil {
			return nil, err
		}
		if err := r.renderHead(); err != nil {
			return nil, err
		}
		r.emit(trace.KindInfo, fmt.Sprintf("tool retrieval: the prompt shows %d of %d tools: %s", len(names), tr.reg.Len(), strings.Join(names, ", ")),
			map[string]any{"step": len(r.steps) + 1, "tools": names, "of": tr.reg.Len()})
	}
	if r.l.s.mode == ModeTools {
		native := make([]llms.Tool, 0, len(names))
		for _, n := range names {
			native = append(native, tr.native[n])
		}
		opts = append(slices.Clip(opts), llms.WithTools(native))
	}
	return opts, nil
}

// noteUnshown emits the guard event "tool_not_shown" when c calls a
// registered tool that the call's prompt did not show. The call runs.
func (r *run) noteUnshown(n int, c *call) {
	if r.l.retrieval == nil || c.tc.Tool == nil || slices.Contains(r.shown, c.tc.Name) {
		return
	}
	r.guard(GuardToolNotShown, n, fmt.Sprintf("the model called %s, which tool retrieval did not show; the call runs", c.tc.Name),
		map[string]any{"tool": c.tc.Name})
}

// systemDataFor is systemData with only the named tools.
func (l *Loop) systemDataFor(names []string) map[string]any {
	data := l.systemData()
	infos := make([]promptTool, 0, len(names))
	for _, t := range l.toolInfos {
		if slices.Contains(names, t.Name) {
			infos = append(infos, t)
		}
	}
	data["Tools"] = infos
	data["ToolNames"] = strings.Join(names, ", ")
	return data
}
