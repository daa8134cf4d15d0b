package compose

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
)

// DefaultMapParallel is MapSettings.MaxParallel when unset.
const DefaultMapParallel = config.DefaultMaxParallel

// MaxItems is the most items one map node runs.
const MaxItems = 1000

// ErrItems means a map node's list is not one it can read, or too long.
var ErrItems = errors.New("map: bad item list")

// ErrItemFailed means an item's nested run failed; the error is an
// *ItemError.
var ErrItemFailed = errors.New("map item failed")

// ItemError is the failure of one item of a map node.
type ItemError struct {
	// Node is the map node; Item the item's number, from 1, of Items.
	Node        string
	Item, Items int
	Err         error
}

func (e *ItemError) Error() string {
	return fmt.Sprintf("%v: node %q: item %d of %d: %v", ErrItemFailed, e.Node, e.Item, e.Items, e.Err)
}

// Unwrap returns ErrItemFailed and the item's error.
func (e *ItemError) Unwrap() []error { return []error{ErrItemFailed, e.Err} }

// Item failure policies (MapSettings.OnItemFailure).
const (
	// ItemFail ends the node with the first failed item's error; the
	// items still running are cancelled.
	ItemFail = "fail"
	// ItemKeep records a failed item's answer as "" (and an incident)
	// and goes on.
	ItemKeep = "keep"
)

// MapSettings configure a `map` node.
//
//   - id: answer_each
//     type: map
//     over: var:questions          # a JSON list, or one item per line
//     question: "{{.Extra.Item}}"   # the default
//     graph:
//     nodes: [{id: solve, type: cot}]
//     edges: [{from: START, to: solve}, {from: solve, to: END}]
//     into: var:answers            # a JSON list of the answers, in item order
//     max_parallel: 4
type MapSettings struct {
	// Source is the pipeline to run per item: pipeline (a file) or graph
	// (inline).
	Source `mapstructure:",squash"`
	// Over is the list: "var:NAME", a var holding a JSON list (strings are
	// items as they are, other values their JSON) or, when it is not
	// JSON, one item per non-blank line; or "sub_questions", the
	// decomposition of a least_to_most node. Required.
	Over string `mapstructure:"over"`
	// Question is each nested run's question, a template over the run
	// state with {{.Extra.Item}} (the item) and {{.Extra.Index}} (its
	// number, from 1). Default {{.Extra.Item}}.
	Question string `mapstructure:"question"`
	// Vars are each nested run's vars when it starts, templates like
	// Question. Each run also gets the vars item and index.
	Vars map[string]string `mapstructure:"vars"`
	// Into is the var that receives the answers, as a JSON list of
	// strings in item order. Default var:<node id>.
	Into string `mapstructure:"into"`
	// MaxParallel bounds how many items run at once. Default
	// DefaultMapParallel (8).
	MaxParallel int `mapstructure:"max_parallel"`
	// OnItemFailure is "fail" (default: the node fails with the first
	// failed item's error) or "keep" (a failed item's answer is "").
	OnItemFailure string `mapstructure:"on_item_failure"`
}

// Map is the `map` node.
type Map struct {
	id       string
	sub      nodekind.Subgraph
	overVar  string // "" for sub_questions
	question *nodekind.Template
	vars     inputs
	into     string
	parallel int
	keep     bool
}

func mapSpec(key string) nodekind.TemplateSpec {
	return nodekind.TemplateSpec{Key: key, Extra: []nodekind.Field{
		{Name: "Item", Doc: "the item (text)", Sample: "What is the capital of France?"},
		{Name: "Index", Doc: "the item's number, from 1", Sample: 1},
	}}
}

// NewMap builds a `map` node (MapSettings).
func NewMap(env nodekind.Env, spec nodekind.Spec) (nodekind.Built, error) {
	var s MapSettings
	if err := config.Decode(spec.Settings, &s); err != nil {
		return nodekind.Built{}, err
	}
	n := &Map{id: spec.ID, parallel: DefaultMapParallel}
	var err error
	switch {
	case s.Over == "":
		return nodekind.Built{}, config.SettingErrorf("over", `name the list to map over: "var:NAME" or "sub_questions"`)
	case s.Over == "sub_questions":
	default:
		if n.overVar, err = nodekind.VarSetting("over", s.Over, false); err != nil {
			return nodekind.Built{}, err
		}
	}
	if n.question, err = env.Template(mapSpec("question"), s.Question, "", "{{.Extra.Item}}"); err != nil {
		return nodekind.Built{}, err
	}
	for _, reserved := range []string{"item", "index"} {
		if _, ok := s.Vars[reserved]; ok {
			return nodekind.Built{}, config.SettingErrorf("vars."+reserved, "each item's run gets the var %s itself; choose another name", reserved)
		}
	}
	if n.vars, err = compileInputs(env, s.Vars, mapSpec("")); err != nil {
		return nodekind.Built{}, err
	}
	if s.Into == "" {
		s.Into = "var:" + spec.ID
	}
	if n.into, err = nodekind.VarSetting("into", s.Into, false); err != nil {
		return nodekind.Built{}, err
	}
	switch {
	case s.MaxParallel < 0:
		return nodekind.Built{}, config.SettingErrorf("max_parallel", "must be at least 1 (leave it out for %d)", DefaultMapParallel)
	case s.MaxParallel > 0:
		n.parallel = s.MaxParallel
	}
	switch s.OnItemFailure {
	case "", ItemFail:
	case ItemKeep:
		n.keep = true
	default:
		return nodekind.Built{}, config.SettingErrorf("on_item_failure", "want fail or keep, got %q", s.OnItemFailure)
	}
	inputs := append(slices.Sorted(maps.Keys(n.vars)), "item", "index")
	if n.sub, err = s.build(env, inputs); err != nil {
		return nodekind.Built{}, err
	}
	return nodekind.Built{Node: n}, nil
}

// WritesVars returns the var the node writes (pipeline.VarWriter).
func (n *Map) WritesVars() []string { return []string{n.into} }

// ReadsVars returns the var the node maps over (pipeline.VarReader).
func (n *Map) ReadsVars() []string {
	if n.overVar == "" {
		return nil
	}
	return []string{n.overVar}
}

// Inner returns the pipeline the node runs per item, for drawing.
func (n *Map) Inner() nodekind.Subgraph { return n.sub }

// items reads the list to map over.
func (n *Map) items(st *state.State) ([]string, error) {
	var items []string
	if n.overVar == "" {
		for _, q := range st.SubQuestions {
			items = append(items, q.Question)
		}
	} else {
		raw, ok := st.Vars.Get(n.overVar)
		if !ok {
			return nil, fmt.Errorf("%w: node %q: var %q is not set (a node before it must write it)", ErrItems, n.id, n.overVar)
		}
		items = parseItems(raw)
	}
	if len(items) > MaxItems {
		return nil, fmt.Errorf("%w: node %q: %d items, more than %d", ErrItems, n.id, len(items), MaxItems)
	}
	return items, nil
}

// parseItems reads a JSON list (strings as they are, other values as
// JSON) or, failing that, the non-blank lines of raw.
func parseItems(raw string) []string {
	var list []json.RawMessage
	if err := json.Unmarshal([]byte(raw), &list); err == nil {
		out := make([]string, len(list))
		for i, v := range list {
			var s string
			if json.Unmarshal(v, &s) == nil {
				out[i] = s
			} else {
				out[i] = string(v)
			}
		}
		return out
	}
	var out []string
	for _, line := range strings.Split(raw, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}

// job is one item's nested run, rendered before any starts.
type job struct {
	task state.Task
	vars map[string]string
}

// Run runs the nested pipeline once per item, at most MaxParallel at a
// time, items starting in order, and stores the answers in item order.
// Every item's question and vars are rendered before the first starts,
// and Run returns only once every item it started has ended.
func (n *Map) Run(ctx context.Context, st *state.State) (string, error) {
	items, err := n.items(st)
	if err != nil {
		return "", err
	}
	jobs := make([]job, len(items))
	for i, item := range items {
		task, vars, err := nestedInput(st, n.question, n.vars, map[string]any{"Item": item, "Index": i + 1})
		if err != nil {
			return "", fmt.Errorf("map %q: item %d: %w", n.id, i+1, err)
		}
		vars["item"], vars["index"] = item, strconv.Itoa(i+1)
		jobs[i] = job{task: task, vars: vars}
	}
	tr := trace.From(ctx)
	tr.Emit(trace.Event{Node: n.id, Kind: trace.KindRoute, Text: fmt.Sprintf("map over %d items with %s", len(items), n.sub.Name()),
		Data: map[string]any{"route": "map", "items": len(items), "to": n.sub.Name()}})
	children := make([]*state.State, len(items))
	errs := make([]error, len(items))
	ictx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, n.parallel)
	var wg sync.WaitGroup
	for i, j := range jobs {
		// Items start in order, as slots free up.
		select {
		case sem <- struct{}{}:
		case <-ictx.Done():
			errs[i] = context.Cause(ictx)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			defer func() {
				// A nested run's nodes' panics are errors already; this is
				// a hook's or an observer's, which would end the process.
				if p := recover(); p != nil {
					errs[i] = fmt.Errorf("map %q: item %d panicked: %v", n.id, i+1, p)
					cancel(&ItemError{Node: n.id, Item: i + 1, Items: len(items), Err: errs[i]})
				}
			}()
			child, err := n.sub.RunNested(ictx, st, j.task, j.vars, "item "+strconv.Itoa(i+1))
			children[i], errs[i] = child, err
			// Only a part's own failure may be kept; the run's end (a
			// spent budget, a wait for a person, cancellation) ends the
			// node whatever the policy.
			if err != nil && (!n.keep || fatal(ictx, err)) {
				cancel(&ItemError{Node: n.id, Item: i + 1, Items: len(items), Err: err})
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return "", context.Cause(ctx)
	}
	if cause := context.Cause(ictx); cause != nil {
		var ie *ItemError
		if errors.As(cause, &ie) && fatal(context.Background(), ie.Err) {
			// The run's own end: return it as it is (a wait stays a wait).
			return "", ie.Err
		}
		return "", cause
	}
	answers := make([]string, len(items))
	for i, child := range children {
		switch {
		case errs[i] != nil:
			st.NoteIncident(state.FailureError)
			tr.Emit(trace.Event{Node: n.id, Kind: trace.KindError, Text: fmt.Sprintf("item %d of %d failed, kept as empty: %v", i+1, len(items), errs[i]),
				Data: map[string]any{"item": i + 1}})
		case child != nil:
			answers[i] = child.Answer
			if !child.Complete {
				st.NoteIncident(cmp.Or(child.Failure, state.FailureBudget))
			}
		}
	}
	raw, err := json.Marshal(answers)
	if err != nil {
		return "", fmt.Errorf("map %q: %w", n.id, err)
	}
	if err := st.Vars.Set(n.into, string(raw)); err != nil {
		return "", fmt.Errorf("map %q: into var:%s: %w (map fewer items, or have each answer be shorter)", n.id, n.into, err)
	}
	return "", nil
}

// fatal reports whether an item's error is the run's end, never kept as
// one failed item: the run's context is done, or err is a cancellation,
// a timeout, a wait for a person or a spent budget. (pipeline.Fatal, which
// this package may not import, decides the outcome routes alike.)
func fatal(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return true
	}
	for _, f := range []error{context.Canceled, context.DeadlineExceeded, journal.ErrWaiting, llm.ErrBudgetExceeded} {
		if errors.Is(err, f) {
			return true
		}
	}
	return false
}
