package autopilot

import (
	"fmt"
	"maps"
	"regexp"
	"slices"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/nodekind"
)

// Policies (Settings.Policy).
const (
	// PolicyCascade runs the candidates cheapest first and escalates on a
	// failed check.
	PolicyCascade = "cascade"
	// PolicyLearned runs the fitted policy's pick first, then cascades.
	PolicyLearned = "learned"
)

// DefaultEvidenceChars is Settings.EvidenceChars when unset.
const DefaultEvidenceChars = 1500

// DefaultFailPattern is VerifierSettings.FailPattern when unset: an output
// that starts with a word of failure.
const DefaultFailPattern = `(?i)^\W*(fail|failed|false|no|error|incorrect|wrong|invalid)\b`

// Names of the confidence words (CheckSettings.Confidence) and the
// confidence each stands for.
var confidenceWords = map[string]float64{"high": 0.9, "medium": 0.6, "low": 0.3}

// Settings configure an `autopilot` node:
//
//	nodes:
//	  - id: solve
//	    type: autopilot
//	    policy: cascade               # or learned (policy_file: required)
//	    check: {complete: true}       # the default check of every candidate
//	    candidates:
//	      - pipeline: direct.yaml
//	      - pipeline: cot.yaml
//	        check: {agreement: 3}
//	      - pipeline: react.yaml
//	        check: {judge: true}
type Settings struct {
	// Candidates are the pipelines to choose from, cheapest first (the
	// cascade's order when no policy file is loaded). At least one;
	// names must be distinct.
	Candidates []CandidateSettings `mapstructure:"candidates"`
	// Policy is "cascade" (default: candidates in order, escalating on a
	// failed check) or "learned" (the policy file's pick first, then the
	// cascade over the others in the policy's cost order).
	Policy string `mapstructure:"policy"`
	// PolicyFile is a fitted policy (`planner autopilot fit`), relative to
	// this pipeline's folder. Required by policy learned; with policy
	// cascade it orders the candidates by the policy's cost (candidates
	// the policy does not know go last, in their declared order).
	PolicyFile string `mapstructure:"policy_file"`
	// CostWeight overrides the policy's weight of cost against success in
	// a learned pick (success − cost_weight × cost). Default: the
	// policy's own.
	CostWeight *float64 `mapstructure:"cost_weight"`
	// Check is every candidate's check, unless the candidate has its own.
	// Default: complete only.
	Check CheckSettings `mapstructure:"check"`
	// Question is the first candidate's question, a template over the run
	// state. Default {{.Question}}.
	Question string `mapstructure:"question"`
	// Escalation is the question of each candidate after a failed one, a
	// template over the run state with {{.Extra.Question}} (the first
	// candidate's question), {{.Extra.Candidate}}, {{.Extra.Answer}},
	// {{.Extra.Reason}} and {{.Extra.Evidence}} (the last failed
	// attempt: its candidate, answer, why its check failed, and its tool
	// observations and step results, clipped to evidence_chars) and
	// {{.Extra.Attempts}} (one line per failed attempt). Default: the
	// question, then a line per failed attempt (An earlier attempt with
	// NAME answered "ANSWER", which failed the check: REASON.), then the
	// last attempt's evidence.
	Escalation string `mapstructure:"escalation"`
	// EscalationFile reads Escalation from a file instead.
	EscalationFile string `mapstructure:"escalation_file"`
	// EvidenceChars bounds the evidence of a failed attempt passed on.
	// Default DefaultEvidenceChars (1500); -1 passes none.
	EvidenceChars int `mapstructure:"evidence_chars"`
	// Output is where the chosen answer goes: "answer" (default) or
	// "var:NAME".
	Output string `mapstructure:"output"`
	// Export names vars of the chosen candidate's run to copy into the
	// run's vars. Default none.
	Export []string `mapstructure:"export"`
	// Record sets the vars autopilot.candidate (the candidate whose answer
	// stands) and autopilot.path (the candidates tried, in order, as a
	// JSON list). Default true; set it to false for an autopilot on a
	// parallel branch whose join takes only the answer.
	Record *bool `mapstructure:"record"`
}

// CandidateSettings are one candidate of an autopilot node.
type CandidateSettings struct {
	// Name names the candidate in traces, vars and the policy file.
	// Default: the pipeline's name (its config's name:). Required for an
	// inline graph without a name; it then names the graph.
	Name string `mapstructure:"name"`
	// Pipeline is a pipeline file, relative to this pipeline's folder,
	// with its own llm block (default this pipeline's) and tools.
	Pipeline string `mapstructure:"pipeline"`
	// Graph is an inline pipeline (nodes, edges, optionally limits and
	// llm); it uses this pipeline's tools.
	Graph map[string]any `mapstructure:"graph"`
	// Check replaces the node's check for this candidate, as a whole.
	Check *CheckSettings `mapstructure:"check"`
}

// CheckSettings configure how a candidate's answer is checked. Everything
// enabled must pass; they run in this order, and the first to fail ends
// the check: complete, agreement, confidence, verifier, judge.
type CheckSettings struct {
	// Complete requires a complete, non-empty answer. Default true.
	Complete *bool `mapstructure:"complete"`
	// Agreement runs the candidate this many times (concurrently) and
	// passes when a strict majority of the samples agree after answer
	// normalisation; the majority answer is the answer. At least 2 when
	// set; default off (one run). Every sample's cost counts.
	Agreement int `mapstructure:"agreement"`
	// Confidence is the least confidence the candidate must report, in
	// [0, 1]: a trailing line "Confidence: 0.82" (or 82%, or high = 0.9,
	// medium = 0.6, low = 0.3) in its answer, which is then cut from the
	// answer, or else a var confidence its run sets. No reported
	// confidence fails. Default off.
	Confidence *float64 `mapstructure:"confidence"`
	// Verifier checks the answer with a tool, a gold-free scorer or a
	// Starlark program. Default none.
	Verifier *VerifierSettings `mapstructure:"verifier"`
	// Judge asks the node's model whether the answer is correct: the
	// reply's first line must say PASS (and not FAIL). Default false.
	Judge bool `mapstructure:"judge"`
	// JudgePrompt overrides the judge's prompt, a template over the run
	// state with {{.Extra.Answer}} and {{.Extra.Candidate}}; it must ask
	// for PASS or FAIL on the first line. Setting it turns the judge on.
	JudgePrompt string `mapstructure:"judge_prompt"`
	// JudgePromptFile reads JudgePrompt from a file instead.
	JudgePromptFile string `mapstructure:"judge_prompt_file"`
}

// VerifierSettings name one verifier: set exactly one of tool, scorer and
// starlark (or starlark_file).
type VerifierSettings struct {
	// Tool is a tool of this pipeline called with Input: the check passes
	// when the call succeeds and its output does not match FailPattern.
	Tool string `mapstructure:"tool"`
	// Input is the tool's input, a template over the run state with
	// {{.Extra.Answer}} and {{.Extra.Candidate}}. Default
	// {{.Extra.Answer}}.
	Input string `mapstructure:"input"`
	// FailPattern is a regular expression (Go syntax) that fails the check
	// when the tool's output matches it. Default DefaultFailPattern: an
	// output that starts with fail, false, no, error, incorrect, wrong or
	// invalid.
	FailPattern string `mapstructure:"fail_pattern"`
	// Scorer is a scorer that needs no gold answer, judging the answer
	// against the question alone: game24 (the expression uses the
	// question's four numbers, each once, and makes 24).
	Scorer string `mapstructure:"scorer"`
	// Starlark is a Starlark program (Python-like) defining
	// check(question, answer), which returns a bool or a (bool, reason)
	// pair. It runs on the pipeline's code tool (list code under tools:),
	// hermetically, with that tool's limits.
	Starlark string `mapstructure:"starlark"`
	// StarlarkFile reads Starlark from a file instead (relative to this
	// pipeline's folder).
	StarlarkFile string `mapstructure:"starlark_file"`
}

// parsePolicy validates the policy settings of s.
func parsePolicy(s *Settings, keywords bool) error {
	switch s.Policy {
	case "", PolicyCascade:
		s.Policy = PolicyCascade
	case PolicyLearned:
		if s.PolicyFile == "" {
			return config.SettingErrorf("policy_file", "policy learned needs a fitted policy: set policy_file (written by `planner autopilot fit`), or use policy cascade")
		}
		if !keywords {
			return config.SettingErrorf("policy", "policy learned finds similar past tasks with a BM25 keyword index, and this engine has none; "+
				"build the engine with a keyword index (planner.WithKeywordIndex(search.Keywords{}), as the command line does), or use policy cascade")
		}
	default:
		return config.SettingErrorf("policy", "want %s or %s, got %q", PolicyCascade, PolicyLearned, s.Policy)
	}
	if s.CostWeight != nil {
		if s.Policy != PolicyLearned {
			return config.SettingErrorf("cost_weight", "weighs cost in a learned pick; set policy: learned, or remove cost_weight")
		}
		if *s.CostWeight < 0 {
			return config.SettingErrorf("cost_weight", "must be 0 or more, got %v", *s.CostWeight)
		}
	}
	return nil
}

// checkNames validates the candidates' names: set and distinct.
func checkNames(names []string) error {
	seen := map[string]int{}
	for i, name := range names {
		if !validName(name) {
			return config.SettingErrorf(fmt.Sprintf("candidates[%d].name", i),
				"%q is no valid candidate name: use letters, digits, _, - and . (at most 64), starting with a letter", name)
		}
		if j, dup := seen[name]; dup {
			return config.SettingErrorf(fmt.Sprintf("candidates[%d].name", i),
				"candidates %d and %d are both named %q; give one a distinct name:", j+1, i+1, name)
		}
		seen[name] = i
	}
	return nil
}

var nameRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.\-]{0,63}$`)

func validName(s string) bool { return nameRe.MatchString(s) }

// named returns inline with name set to name when it has none, copied.
func named(inline map[string]any, name string) map[string]any {
	if inline == nil || name == "" {
		return inline
	}
	if _, ok := inline["name"]; ok {
		return inline
	}
	out := maps.Clone(inline)
	out["name"] = name
	return out
}

// escalationSpec declares the escalation template.
func escalationSpec() nodekind.TemplateSpec {
	return nodekind.TemplateSpec{Key: "escalation", Extra: []nodekind.Field{
		{Name: "Question", Doc: "the first candidate's question", Sample: "What is 17 times 23?"},
		{Name: "Candidate", Doc: "the last failed candidate's name", Sample: "cot"},
		{Name: "Answer", Doc: "its answer", Sample: "381"},
		{Name: "Reason", Doc: "why its check failed", Sample: "the samples disagree"},
		{Name: "Evidence", Doc: "its tool observations and step results, clipped", Sample: "- calculator(17*23): 391"},
		{Name: "Attempts", Doc: "one line per failed attempt", Sample: `An earlier attempt with cot answered "381", which failed the check: the samples disagree.`},
	}}
}

// judgeSpec declares the judge prompt.
func judgeSpec() nodekind.TemplateSpec {
	return nodekind.TemplateSpec{Key: "check.judge_prompt", Extra: []nodekind.Field{
		{Name: "Answer", Doc: "the answer to judge", Sample: "391"},
		{Name: "Candidate", Doc: "the candidate that gave it", Sample: "cot"},
	}}
}

// inputSpec declares the verifier tool's input template under key.
func inputSpec(key string) nodekind.TemplateSpec {
	s := judgeSpec()
	s.Key = key
	s.Extra = slices.Clone(s.Extra)
	s.Extra[0].Doc = "the answer to verify"
	return s
}

const defaultEscalation = `{{.Extra.Question}}

{{.Extra.Attempts}}{{if .Extra.Evidence}}
What the last attempt found:
{{.Extra.Evidence}}{{end}}`

const defaultJudge = `You are checking an answer before it is given.

Question: {{.Question}}
Proposed answer: {{.Extra.Answer}}

Is the proposed answer correct and complete? Reply with PASS or FAIL on the first line, then one sentence of feedback.`

const judgeSystem = "You are a careful, strict grader."
