package autopilot

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/telemetry"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/trace"
	"github.com/planner-engine/planner/verify"
	"go.opentelemetry.io/otel/attribute"
)

// Vars the node sets.
const (
	// VarCandidate is the var holding the name of the candidate whose
	// answer stands.
	VarCandidate = "autopilot.candidate"
	// VarPath is the var holding the candidates tried, in order, as a JSON
	// list of names.
	VarPath = "autopilot.path"
)

// Node is the `autopilot` node.
type Node struct {
	id, kind   string
	model      llm.Model
	tools      *tools.Registry
	cands      []*candidate // declared order
	byName     map[string]*candidate
	question   *nodekind.Template
	escalation *nodekind.Template
	evidence   int // chars of evidence passed on; < 0 none
	outVar     string
	export     []string
	record     bool
	pol        *policy // nil without a policy file
}

// candidate is one built candidate.
type candidate struct {
	name  string
	sub   nodekind.Subgraph
	check *checker
}

// New builds an `autopilot` node (Settings).
func New(env nodekind.Env, spec nodekind.Spec) (nodekind.Built, error) {
	var s Settings
	if err := config.Decode(spec.Settings, &s); err != nil {
		return nodekind.Built{}, err
	}
	if err := parsePolicy(&s, env.Keywords != nil); err != nil {
		return nodekind.Built{}, err
	}
	if len(s.Candidates) == 0 {
		return nodekind.Built{}, config.SettingErrorf("candidates", "list the pipelines to choose from, cheapest first: candidates: [{pipeline: cot.yaml}, {pipeline: react.yaml}]")
	}
	if env.Subgraphs == nil {
		return nodekind.Built{}, config.SettingErrorf("candidates", "an autopilot's candidates can only be built inside a pipeline")
	}
	n := &Node{id: spec.ID, kind: spec.Type, model: env.Model, tools: env.Tools, byName: map[string]*candidate{}, evidence: DefaultEvidenceChars}
	var err error
	if n.question, err = env.Template(nodekind.TemplateSpec{Key: "question"}, s.Question, "", "{{.Question}}"); err != nil {
		return nodekind.Built{}, err
	}
	if n.escalation, err = env.Template(escalationSpec(), s.Escalation, s.EscalationFile, defaultEscalation); err != nil {
		return nodekind.Built{}, err
	}
	switch {
	case s.EvidenceChars < -1:
		return nodekind.Built{}, config.SettingErrorf("evidence_chars", "want a number of characters, or -1 for none; got %d", s.EvidenceChars)
	case s.EvidenceChars != 0:
		n.evidence = s.EvidenceChars
	}
	if n.outVar, err = nodekind.VarSetting("output", s.Output, true); err != nil {
		return nodekind.Built{}, err
	}
	if err := nodekind.VarNamesSetting("export", s.Export); err != nil {
		return nodekind.Built{}, err
	}
	n.export = s.Export
	n.record = s.Record == nil || *s.Record
	def, err := buildCheck(env, "check", s.Check)
	if err != nil {
		return nodekind.Built{}, err
	}
	names := make([]string, len(s.Candidates))
	for i, cs := range s.Candidates {
		c, err := buildCandidate(env, i, cs, def)
		if err != nil {
			return nodekind.Built{}, err
		}
		names[i] = c.name
		n.cands = append(n.cands, c)
	}
	if err := checkNames(names); err != nil {
		return nodekind.Built{}, err
	}
	for _, c := range n.cands {
		n.byName[c.name] = c
	}
	if s.PolicyFile != "" {
		if n.pol, err = loadPolicy(env, s, names); err != nil {
			return nodekind.Built{}, err
		}
	}
	return nodekind.Built{Node: n}, nil
}

// buildCandidate builds candidate i.
func buildCandidate(env nodekind.Env, i int, cs CandidateSettings, def *checker) (*candidate, error) {
	key := fmt.Sprintf("candidates[%d]", i)
	if cs.Graph != nil && cs.Name == "" {
		if _, ok := cs.Graph["name"]; !ok {
			return nil, config.SettingErrorf(key+".name", "an inline graph needs a name: set name: (or the graph's own name:)")
		}
	}
	if cs.Name != "" && !validName(cs.Name) {
		return nil, config.SettingErrorf(key+".name", "%q is no valid candidate name: use letters, digits, _, - and . (at most 64), starting with a letter", cs.Name)
	}
	sub, err := env.Subgraphs.Subgraph(key+".graph", cs.Pipeline, named(cs.Graph, cs.Name), nil)
	if err != nil {
		return nil, err
	}
	c := &candidate{name: cmp.Or(cs.Name, sub.Name()), sub: sub, check: def}
	if cs.Check != nil {
		if c.check, err = buildCheck(env, key+".check", *cs.Check); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// WritesVars returns the vars the node writes (pipeline.VarWriter).
func (n *Node) WritesVars() []string {
	out := slices.Clone(n.export)
	if n.record {
		out = append(out, VarCandidate, VarPath)
	}
	if n.outVar != "" {
		out = append(out, n.outVar)
	}
	return out
}

// Candidates returns the candidates' names in declared order.
func (n *Node) Candidates() []string {
	out := make([]string, len(n.cands))
	for i, c := range n.cands {
		out[i] = c.name
	}
	return out
}

// failure is a failed attempt, as the next candidate's question tells it.
type failure struct {
	name, answer, reason, evidence string
}

// Run runs the candidates in the plan's order until one's answer passes
// its check, and maps the standing answer into st.
func (n *Node) Run(ctx context.Context, st *state.State) (string, error) {
	q, err := n.question.Render(st, nil)
	if err != nil {
		return "", err
	}
	q = strings.TrimSpace(q)
	p, err := n.plan(ctx, st, q)
	if err != nil {
		return "", err
	}
	tr := trace.From(ctx)
	tr.Emit(p.event(n.id))
	telemetry.AddEvent(ctx, "autopilot.plan", p.spanAttributes()...)
	var failed []failure
	var path []string
	for i, name := range p.Order {
		c := n.byName[name]
		question := q
		if len(failed) > 0 {
			if question, err = n.escalate(st, q, failed); err != nil {
				return "", err
			}
		}
		// A span per attempt: the candidate's nested run and its check
		// sit under it.
		actx, span := telemetry.StartChild(ctx, "autopilot.candidate "+name,
			telemetry.KeyNodeID.String(n.id), attribute.String("planner.autopilot.candidate", name), attribute.Int("planner.autopilot.attempt", i+1))
		v, a, err := n.try(actx, st, c, question, i+1)
		if err != nil {
			span.Fail("error", err)
			span.End()
			return "", err
		}
		path = append(path, name)
		last := i == len(p.Order)-1
		next := ""
		if !v.Pass && !last {
			next = p.Order[i+1]
		}
		span.SetAttributes(attribute.Bool("planner.autopilot.pass", v.Pass), attribute.StringSlice("planner.autopilot.checks", v.Checks),
			attribute.String("planner.autopilot.escalate_to", next))
		span.End()
		tr.Emit(v.event(n.id, name, i+1, a, next))
		if !v.Pass && !last {
			failed = append(failed, failure{name: name, answer: a.answer, reason: v.Reason, evidence: evidenceOf(a.state(), n.evidence)})
			continue
		}
		if !v.Pass && a.state() == nil {
			// The last candidate's run failed: there is no answer to stand.
			return "", fmt.Errorf("autopilot %q: no candidate passed its check, and the last, %s, failed: %w", n.id, name, a.runErr())
		}
		return "", n.settle(st, c, a, v, path)
	}
	return "", fmt.Errorf("autopilot %q: the plan names no candidate", n.id)
}

// try runs candidate c's attempt number i on question and checks its
// answer, the verdict going through the journal (a resumed run replays it).
func (n *Node) try(ctx context.Context, st *state.State, c *candidate, question string, i int) (verdict, *attempt, error) {
	a, err := n.attempt(ctx, st, c, question)
	if err != nil {
		return verdict{}, nil, err
	}
	v, err := n.check(ctx, st, a)
	if err != nil {
		return verdict{}, nil, err
	}
	v, err = n.journalVerdict(ctx, c.name, i, a.answer, v)
	return v, a, err
}

// settle maps the standing attempt into st.
func (n *Node) settle(st *state.State, c *candidate, a *attempt, v verdict, path []string) error {
	child := a.state()
	for _, name := range n.export {
		if val, ok := child.Vars.Get(name); ok {
			if err := st.Vars.Set(name, val); err != nil {
				return fmt.Errorf("autopilot %q: export %q: %w", n.id, name, err)
			}
		}
	}
	if n.record {
		pathJSON, err := json.Marshal(path)
		if err != nil {
			return fmt.Errorf("autopilot %q: %w", n.id, err)
		}
		if err := st.Vars.Set(VarCandidate, c.name); err != nil {
			return fmt.Errorf("autopilot %q: %w", n.id, err)
		}
		if err := st.Vars.Set(VarPath, string(pathJSON)); err != nil {
			return fmt.Errorf("autopilot %q: %w", n.id, err)
		}
	}
	complete, reason, failure := child.Complete, child.Reason, child.Failure
	if !v.Pass {
		complete = false
		reason = fmt.Sprintf("no candidate passed its check; the last, %s, failed it: %s", c.name, v.Reason)
		failure = cmp.Or(failure, state.FailureWrong)
	}
	if n.outVar != "" {
		if !complete {
			st.NoteIncident(cmp.Or(failure, state.FailureBudget))
		}
		if err := st.Vars.Set(n.outVar, a.answer); err != nil {
			return fmt.Errorf("autopilot %q: output var:%s: %w", n.id, n.outVar, err)
		}
		return nil
	}
	st.Answer, st.Done, st.Complete, st.Reason = a.answer, true, complete, reason
	if complete {
		st.Reason, st.Failure = "", ""
	} else if st.Failure == "" {
		st.Failure = failure
	}
	return nil
}

// escalate renders the question of the candidate after failed ones.
func (n *Node) escalate(st *state.State, q string, failed []failure) (string, error) {
	var lines []string
	for _, f := range failed {
		lines = append(lines, fmt.Sprintf("An earlier attempt with %s answered %q, which failed the check: %s.",
			f.name, clipLine(f.answer, 300), strings.TrimSuffix(f.reason, ".")))
	}
	last := failed[len(failed)-1]
	out, err := n.escalation.Render(st, map[string]any{
		"Question": q, "Candidate": last.name, "Answer": last.answer, "Reason": last.reason,
		"Evidence": last.evidence, "Attempts": strings.Join(lines, "\n"),
	})
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// sample is one nested run of a candidate.
type sample struct {
	st  *state.State
	err error // a failure of the run that did not end the node
}

// attempt is one candidate's turn: its runs, and the answer that stands
// for it.
type attempt struct {
	cand    *candidate
	samples []sample
	// chosen is the sample whose answer stands: the only one, or the first
	// of the majority; -1 when there is none.
	chosen int
	answer string
	// votes describes an agreement vote; agreed is whether a strict
	// majority agreed.
	votes  string
	agreed bool
}

// state returns the standing sample's state, nil when there is none.
func (a *attempt) state() *state.State {
	if a.chosen < 0 {
		return nil
	}
	return a.samples[a.chosen].st
}

// runErr is the first sample's failure.
func (a *attempt) runErr() error {
	for _, s := range a.samples {
		if s.err != nil {
			return s.err
		}
	}
	return errors.New("the run gave no answer")
}

// attempt runs candidate c on question: once, or agreement times
// concurrently. The error is only the run's end (see fatal).
func (n *Node) attempt(ctx context.Context, st *state.State, c *candidate, question string) (*attempt, error) {
	task := st.Task
	task.Question = question
	task.Tags = slices.Clone(task.Tags)
	// The candidate's model calls are its pipeline's (recorded replies
	// per config play to it).
	ctx = llm.WithPipeline(ctx, c.sub.Name())
	k := c.check.agreement
	a := &attempt{cand: c, samples: make([]sample, k), chosen: -1}
	label := func(i int) string {
		if k == 1 {
			return "candidate " + c.name
		}
		return fmt.Sprintf("candidate %s sample %d", c.name, i+1)
	}
	var wg sync.WaitGroup
	for i := range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					a.samples[i] = sample{err: fmt.Errorf("autopilot %q: %s panicked: %v", n.id, label(i), p)}
				}
			}()
			child, err := c.sub.RunNested(ctx, st, task, nil, label(i))
			a.samples[i] = sample{st: child, err: err}
		}()
	}
	wg.Wait()
	for _, s := range a.samples {
		if s.err != nil && fatal(ctx, s.err) {
			return nil, s.err
		}
	}
	for i := range a.samples {
		if a.samples[i].err != nil {
			a.samples[i].st = nil
		}
	}
	if k == 1 {
		if a.samples[0].st != nil {
			a.chosen, a.answer = 0, a.samples[0].st.Answer
		}
		return a, nil
	}
	a.vote(c.check.complete)
	return a, nil
}

// vote finds the strict majority of the samples' answers after
// normalisation (a trailing confidence line left out). Only samples that
// ran without error and gave a non-empty answer vote (and, with complete,
// a complete one).
func (a *attempt) vote(complete bool) {
	type tally struct {
		first, count int
		shown        string
	}
	var order []string
	tallies := map[string]*tally{}
	failed := 0
	for i, s := range a.samples {
		if s.st == nil || (complete && !s.st.Complete) || strings.TrimSpace(s.st.Answer) == "" {
			failed++
			continue
		}
		_, bare, _ := parseConfidence(s.st.Answer)
		key := verify.Normalize(bare)
		if key == "" {
			key = strings.TrimSpace(bare)
		}
		t := tallies[key]
		if t == nil {
			t = &tally{first: i, shown: clipLine(bare, 60)}
			tallies[key] = t
			order = append(order, key)
		}
		t.count++
	}
	var parts []string
	best := ""
	for _, key := range order {
		t := tallies[key]
		parts = append(parts, fmt.Sprintf("%q ×%d", t.shown, t.count))
		if best == "" || t.count > tallies[best].count {
			best = key
		}
	}
	if failed > 0 {
		parts = append(parts, fmt.Sprintf("no answer ×%d", failed))
	}
	a.votes = strings.Join(parts, ", ")
	if best != "" {
		t := tallies[best]
		a.chosen, a.answer = t.first, a.samples[t.first].st.Answer
		a.agreed = 2*t.count > len(a.samples)
		return
	}
	// No sample answered: the first run's state stands, if any.
	for i, s := range a.samples {
		if s.st != nil {
			a.chosen, a.answer = i, s.st.Answer
			return
		}
	}
}

// verdict is a check's outcome.
type verdict struct {
	Pass   bool   `json:"pass"`
	Reason string `json:"reason,omitempty"`
	// Checks are what the check ran, in order.
	Checks []string `json:"checks,omitempty"`
	// Confidence is the reported confidence, when read.
	Confidence *float64 `json:"confidence,omitempty"`
	// Replayed is true when the verdict came from the journal.
	Replayed bool `json:"-"`
}

func fail(checks []string, format string, args ...any) verdict {
	return verdict{Checks: checks, Reason: fmt.Sprintf(format, args...)}
}

// check checks a's answer with its candidate's check. The error is only
// the run's end.
func (n *Node) check(ctx context.Context, st *state.State, a *attempt) (verdict, error) {
	c := a.cand
	chk := c.check
	var checks []string
	child := a.state()
	if chk.agreement > 1 {
		checks = append(checks, "agreement")
		if !a.agreed {
			return fail(checks, "no strict majority of the %d samples agree (%s)", chk.agreement, a.votes), nil
		}
	} else if child == nil {
		return fail(append(checks, "run"), "the run failed: %s", clipLine(a.runErr().Error(), 300)), nil
	}
	if chk.complete {
		checks = append(checks, "complete")
		switch {
		case !child.Complete:
			return fail(checks, "the run did not complete: %s", cmp.Or(child.Reason, child.Failure, "no reason given")), nil
		case strings.TrimSpace(a.answer) == "":
			return fail(checks, "the answer is empty"), nil
		}
	}
	var conf *float64
	if chk.confident {
		checks = append(checks, "confidence")
		v, bare, ok := parseConfidence(a.answer)
		if ok {
			a.answer = bare
		} else if raw, set := child.Vars.Get("confidence"); set {
			v, ok = confidenceValue(raw)
		}
		if !ok {
			return fail(checks, "no confidence reported (a last line Confidence: 0.8, or a var confidence)"), nil
		}
		conf = &v
		if v < chk.confidence {
			vd := fail(checks, "confidence %.2f is below %.2f", v, chk.confidence)
			vd.Confidence = conf
			return vd, nil
		}
	}
	if chk.verifier != nil {
		checks = append(checks, chk.verifier.name())
		ok, reason, err := chk.verifier.verify(ctx, n, st, c.name, a.answer)
		if err != nil {
			return verdict{}, err
		}
		if !ok {
			vd := fail(checks, "%s", reason)
			vd.Confidence = conf
			return vd, nil
		}
	}
	if chk.judge != nil {
		checks = append(checks, "judge")
		prompt, err := chk.judge.Render(st, map[string]any{"Answer": a.answer, "Candidate": c.name})
		if err != nil {
			return verdict{}, err
		}
		text, _, err := n.model.Call(ctx, st, llm.CallMeta{Node: n.id, Kind: n.kind, Role: "judge"}, llm.Prompt(judgeSystem, prompt))
		if err != nil {
			if fatal(ctx, err) {
				return verdict{}, err
			}
			return fail(checks, "the judge failed: %s", clipLine(err.Error(), 200)), nil
		}
		if !judgePassed(text) {
			vd := fail(checks, "the judge said: %s", cmp.Or(clipLine(text, 300), "nothing"))
			vd.Confidence = conf
			return vd, nil
		}
	}
	return verdict{Pass: true, Checks: checks, Confidence: conf}, nil
}

// event is the trace event of a check's verdict.
func (v verdict) event(node, name string, attempt int, a *attempt, next string) trace.Event {
	word := "passed"
	if !v.Pass {
		word = "failed"
	}
	text := fmt.Sprintf("%s %s the check: %q", name, word, clipLine(a.answer, 120))
	if v.Reason != "" {
		text += " — " + strings.TrimRight(v.Reason, ". ")
	}
	if next != "" {
		text += "; escalating to " + next
	}
	data := map[string]any{
		"autopilot": "check", "candidate": name, "attempt": attempt, "pass": v.Pass,
		"answer": a.answer, "checks": v.Checks, "samples": len(a.samples), "replayed": v.Replayed,
	}
	if v.Reason != "" {
		data["reason"] = v.Reason
	}
	if a.votes != "" {
		data["votes"] = a.votes
	}
	if v.Confidence != nil {
		data["confidence"] = *v.Confidence
	}
	if next != "" {
		data["escalate_to"] = next
	}
	return trace.Event{Node: node, Kind: trace.KindDecision, Text: text, Data: data}
}

// evidenceOf is what a failed run found: its tool observations and plan
// step results, one a line, clipped to limit characters (none when limit
// < 0).
func evidenceOf(st *state.State, limit int) string {
	if st == nil || limit < 0 {
		return ""
	}
	var lines []string
	for _, e := range st.Scratchpad {
		if e.Tool != "" && e.Observation != "" {
			lines = append(lines, fmt.Sprintf("- %s(%s): %s", e.Tool, clipLine(e.Input, 80), clipLine(e.Observation, 300)))
		}
	}
	for _, s := range st.Plan {
		if s.Result != "" {
			lines = append(lines, fmt.Sprintf("- step %s (%s): %s", s.ID, clipLine(s.Description, 80), clipLine(s.Result, 300)))
		}
	}
	out := strings.Join(lines, "\n")
	if r := []rune(out); len(r) > limit {
		out = string(r[:limit]) + "…"
	}
	return out
}

// fatal reports whether a nested run's error is the run's end, never one
// candidate's failure: ctx is done, or err is a cancellation, a timeout,
// a wait for a person, a spent budget or the journal's own stop.
func fatal(ctx context.Context, err error) bool {
	if ctx.Err() != nil || journal.Stopped(err) {
		return true
	}
	for _, f := range []error{context.Canceled, context.DeadlineExceeded, journal.ErrWaiting, llm.ErrBudgetExceeded} {
		if errors.Is(err, f) {
			return true
		}
	}
	return false
}
