package nodes

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/internal/par"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/planner-engine/planner/verify"
	"github.com/tmc/langchaingo/llms"
)

// ConsistencySettings configure `self_consistency`: n chain-of-thought
// samples at a temperature, answers extracted and majority-voted.
type ConsistencySettings struct {
	GenerateSettings `mapstructure:",squash"`
	// Samples is the number of samples. Default 5.
	Samples int `mapstructure:"samples"`
	// Concurrency bounds samples in flight. Default Samples (all at once).
	Concurrency int `mapstructure:"concurrency"`
}

// SelfConsistency samples several reasoning paths and votes.
type SelfConsistency struct {
	gen         *Generate
	samples     int
	concurrency int
}

// NewSelfConsistency builds a `self_consistency` nodekind.
func NewSelfConsistency(env nodekind.Env, spec nodekind.Spec) (nodekind.Built, error) {
	var s ConsistencySettings
	if err := config.Decode(spec.Settings, &s); err != nil {
		return nodekind.Built{}, err
	}
	if s.Samples == 0 {
		s.Samples = 5
	}
	if s.Samples < 1 || s.Samples > 64 {
		return nodekind.Built{}, &config.SettingError{Key: "samples", Err: fmt.Errorf("%w: samples must be 1..64", config.ErrSettings)}
	}
	if s.Concurrency <= 0 || s.Concurrency > s.Samples {
		s.Concurrency = s.Samples
	}
	if s.Temperature == nil {
		t := 0.7
		s.Temperature = &t
	}
	g, err := buildGenerate(env, spec, s.GenerateSettings, cotPrompt, true)
	if err != nil {
		return nodekind.Built{}, err
	}
	return nodekind.Built{Node: &SelfConsistency{gen: g, samples: s.Samples, concurrency: s.Concurrency}}, nil
}

// voteKey normalises an answer for voting: numbers compare by value, text
// by the HotpotQA normalisation.
func voteKey(a string) string {
	if r, ok := verify.Number(a); ok {
		return "#" + r.RatString()
	}
	return verify.Normalize(a)
}

// MajorityVote tallies answers (empty ones are ignored) and returns the
// votes sorted by count, ties broken by the earliest sample: the result is
// deterministic for a given list.
func MajorityVote(answers []string) []state.Vote {
	idx := map[string]int{}
	var votes []state.Vote
	for i, a := range answers {
		if strings.TrimSpace(a) == "" {
			continue
		}
		k := voteKey(a)
		if j, ok := idx[k]; ok {
			votes[j].Count++
			continue
		}
		idx[k] = len(votes)
		votes = append(votes, state.Vote{Answer: strings.TrimSpace(a), Count: 1, First: i})
	}
	sort.SliceStable(votes, func(i, j int) bool {
		if votes[i].Count != votes[j].Count {
			return votes[i].Count > votes[j].Count
		}
		return votes[i].First < votes[j].First
	})
	return votes
}

// Run samples concurrently, then votes.
func (n *SelfConsistency) Run(ctx context.Context, st *state.State) (string, error) {
	user, err := n.gen.prompt.Render(st, nil)
	if err != nil {
		return "", err
	}
	msgs := llm.Prompt(n.gen.system, user)
	texts, errs := par.Map(ctx, n.concurrency, n.samples, func(ctx context.Context, i int) (string, error) {
		opts := append(slices.Clip(n.gen.opts), llms.WithSeed(i+1))
		ctx = journal.Branch(ctx, fmt.Sprintf("sample.%d", i+1))
		text, _, err := n.gen.model.Call(ctx, st, llm.CallMeta{Node: n.gen.id, Kind: n.gen.kind, Role: fmt.Sprintf("sample-%d", i+1)}, msgs, opts...)
		return text, err
	})
	if ctx.Err() != nil {
		return "", context.Cause(ctx)
	}
	answers := make([]string, n.samples)
	for i, text := range texts {
		if a, ok := verify.Extract(text); ok && errs[i] == nil {
			answers[i] = a
		}
	}
	failed := 0
	var firstErr error
	for i, e := range errs {
		if e != nil {
			failed++
			if firstErr == nil {
				firstErr = e
			}
			continue
		}
		st.Candidates = append(st.Candidates, state.Candidate{Text: texts[i], Answer: answers[i]})
	}
	if failed == n.samples {
		return "", fmt.Errorf("all %d samples failed: %w", n.samples, firstErr)
	}
	votes := MajorityVote(answers)
	st.SelfConsistency = &state.Tally{Samples: n.samples, Failed: failed, Votes: votes}
	var table strings.Builder
	for _, v := range votes {
		fmt.Fprintf(&table, "%s: %d\n", v.Answer, v.Count)
	}
	trace.From(ctx).Emit(trace.Event{Node: n.gen.id, Kind: trace.KindVote, Text: strings.TrimSpace(table.String()),
		Data: map[string]any{"votes": votes, "samples": n.samples, "failed": failed}})
	if len(votes) == 0 {
		st.SetPartial("", "no sample produced an answer", state.FailureParse)
		return "", nil
	}
	st.SetAnswer(votes[0].Answer)
	trace.From(ctx).Emit(trace.Event{Node: n.gen.id, Kind: trace.KindAnswer, Text: votes[0].Answer})
	return "", nil
}
