package autopilot_test

import (
	"strings"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Bad settings fail the build with an error naming the setting and the
// fix.
func TestBadSettingsNameTheSettingAndTheFix(t *testing.T) {
	two := "\ncandidates:\n  - " + inline("cheap") + "\n  - " + inline("strong")
	cases := []struct {
		name, settings string
		noKeywords     bool
		want           []string
	}{
		{"no candidates", "candidates: []", false, []string{`"candidates"`, "list the pipelines to choose from"}},
		{"unknown file", "candidates:\n  - {pipeline: nowhere.yaml}", false, []string{"nowhere.yaml"}},
		{"duplicate names", "candidates:\n  - " + inline("cheap") + "\n  - " + inline("cheap"), false, []string{`candidates[1].name`, `both named "cheap"`}},
		{"inline without name", "candidates:\n  - {graph: {nodes: [{id: a, type: direct}], edges: [{from: START, to: a}, {from: a, to: END}]}}", false, []string{`candidates[0].name`, "an inline graph needs a name"}},
		{"bad name", "candidates:\n  - {name: 'a b', graph: {nodes: [{id: a, type: direct}], edges: [{from: START, to: a}, {from: a, to: END}]}}", false, []string{"no valid candidate name"}},
		{"agreement 1", "check: {agreement: 1}", false, []string{`"check.agreement"`, "at least 2"}},
		{"candidate agreement", "candidates:\n  - {name: c, check: {agreement: -2}, graph: {nodes: [{id: a, type: direct}], edges: [{from: START, to: a}, {from: a, to: END}]}}", false, []string{`"candidates[0].check.agreement"`}},
		{"confidence range", "check: {confidence: 1.5}", false, []string{`"check.confidence"`, "[0, 1]"}},
		{"learned without policy file", "policy: learned", false, []string{`"policy_file"`, "planner autopilot fit"}},
		{"learned without keywords", "policy: learned\npolicy_file: p.json", true, []string{`"policy"`, "keyword index"}},
		{"unknown policy", "policy: greedy", false, []string{`"policy"`, `want cascade or learned, got "greedy"`}},
		{"cost weight without learned", "cost_weight: 0.5", false, []string{`"cost_weight"`, "policy: learned"}},
		{"missing policy file", "policy_file: missing.json", false, []string{`"policy_file"`, "missing.json"}},
		{"gold scorer", "check: {verifier: {scorer: em}}", false, []string{`"check.verifier.scorer"`, "gold-free scorers: game24"}},
		{"unknown verifier tool", "check: {verifier: {tool: oracle}}", false, []string{`"check.verifier.tool"`, `no tool "oracle"`, "checker"}},
		{"two verifiers", "check: {verifier: {tool: checker, scorer: game24}}", false, []string{`"check.verifier"`, "exactly one of tool, scorer and starlark"}},
		{"bad fail pattern", "check: {verifier: {tool: checker, fail_pattern: '('}}", false, []string{`"check.verifier.fail_pattern"`}},
		{"starlark without check", `check: {verifier: {starlark: "x = 1"}}`, false, []string{`"check.verifier.starlark"`, "define a function check"}},
		{"starlark syntax", `check: {verifier: {starlark: "def check(q, a) return True"}}`, false, []string{`"check.verifier.starlark"`, "does not run"}},
		{"starlark without the code tool", "candidates:\n  - {name: c, check: {verifier: {starlark: 'def check(q, a): return True'}}, graph: {nodes: [{id: a, type: direct}], edges: [{from: START, to: a}, {from: a, to: END}]}}", false, []string{`"candidates[0].check.verifier.starlark"`, "add code to the pipeline's tools"}},
		{"judge prompt field", `check: {judge: true, judge_prompt: "{{.Extra.Answr}}"}`, false, []string{"check.judge_prompt", "Answr"}},
		{"unknown key", "check: {agreemnt: 3}", false, []string{"agreemnt"}},
		{"evidence chars", "evidence_chars: -5", false, []string{`"evidence_chars"`}},
		{"output", "output: somewhere", false, []string{`"output"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			settings := tc.settings
			if !strings.Contains(settings, "candidates:") {
				settings += two
			}
			yaml := apYAML(settings)
			if strings.Contains(tc.name, "without the code tool") {
				yaml = strings.Replace(yaml, "tools: [checker, code]", "tools: [checker]", 1)
			}
			_, err := build(t, yaml, newModel(nil), buildOpts{noKeywords: tc.noKeywords})
			require.Error(t, err)
			assert.ErrorIs(t, err, config.ErrInvalid)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}
