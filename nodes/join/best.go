package join

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/graph"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/tmc/langchaingo/llms"
)

// ScoreEnv is what a join's score expression sees, for one branch.
type ScoreEnv struct {
	// Value is what the branch contributes (its answer or var, trimmed).
	Value string `expr:"value"`
	// Vars are the branch's vars.
	Vars map[string]string `expr:"vars"`
	// Question is the task's text.
	Question string `expr:"question"`
	// Branch is the branch's number in the fan-out, from 1.
	Branch int `expr:"branch"`
}

// scorer is a compiled score expression.
type scorer struct {
	src  string
	prog *vm.Program
}

func compileScore(src string) (*scorer, error) {
	prog, err := expr.Compile(src, expr.Env(ScoreEnv{}), expr.AsFloat64(), expr.DisableBuiltin("now"))
	if err != nil {
		return nil, config.SettingErrorf("score", "expression %q: %s", src, strings.ReplaceAll(err.Error(), "\n", " "))
	}
	return &scorer{src: src, prog: prog}, nil
}

// score runs the expression on one branch; an expression that fails on
// it (a reply that is not the JSON it expects) scores -Inf.
func (s *scorer) score(env ScoreEnv) (float64, error) {
	out, err := expr.Run(s.prog, env)
	if err != nil {
		return math.Inf(-1), err
	}
	f, _ := out.(float64)
	if math.IsNaN(f) {
		return math.Inf(-1), fmt.Errorf("score is NaN")
	}
	return f, nil
}

// best picks the branch with the highest score; ties go to the earliest
// branch. It reports every score in a trace event.
func (n *Node) best(ctx context.Context, st *state.State, ok []graph.Branch[*state.State]) string {
	tr := trace.From(ctx)
	bestAt, bestScore := -1, math.Inf(-1)
	scores := make([]float64, len(ok))
	for i, b := range ok {
		v := n.value(b)
		sc, err := n.score.score(ScoreEnv{Value: v, Vars: b.State.Vars.All(), Question: st.Task.Question, Branch: b.Index + 1})
		if err != nil {
			tr.Emit(trace.Event{Node: n.id, Kind: trace.KindGuard, Text: fmt.Sprintf("branch %s: score failed: %v", b.ID, err),
				Data: map[string]any{"guard": "score", "branch": b.ID}})
		}
		scores[i] = sc
		if v != "" && (bestAt < 0 || sc > bestScore) {
			bestAt, bestScore = i, sc
		}
	}
	text := make([]string, len(ok))
	for i, b := range ok {
		text[i] = fmt.Sprintf("%s: %s", b.ID, strconv.FormatFloat(scores[i], 'g', 6, 64))
	}
	tr.Emit(trace.Event{Node: n.id, Kind: trace.KindInfo, Text: "scores " + strings.Join(text, ", "), Data: map[string]any{"scores": scores}})
	if bestAt < 0 {
		return ""
	}
	return n.value(ok[bestAt])
}

// FirstJournalTool is the name under which a journaled run records the
// branch a merge: first took (journal.Run.Tool), so that a resumed run
// takes it again.
const FirstJournalTool = "join.first"

// first takes the value of the first branch, in completion order, that
// has one. In a journaled run the winner's index is journaled: a resumed
// run takes the recorded branch when it succeeded again.
func (n *Node) first(ctx context.Context, ok []graph.Branch[*state.State]) (string, error) {
	ok = slices.Clone(ok) // the caller's order (declaration) stays
	sort.SliceStable(ok, func(i, j int) bool { return ok[i].Rank < ok[j].Rank })
	pick := -1
	for _, b := range ok {
		if n.value(b) != "" {
			pick = b.Index
			break
		}
	}
	if j := journal.From(ctx); j != nil {
		res, err := j.Tool(ctx, n.id, FirstJournalTool, "winner", func(context.Context) (journal.ToolResult, error) {
			return journal.ToolResult{Output: strconv.Itoa(pick)}, nil
		})
		if err != nil {
			return "", fmt.Errorf("journaling the winner: %w", err)
		}
		if k, err := strconv.Atoi(res.Output); err == nil {
			pick = k
		}
	}
	for _, b := range ok {
		if b.Index == pick {
			return n.value(b), nil
		}
	}
	// The recorded winner did not succeed this time: the first that did.
	for _, b := range ok {
		if v := n.value(b); v != "" {
			return v, nil
		}
	}
	return "", nil
}

// judgePrompt is the default prompt of merge: judge.
const judgePrompt = `Question: {{.Question}}

Candidate answers:
{{.Extra.Candidates}}

Which candidate answers the question best? Reply with the candidate's number only.`

const judgeSystem = "You compare candidate answers to a question and pick the best one. You reply with a number only."

// JudgeTemplates declares the prompt of a join with merge: judge.
func JudgeTemplates() []nodekind.TemplateSpec {
	return []nodekind.TemplateSpec{judgeSpec()}
}

func judgeSpec() nodekind.TemplateSpec {
	return nodekind.TemplateSpec{Key: "prompt", Extra: []nodekind.Field{{Name: "Candidates", Doc: "the branches' values, numbered from 1, one block each", Sample: "1. 42\n2. 41"}},
		Required: []nodekind.Requirement{{Fields: []string{"Candidates"}, Append: "Candidates:\n{{.Extra.Candidates}}", When: "with merge: judge"}}}
}

var firstNumber = regexp.MustCompile(`\d+`)

// judge asks the model which branch's value is best; a reply without a
// candidate's number is sent back once, then the first candidate is
// taken (with a guard event).
func (n *Node) judge(ctx context.Context, st *state.State, ok []graph.Branch[*state.State]) (string, error) {
	var vals []string
	var list strings.Builder
	for _, b := range ok {
		if v := n.value(b); v != "" {
			vals = append(vals, v)
			fmt.Fprintf(&list, "%d. %s\n", len(vals), v)
		}
	}
	if len(vals) <= 1 {
		return strings.Join(vals, ""), nil
	}
	user, err := n.judgePrompt.Render(st, map[string]any{"Candidates": strings.TrimSpace(list.String())})
	if err != nil {
		return "", err
	}
	msgs := llm.Prompt(judgeSystem, user)
	caller := llm.CallMeta{Node: n.id, Kind: "join", Role: "select"}
	tr := trace.From(ctx)
	for attempt := 1; attempt <= 2; attempt++ {
		reply, _, err := n.model.Call(ctx, st, caller, msgs)
		if err != nil {
			return "", err
		}
		if m := firstNumber.FindString(reply); m != "" {
			if k, _ := strconv.Atoi(m); k >= 1 && k <= len(vals) {
				tr.Emit(trace.Event{Node: n.id, Kind: trace.KindInfo, Text: fmt.Sprintf("judge picked candidate %d of %d", k, len(vals)), Data: map[string]any{"pick": k}})
				return vals[k-1], nil
			}
		}
		msgs = append(msgs, llm.Text(llms.ChatMessageTypeAI, reply),
			llm.Text(llms.ChatMessageTypeHuman, fmt.Sprintf("Reply with one number from 1 to %d only.", len(vals))))
	}
	tr.Emit(trace.Event{Node: n.id, Kind: trace.KindGuard, Text: "the judge named no candidate; the first is taken", Data: map[string]any{"guard": "judge"}})
	return vals[0], nil
}
