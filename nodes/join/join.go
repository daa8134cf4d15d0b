// Package join is the `join` node kind: the node where the branches of a
// fan-out (an edge whose to: is a list of node ids) meet again. It says
// how many branches it waits for (wait), what each contributes (from),
// how their contributions are merged (merge) and where the merged value
// goes (into):
//
//	nodes:
//	  - {id: a, type: cot}
//	  - {id: b, type: cot}
//	  - {id: c, type: cot}
//	  - {id: vote, type: join, wait: all, merge: vote, from: answer, into: answer}
//	edges:
//	  - {from: START, to: [a, b, c]}
//	  - {from: a, to: vote}
//	  - {from: b, to: vote}
//	  - {from: c, to: vote}
//	  - {from: vote, to: END}
//
// Each branch runs on its own copy of the run state; nothing it writes
// reaches the run's state but the value its join takes (from), merged.
package join

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/graph"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/planner-engine/planner/verify"
)

// Merge rules (Settings.Merge).
const (
	// MergeCollect stores every merged branch's value, in branch
	// declaration order, as a JSON list of strings.
	MergeCollect = "collect"
	// MergeVote takes the majority of the branches' normalised values
	// (numbers by value, text by the HotpotQA normalisation); a tie goes
	// to the value of the earliest branch. Empty values do not vote.
	MergeVote = "vote"
	// MergeFirst takes the value of the first branch to succeed, in
	// completion order: it may differ from run to run. A journaled run
	// records which branch won, so that a resumed run, which replays its
	// finished branches at once, takes the same one.
	MergeFirst = "first"
	// MergeConcat joins the non-empty values, in branch declaration
	// order, with Settings.Separator.
	MergeConcat = "concat"
	// MergeBest takes the value of the branch whose score (Settings.Score,
	// an expression) is highest; ties go to the earliest branch.
	MergeBest = "best"
	// MergeJudge asks the model which branch's value is best
	// (Settings.Prompt, a template with {{.Extra.Candidates}}).
	MergeJudge = "judge"
)

// Wait modes (Settings.Wait); a positive integer k is a quorum.
const (
	// WaitAll waits for every branch; one failure fails the run.
	WaitAll = "all"
	// WaitFirst is satisfied by the first branch to succeed; the others
	// are cancelled.
	WaitFirst = "first"
	// WaitAny is WaitFirst: one successful branch satisfies the join.
	WaitAny = "any"
)

// DefaultSeparator is Settings.Separator when unset.
const DefaultSeparator = "\n\n"

// ErrNoValue means no merged branch gave the join a value.
var ErrNoValue = errors.New("no branch produced a value")

// Settings configure a `join` node.
type Settings struct {
	// Wait is how many branches must succeed: "all" (default), "first"
	// or "any" (one), or a quorum k (1..the number of branches). Once
	// enough succeeded the others are cancelled; once too many failed for
	// that, the run fails.
	Wait any `mapstructure:"wait"`
	// Merge is the rule: collect, vote, first or concat. Default concat.
	Merge string `mapstructure:"merge"`
	// From is what each branch contributes: "answer" (default, the
	// branch's answer) or "var:NAME" (the branch's var NAME).
	From string `mapstructure:"from"`
	// Into is where the merged value goes: "answer" (the run's answer) or
	// "var:NAME". Default: "answer", except for collect, which needs a var.
	Into string `mapstructure:"into"`
	// Separator joins the values of concat. Default DefaultSeparator
	// (a blank line).
	Separator *string `mapstructure:"separator"`
	// Score is the expression merge: best ranks branches by (expr-lang,
	// over ScoreEnv: value, vars, question, branch; a number, higher is
	// better). An expression that fails on a branch scores it -Inf.
	// Required with merge: best, and only there.
	Score string `mapstructure:"score"`
	// Prompt replaces the judge's prompt of merge: judge (a template over
	// the run state and {{.Extra.Candidates}}, the numbered values).
	Prompt string `mapstructure:"prompt"`
}

// Node is a `join` node. It implements graph.Joiner: the graph runs its
// merge (Merge) once its branches are done, never its Run.
type Node struct {
	id      string
	quorum  int // 0: all
	wait    string
	merge   string
	fromVar string // "" for the answer
	intoVar string // "" for the answer
	sep     string
	score   *scorer
	// model and judgePrompt serve merge: judge.
	model       llm.Model
	judgePrompt *nodekind.Template
}

var _ graph.Joiner[*state.State] = (*Node)(nil)

// New builds a `join` node.
func New(env nodekind.Env, spec nodekind.Spec) (nodekind.Built, error) {
	var s Settings
	if err := config.Decode(spec.Settings, &s); err != nil {
		return nodekind.Built{}, err
	}
	n := &Node{id: spec.ID, merge: s.Merge, sep: DefaultSeparator}
	if err := n.setWait(s.Wait); err != nil {
		return nodekind.Built{}, &config.SettingError{Key: "wait", Err: err}
	}
	if n.merge == "" {
		n.merge = MergeConcat
	}
	if !slices.Contains([]string{MergeCollect, MergeVote, MergeFirst, MergeConcat, MergeBest, MergeJudge}, n.merge) {
		return nodekind.Built{}, &config.SettingError{Key: "merge", Err: fmt.Errorf("%w: want collect, vote, first, concat, best or judge, got %q", config.ErrSettings, n.merge)}
	}
	switch {
	case n.merge == MergeBest && s.Score == "":
		return nodekind.Built{}, config.SettingErrorf("score", "merge: best ranks branches by an expression: set score: (e.g. 'len(value)')")
	case n.merge != MergeBest && s.Score != "":
		return nodekind.Built{}, config.SettingErrorf("score", "applies only with merge: best")
	case n.merge == MergeBest:
		sc, err := compileScore(s.Score)
		if err != nil {
			return nodekind.Built{}, err
		}
		n.score = sc
	case n.merge != MergeJudge && s.Prompt != "":
		return nodekind.Built{}, config.SettingErrorf("prompt", "applies only with merge: judge")
	}
	if n.merge == MergeJudge {
		t, err := env.Template(judgeSpec(), s.Prompt, "", judgePrompt)
		if err != nil {
			return nodekind.Built{}, err
		}
		n.model, n.judgePrompt = env.Model, t
	}
	var err error
	if n.fromVar, err = nodekind.VarSetting("from", s.From, true); err != nil {
		return nodekind.Built{}, err
	}
	if n.intoVar, err = nodekind.VarSetting("into", s.Into, true); err != nil {
		return nodekind.Built{}, err
	}
	if n.merge == MergeCollect && n.intoVar == "" {
		return nodekind.Built{}, &config.SettingError{Key: "into", Err: fmt.Errorf("%w: merge: collect stores a JSON list; name the var it goes into (into: var:NAME)", config.ErrSettings)}
	}
	if s.Separator != nil {
		n.sep = *s.Separator
	}
	return nodekind.Built{Node: n}, nil
}

func (n *Node) setWait(w any) error {
	switch v := w.(type) {
	case nil:
		n.wait = WaitAll
		return nil
	case int:
		return n.setQuorum(v)
	case string:
		switch v {
		case "", WaitAll:
			n.wait = WaitAll
			return nil
		case WaitFirst, WaitAny:
			n.wait, n.quorum = v, 1
			return nil
		}
		if k, err := strconv.Atoi(v); err == nil {
			return n.setQuorum(k)
		}
	}
	return fmt.Errorf("%w: want all, first, any or a number of branches, got %v", config.ErrSettings, w)
}

func (n *Node) setQuorum(k int) error {
	if k < 1 {
		return fmt.Errorf("%w: a quorum is at least 1 branch, got %d", config.ErrSettings, k)
	}
	n.wait, n.quorum = strconv.Itoa(k), k
	return nil
}

// Needs implements graph.Joiner: how many of n branches must succeed. A
// quorum larger than n is returned as is (the pipeline reports it).
func (n *Node) Needs(branches int) int {
	if n.quorum == 0 {
		return branches
	}
	return n.quorum
}

// TakesVar returns the var each branch contributes (from: var:NAME), or
// "" when it contributes its answer. A branch's write of any other var
// cannot leave the branch; the pipeline reports such writes.
func (n *Node) TakesVar() string { return n.fromVar }

// WritesVars returns the var the merged value goes into (into:
// var:NAME), none when it goes into the answer (pipeline.VarWriter).
func (n *Node) WritesVars() []string {
	if n.intoVar == "" {
		return nil
	}
	return []string{n.intoVar}
}

// Run implements graph.Node; the graph never calls it on a join (it calls
// Merge), so it fails.
func (n *Node) Run(context.Context, *state.State) (string, error) {
	return "", fmt.Errorf("join %q ran without branches", n.id)
}

// value is what branch b contributes.
func (n *Node) value(b graph.Branch[*state.State]) string {
	if n.fromVar == "" {
		return strings.TrimSpace(b.State.Answer)
	}
	v, _ := b.State.Vars.Get(n.fromVar)
	return strings.TrimSpace(v)
}

// Merge implements graph.Joiner: it merges the branches that succeeded
// by the node's rule into st.
func (n *Node) Merge(ctx context.Context, st *state.State, branches []graph.Branch[*state.State]) (string, error) {
	var ok []graph.Branch[*state.State]
	for _, b := range branches {
		if b.Err == nil {
			ok = append(ok, b)
		}
	}
	var merged string
	switch n.merge {
	case MergeCollect:
		vals := make([]string, len(ok))
		for i, b := range ok {
			vals[i] = n.value(b)
		}
		raw, err := json.Marshal(vals)
		if err != nil {
			return "", fmt.Errorf("join %q: %w", n.id, err)
		}
		merged = string(raw)
	case MergeConcat:
		var parts []string
		for _, b := range ok {
			if v := n.value(b); v != "" {
				parts = append(parts, v)
			}
		}
		merged = strings.Join(parts, n.sep)
	case MergeFirst:
		var err error
		if merged, err = n.first(ctx, ok); err != nil {
			return "", fmt.Errorf("join %q: %w", n.id, err)
		}
	case MergeBest:
		merged = n.best(ctx, st, ok)
	case MergeJudge:
		var err error
		if merged, err = n.judge(ctx, st, ok); err != nil {
			return "", fmt.Errorf("join %q: judge: %w", n.id, err)
		}
	case MergeVote:
		vals := make([]string, len(ok))
		for i, b := range ok {
			vals[i] = n.value(b)
		}
		votes := Vote(vals)
		if len(votes) > 0 {
			merged = votes[0].Answer
		}
		var table strings.Builder
		for _, v := range votes {
			fmt.Fprintf(&table, "%s: %d\n", v.Answer, v.Count)
		}
		trace.From(ctx).Emit(trace.Event{Node: n.id, Kind: trace.KindVote, Text: strings.TrimSpace(table.String()),
			Data: map[string]any{"votes": votes, "branches": len(branches), "merged": len(ok)}})
	}
	ids := make([]string, len(ok))
	for i, b := range ok {
		ids[i] = b.ID
	}
	trace.From(ctx).Emit(trace.Event{Node: n.id, Kind: trace.KindInfo, Text: fmt.Sprintf("join: %d of %d branches merged by %s", len(ok), len(branches), n.merge),
		Data: map[string]any{"branches": ids, "merge": n.merge, "wait": n.wait}})
	if n.intoVar != "" {
		if err := st.Vars.SetClipped(n.intoVar, merged); err != nil {
			return "", fmt.Errorf("join %q: into var:%s: %w", n.id, n.intoVar, err)
		}
		return "", nil
	}
	if merged == "" {
		st.SetPartial("", fmt.Sprintf("join %q: %v", n.id, ErrNoValue), state.FailureParse)
		return "", nil
	}
	st.SetAnswer(merged)
	trace.From(ctx).Emit(trace.Event{Node: n.id, Kind: trace.KindAnswer, Text: merged})
	return "", nil
}

// Vote tallies values for a majority vote: empty values are left out,
// numbers compare by value and text by the HotpotQA normalisation, and
// the tally is sorted by count, ties going to the value given first. Each
// vote's Answer is the first branch's text of it; First its index.
func Vote(values []string) []state.Vote {
	at := map[string]int{}
	var votes []state.Vote
	for i, v := range values {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		key := verify.Normalize(v)
		if r, ok := verify.Number(v); ok {
			key = "#" + r.RatString()
		}
		if j, seen := at[key]; seen {
			votes[j].Count++
			continue
		}
		at[key] = len(votes)
		votes = append(votes, state.Vote{Answer: v, Count: 1, First: i})
	}
	sort.SliceStable(votes, func(i, j int) bool {
		if votes[i].Count != votes[j].Count {
			return votes[i].Count > votes[j].Count
		}
		return votes[i].First < votes[j].First
	})
	return votes
}
