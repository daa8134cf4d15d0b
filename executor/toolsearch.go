package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/internal/textutil"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/retrieve"
)

// Defaults of the tool-search tool (ToolRetrieval.SearchTool).
const (
	// DefaultSearchToolName is ToolRetrieval.SearchToolName's default.
	DefaultSearchToolName = "find_tools"
	// DefaultSearchResults is ToolRetrieval.SearchResults's default.
	DefaultSearchResults = 5
)

// searchDescLimit caps, in runes, the description of each tool a search
// returns (the tool is shown in full on the next calls).
const searchDescLimit = 200

// searchSettings are the tool-search settings of tool_retrieval with
// their defaults applied.
type searchSettings struct {
	on      bool
	name    string
	results int
}

// resolveSearch applies the defaults of the search_tool keys and checks
// them. Errors are *config.SettingError keyed "tool_retrieval.KEY".
func (c ToolRetrieval) resolveSearch() (searchSettings, error) {
	s := searchSettings{on: c.SearchTool == nil || *c.SearchTool, name: strings.TrimSpace(c.SearchToolName), results: c.SearchResults}
	if s.name == "" {
		s.name = DefaultSearchToolName
	}
	if strings.ContainsAny(s.name, " \t\r\n") {
		return s, config.SettingErrorf("tool_retrieval.search_tool_name", "a tool name has no spaces, got %q", s.name)
	}
	if tools.NormalizeName(s.name) == tools.NormalizeName(RecallToolName) {
		return s, config.SettingErrorf("tool_retrieval.search_tool_name", "%q is the name of the loop's recall tool; choose another", s.name)
	}
	switch {
	case s.results == 0:
		s.results = DefaultSearchResults
	case s.results < 0:
		return s, config.SettingErrorf("tool_retrieval.search_results", "must be 1 or more, got %d", s.results)
	}
	return s, nil
}

// addSearchTool adds the tool-search tool to l when tool retrieval is on
// (tr not nil) and search_tool is not off: to its tools, its prompt's
// tool list, and the tools every call shows. It returns llmTools with the
// tool's native definition added. A pipeline tool of the same name is a
// setting error.
func (l *Loop) addSearchTool(tr *toolRetrieval) error {
	if tr == nil || !tr.s.search.on {
		return nil
	}
	name := tr.s.search.name
	if l.tools.Has(name) {
		return config.SettingErrorf("tool_retrieval.search_tool_name", "the loop adds a tool named %q to search its tools, and the pipeline has a tool of that name; set search_tool_name to another name, or search_tool: false", name)
	}
	ft := findTool{name: name, tr: tr, results: tr.s.search.results, zh: l.s.language == LanguageChinese, total: l.tools.Len()}
	reg, err := l.tools.With(ft)
	if err != nil {
		return config.SettingErrorf("tool_retrieval.search_tool_name", "%v", err)
	}
	l.tools, tr.reg = reg, reg
	tr.always = append(tr.always, name)
	return nil
}

// findTool is the loop's tool-search tool: it searches all of the loop's
// tools with the loop's retriever and returns the best matches, which the
// loop then shows on every later call of the run (run.foundTools). It is
// deterministic given the loop's tools, and it holds no state of its own.
type findTool struct {
	name    string
	tr      *toolRetrieval
	results int
	zh      bool
	// total is how many tools the loop has besides this one.
	total int
}

func (f findTool) Name() string { return f.name }

// Description tells the model that more tools exist than are listed and
// how to find them: it is the line of the system prompt (text mode) or of
// the native tool definitions (tools mode) that says so.
func (f findTool) Description() string {
	if f.zh {
		return fmt.Sprintf("查找未列出的工具：这里只列出与任务相关的工具，共有 %d 个工具。输入你需要的功能（例如“城市的天气预报”），返回最匹配的工具及其输入格式；从下一步起它们会列在工具中。", f.total)
	}
	return fmt.Sprintf("Finds tools that are not listed: only the tools relevant to the task are listed, out of %d. Input: the capability you need, e.g. \"weather forecast for a city\". Returns the best matches with their input schemas; from your next step on they are listed.", f.total)
}

func (f findTool) Schema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"query": map[string]any{"type": "string", "description": "the capability you need, in a few words"},
		},
		"required": []any{"query"},
	}
}

func (findTool) Meta() tools.Meta { return tools.Meta{ReadOnly: true} }

// searchQuery reads a search tool input: plain text, or {"query": "..."}.
func searchQuery(input string) (string, error) {
	q := strings.TrimSpace(input)
	if strings.HasPrefix(q, "{") {
		var in struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal([]byte(q), &in); err != nil {
			return "", fmt.Errorf("%w: the input is not valid JSON (%v); give {\"query\": \"<the capability you need>\"} or plain text", tools.ErrBadInput, err)
		}
		q = strings.TrimSpace(in.Query)
	}
	if q == "" {
		return "", fmt.Errorf("%w: describe the capability you need, e.g. \"weather forecast for a city\"", tools.ErrBadInput)
	}
	return q, nil
}

// Call returns the tools that best match the input, best first: for
// each, its name, its description on one line and its input schema. A
// query that matches no tool is an answer, not an error.
func (f findTool) Call(ctx context.Context, input string) (string, error) {
	q, err := searchQuery(input)
	if err != nil {
		return "", err
	}
	ret, err := f.tr.retriever(ctx)
	if err != nil {
		return "", fmt.Errorf("%s: %w", f.name, err)
	}
	skip := []string{tools.NormalizeName(f.name), tools.NormalizeName(RecallToolName)}
	ranked, err := ret.Rank(ctx, q, f.results+len(skip))
	if err != nil && !errors.Is(err, retrieve.ErrNoMatch) {
		return "", fmt.Errorf("%s: %w", f.name, err)
	}
	var found []tools.Tool
	for _, n := range ranked {
		if t, ok := f.tr.reg.Resolve(n); ok && !slices.Contains(skip, tools.NormalizeName(n)) && len(found) < f.results {
			found = append(found, t)
		}
	}
	if len(found) == 0 {
		if f.zh {
			return fmt.Sprintf("没有工具与“%s”匹配。换个说法描述你需要的功能再试。", q), nil
		}
		return fmt.Sprintf("No tool matches %q. Describe the capability in other words and search again.", q), nil
	}
	var b strings.Builder
	schemaLabel := "  Input schema: "
	if f.zh {
		fmt.Fprintf(&b, "找到 %d 个与“%s”匹配的工具；从下一步起它们会列在工具中，可以直接调用：\n", len(found), q)
		schemaLabel = "  输入格式："
	} else {
		fmt.Fprintf(&b, "%d tools match %q; from your next step on they are listed with the others and can be called:\n", len(found), q)
	}
	for _, t := range found {
		fmt.Fprintf(&b, "%s%s: %s\n%s%s\n", foundPrefix, t.Name(), textutil.Clip(tools.CleanDescription(t.Description()), searchDescLimit), schemaLabel, tools.SchemaJSON(t))
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// foundPrefix begins each line of a search's output that names a tool.
const foundPrefix = "- "

// foundNames reads the names of the tools a search's output lists, as
// resolved in reg; lines that name no tool of reg are ignored.
func foundNames(reg *tools.Registry, output string) []string {
	var out []string
	for _, line := range strings.Split(output, "\n") {
		rest, ok := strings.CutPrefix(line, foundPrefix)
		if !ok {
			continue
		}
		name, _, ok := strings.Cut(rest, ": ")
		if !ok {
			continue
		}
		if t, ok := reg.Resolve(name); ok && !slices.Contains(out, t.Name()) {
			out = append(out, t.Name())
		}
	}
	return out
}

// foundTools returns used with the tools that the run's searches (calls
// of the search tool) returned added: they are shown on every later call,
// like the tools already called. They are read from the searches'
// outputs kept in the run's steps, so a resumed run, whose searches the
// journal replays, shows the same tools.
func (r *run) foundTools(used []string) []string {
	tr := r.l.retrieval
	if !tr.s.search.on {
		return used
	}
	for _, s := range r.steps {
		for _, c := range s.calls {
			if c.tc.Tool == nil || !c.fromTool || tools.NormalizeName(c.tc.Name) != tools.NormalizeName(tr.s.search.name) {
				continue
			}
			for _, n := range foundNames(tr.reg, c.full) {
				if !slices.Contains(used, n) {
					used = append(used, n)
				}
			}
		}
	}
	return used
}

// allTools are the tools a call shows when it shows every tool: all of
// the loop's but the search tool, which would find nothing new.
func (tr *toolRetrieval) allTools() []string {
	all := tr.reg.Names()
	if !tr.s.search.on {
		return all
	}
	return slices.DeleteFunc(all, func(n string) bool { return n == tr.s.search.name })
}

// ranked is the registry the retriever ranks: the loop's tools but the
// search tool, whose words (capability, tools, its example) would
// otherwise weigh on every tool's BM25 score.
func (tr *toolRetrieval) ranked() *tools.Registry {
	if !tr.s.search.on {
		return tr.reg
	}
	sub, err := tr.reg.Subset(tr.allTools())
	if err != nil {
		// Subset of the registry's own names cannot fail.
		return tr.reg
	}
	return sub
}

// withSearchTool returns names, a selection, with the search tool added
// in the registry's order (the retriever does not rank it).
func (tr *toolRetrieval) withSearchTool(names []string) []string {
	if !tr.s.search.on || slices.Contains(names, tr.s.search.name) {
		return names
	}
	var out []string
	for _, n := range tr.reg.Names() {
		if n == tr.s.search.name || slices.Contains(names, n) {
			out = append(out, n)
		}
	}
	return out
}
