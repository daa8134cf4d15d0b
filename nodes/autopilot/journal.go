package autopilot

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/planner-engine/planner/autopilot"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"go.opentelemetry.io/otel/attribute"
)

// JournalTool is the pseudo tool under which a journaled run records an
// autopilot's choices (journal kind "tool"): the plan (input {"step":
// "plan", the question, the candidates}; output the plan as JSON: order,
// policy, pick) and each verdict (input {"step": "check", the candidate,
// the attempt's number, the answer}; output {"pass", "reason", ...}). A
// resumed run replays them instead of deciding again, so it follows the
// path the first run took even when the policy file, or a verifier's
// behaviour, changed meanwhile.
const JournalTool = "planner.autopilot"

// plan is the order the candidates run in, and why.
type plan struct {
	// Order are the candidates' names in the order they run.
	Order []string `json:"order"`
	// Policy is PolicyCascade or PolicyLearned.
	Policy string `json:"policy"`
	// PolicyFile is the policy file read, if any.
	PolicyFile string `json:"policy_file,omitempty"`
	// Pick is the learned policy's choice.
	Pick *autopilot.Choice `json:"pick,omitempty"`
	// Note says why a learned plan fell back to the cost order.
	Note string `json:"note,omitempty"`
	// Replayed is true when the plan came from the journal.
	Replayed bool `json:"-"`
}

type planRequest struct {
	Step       string   `json:"step"`
	Question   string   `json:"question"`
	Candidates []string `json:"candidates"`
}

type checkRequest struct {
	Step      string `json:"step"`
	Candidate string `json:"candidate"`
	Attempt   int    `json:"attempt"`
	Answer    string `json:"answer"`
}

// plan returns the run's plan: live (livePlan), journaled, or replayed
// from ctx's journal.
func (n *Node) plan(ctx context.Context, _ *state.State, q string) (plan, error) {
	j := journal.From(ctx)
	if j == nil {
		return n.livePlan(ctx, q)
	}
	input, err := json.Marshal(planRequest{Step: "plan", Question: q, Candidates: n.Candidates()})
	if err != nil {
		return plan{}, fmt.Errorf("autopilot %q: encoding the journal request: %w", n.id, err)
	}
	var p plan
	ran := false
	res, err := j.Tool(ctx, n.id, JournalTool, string(input), func(ctx context.Context) (journal.ToolResult, error) {
		ran = true
		var err error
		if p, err = n.livePlan(ctx, q); err != nil {
			return journal.ToolResult{}, err
		}
		out, err := json.Marshal(p)
		if err != nil {
			return journal.ToolResult{}, fmt.Errorf("autopilot %q: encoding the plan: %w", n.id, err)
		}
		return journal.ToolResult{Output: string(out)}, nil
	})
	switch {
	case err != nil:
		return plan{}, err
	case ran:
		return p, nil
	}
	if err := json.Unmarshal([]byte(res.Output), &p); err != nil {
		return plan{}, fmt.Errorf("%w: autopilot %q: the journal's plan: %w", journal.ErrCorrupt, n.id, err)
	}
	seen := map[string]bool{}
	for _, name := range p.Order {
		if _, ok := n.byName[name]; !ok || seen[name] {
			return plan{}, fmt.Errorf("%w: autopilot %q: the journal's plan runs %s, and the node's candidates are %s",
				journal.ErrDiverged, n.id, strings.Join(p.Order, ", "), strings.Join(n.Candidates(), ", "))
		}
		seen[name] = true
	}
	if len(p.Order) == 0 {
		return plan{}, fmt.Errorf("%w: autopilot %q: the journal's plan runs no candidate", journal.ErrCorrupt, n.id)
	}
	p.Replayed = true
	return p, nil
}

// journalVerdict journals v, the verdict on candidate's answer at its
// attempt, or replays the journaled verdict in its place.
func (n *Node) journalVerdict(ctx context.Context, candidate string, attempt int, answer string, v verdict) (verdict, error) {
	j := journal.From(ctx)
	if j == nil {
		return v, nil
	}
	input, err := json.Marshal(checkRequest{Step: "check", Candidate: candidate, Attempt: attempt, Answer: answer})
	if err != nil {
		return verdict{}, fmt.Errorf("autopilot %q: encoding the journal request: %w", n.id, err)
	}
	ran := false
	res, err := j.Tool(ctx, n.id, JournalTool, string(input), func(context.Context) (journal.ToolResult, error) {
		ran = true
		out, err := json.Marshal(v)
		if err != nil {
			return journal.ToolResult{}, fmt.Errorf("autopilot %q: encoding the verdict: %w", n.id, err)
		}
		return journal.ToolResult{Output: string(out)}, nil
	})
	switch {
	case err != nil:
		return verdict{}, err
	case ran:
		return v, nil
	}
	var rec verdict
	if err := json.Unmarshal([]byte(res.Output), &rec); err != nil {
		return verdict{}, fmt.Errorf("%w: autopilot %q: the journal's verdict: %w", journal.ErrCorrupt, n.id, err)
	}
	rec.Replayed = true
	return rec, nil
}

// event is the trace event of the plan.
func (p plan) event(node string) trace.Event {
	var text string
	data := map[string]any{"autopilot": "plan", "policy": p.Policy, "order": p.Order, "candidate": p.Order[0], "replayed": p.Replayed}
	if p.PolicyFile != "" {
		data["policy_file"] = p.PolicyFile
	}
	switch {
	case p.Pick != nil:
		best := p.Pick.Estimates
		text = fmt.Sprintf("learned pick: %s", p.Pick.Candidate)
		for _, e := range best {
			if e.Name == p.Pick.Candidate {
				text += fmt.Sprintf(" (expected success %.2f, cost %.3g, utility %.3g over %d neighbours)", e.Success, e.Cost, e.Utility, len(p.Pick.Neighbours))
			}
		}
		if len(p.Order) > 1 {
			text += "; then " + strings.Join(p.Order[1:], ", ")
		}
		data["estimates"] = p.Pick.Estimates
		data["neighbours"] = p.Pick.Neighbours
		data["cost_weight"] = p.Pick.CostWeight
	default:
		text = fmt.Sprintf("%s: %s", p.Policy, strings.Join(p.Order, " → "))
		if p.Note != "" {
			text += " (" + p.Note + ")"
			data["note"] = p.Note
		}
	}
	if p.Replayed {
		text += " [replayed from the journal]"
	}
	return trace.Event{Node: node, Kind: trace.KindDecision, Text: text, Data: data}
}

// spanAttributes describe p on the node's span (event autopilot.plan):
// the policy, the order, and a learned pick's candidate, estimates and
// neighbours (ids and BM25 scores, not their texts).
func (p plan) spanAttributes() []attribute.KeyValue {
	kv := []attribute.KeyValue{attribute.String("planner.autopilot.policy", p.Policy), attribute.StringSlice("planner.autopilot.order", p.Order),
		attribute.Bool("planner.autopilot.replayed", p.Replayed)}
	if p.Note != "" {
		kv = append(kv, attribute.String("planner.autopilot.note", p.Note))
	}
	if c := p.Pick; c != nil {
		var names, ids []string
		var success, cost, utility, scores []float64
		for _, e := range c.Estimates {
			names = append(names, e.Name)
			success, cost, utility = append(success, e.Success), append(cost, e.Cost), append(utility, e.Utility)
		}
		for _, nb := range c.Neighbours {
			ids, scores = append(ids, nb.ID), append(scores, nb.Score)
		}
		kv = append(kv, attribute.String("planner.autopilot.candidate", c.Candidate), attribute.Float64("planner.autopilot.cost_weight", c.CostWeight),
			attribute.StringSlice("planner.autopilot.estimates.candidate", names), attribute.Float64Slice("planner.autopilot.estimates.success", success),
			attribute.Float64Slice("planner.autopilot.estimates.cost", cost), attribute.Float64Slice("planner.autopilot.estimates.utility", utility),
			attribute.StringSlice("planner.autopilot.neighbours.id", ids), attribute.Float64Slice("planner.autopilot.neighbours.score", scores))
	}
	return kv
}
