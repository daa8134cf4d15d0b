package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm/provider"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shippedConfigs returns the absolute paths of configs/*.yaml.
func shippedConfigs(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(configPath("*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	return paths
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	typo := filepath.Join(dir, "typo.yaml")
	require.NoError(t, os.WriteFile(typo, []byte(`name: typo
limits:
  max_step: 5
nodes:
  - id: answer
    type: direct
edges:
  - {from: START, to: answer}
  - {from: answer, to: END}
`), 0o600))

	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string // regexp
	}{
		{name: "unknown flag", args: []string{"run", "--config", configPath("cot.yaml"), "--bogus", "task"},
			wantCode: 2, wantStderr: `unknown flag: --bogus`},
		{name: "run without --config", args: []string{"run", "task"},
			wantCode: 2, wantStderr: `--config is required`},
		{name: "run without a task", args: []string{"run", "--config", configPath("cot.yaml")},
			wantCode: 2, wantStderr: `expected a task`},
		{name: "--llm without a model", args: []string{"run", "--config", configPath("cot.yaml"), "--llm", "openai", "task"},
			wantCode: 2, wantStderr: `--llm openai: no model given; use --llm openai:gpt-4o-mini`},
		{name: "--llm with an unknown provider", args: []string{"run", "--config", configPath("cot.yaml"), "--llm", "gpt:4", "task"},
			wantCode: 2, wantStderr: `unknown llm provider "gpt"`},
		{name: "pipeline without llm block and no --llm", args: []string{"run", "--config", configPath("cot.yaml"), "task"},
			wantCode: 2, wantStderr: `no model configured`},
		{name: "typo'd key fails validation with file:line", args: []string{"validate", typo},
			wantCode: 1, wantStderr: `(?m)^` + regexp.QuoteMeta(typo) + `:3: .*max_step`},
		{name: "typo'd key fails run with file:line", args: []string{"run", "--config", typo, "--llm", "sim", "task"},
			wantCode: 1, wantStderr: regexp.QuoteMeta(typo) + `:3: `},
		{name: "missing pipeline file", args: []string{"validate", filepath.Join(dir, "absent.yaml")},
			wantCode: 1, wantStderr: `absent.yaml`},
		{name: "graph with an unknown format", args: []string{"graph", configPath("cot.yaml"), "--format", "png"},
			wantCode: 2, wantStderr: `--format must be dot, mermaid or svg`},
		{name: "paradigms with an unknown format", args: []string{"paradigms", "--format", "png"},
			wantCode: 2, wantStderr: `--format must be text or mermaid`},
		{name: "compare without --config", args: []string{"compare", "--llm", "sim"},
			wantCode: 2, wantStderr: `give at least one --config`},
		{name: "compare has no --record", args: []string{"compare", "--config", configPath("cot.yaml"), "--record", "x.jsonl"},
			wantCode: 2, wantStderr: `unknown flag: --record`},
		{name: "tools call with one argument", args: []string{"tools", "call", "calculator"},
			wantCode: 2, wantStderr: `a tool name and one input`},
		{name: "unknown tool", args: []string{"tools", "call", "teleport", "x"},
			wantCode: 1, wantStderr: `teleport`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := cli(t, tt.args...)
			assert.Equal(t, tt.wantCode, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
			assert.Regexp(t, tt.wantStderr, res.stderr)
		})
	}
}

func TestValidateAcceptsEveryShippedConfig(t *testing.T) {
	t.Parallel()
	configs := shippedConfigs(t)
	res := cli(t, append([]string{"validate"}, configs...)...)
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	for _, path := range configs {
		assert.Contains(t, res.stdout, path+": ok")
	}
}

func TestGraphRendersRouteLabels(t *testing.T) {
	t.Parallel()
	tests := []struct {
		format string
		want   []string
	}{
		{format: "dot", want: []string{"digraph", `"replan" -> "execute" [label=" continue "]`, `"replan" -> "finalize" [label=" finish "]`}},
		{format: "mermaid", want: []string{"flowchart TD", `-->|"continue"|`, `-->|"finish"|`, `-->|"failed"|`}},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			t.Parallel()
			res := cli(t, "graph", configPath("plan_execute.yaml"), "--format", tt.format)
			require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
			for _, w := range tt.want {
				assert.Contains(t, res.stdout, w)
			}
		})
	}
}

func TestParseReadsStdin(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, stdin string
		want        map[string]any
	}{
		{name: "action", stdin: "Thought: look it up\nAction: search\nAction Input: Eiffel Tower",
			want: map[string]any{"kind": "action", "tool": "search", "input": "Eiffel Tower"}},
		{name: "final answer", stdin: "Thought: done\nFinal Answer: 324 m",
			want: map[string]any{"kind": "final", "answer": "324 m"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := execPlanner(t, invocation{args: []string{"parse"}, stdin: tt.stdin})
			require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
			var got map[string]any
			res.lastJSON(t, &got)
			for k, v := range tt.want {
				assert.Equal(t, v, got[k], k)
			}
		})
	}
}

func TestToolsCallRunsTheCalculator(t *testing.T) {
	t.Parallel()
	res := cli(t, "tools", "call", "calculator", "2^10")
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	assert.Equal(t, "1024", strings.TrimSpace(res.stdout))
}

func TestModelsListsEveryProviderWithItsCapabilities(t *testing.T) {
	t.Parallel()
	text := cli(t, "models")
	require.Equal(t, 0, text.code, "stderr: %s", text.stderr)
	for _, p := range append(provider.Providers(), "scripted", "sim", "replay") {
		assert.Contains(t, text.stdout, p)
	}
	assert.Contains(t, text.stdout, "SIMULATED", "the sim model's label says what it is")

	res := cli(t, "models", "--json")
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	var doc modelsOutput
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &doc))
	require.Len(t, doc.Providers, len(provider.Providers()))
	for _, p := range doc.Providers {
		caps, err := provider.CapabilitiesOf(p.Provider)
		require.NoError(t, err)
		assert.Equal(t, caps, provider.Capabilities{StopWords: p.StopWords, ToolCalls: p.ToolCalls,
			JSONMode: p.JSONMode, Streaming: p.Streaming, Notes: p.Notes}, p.Provider)
		assert.Equal(t, "real: "+p.Provider, p.Label)
	}
	var offline []string
	for _, m := range doc.Offline {
		offline = append(offline, m.Provider)
		assert.NotEmpty(t, m.Label, m.Provider)
		assert.NotEmpty(t, m.Notes, m.Provider)
	}
	assert.Equal(t, []string{"scripted", "sim", "replay"}, offline)
}

func TestParadigmsListsEveryShippedConfig(t *testing.T) {
	t.Parallel()
	// Without --dir it lists configs in the working directory.
	assert.Equal(t, "configs", newParadigmsCmd().Flags().Lookup("dir").DefValue)
	dir := filepath.Join(repoRoot, "configs")
	res := cli(t, "paradigms", "--dir", dir)
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	for _, path := range shippedConfigs(t) {
		cfg, err := config.Load(path)
		require.NoError(t, err)
		assert.Contains(t, res.stdout, cfg.Name+" ("+path+")")
		assert.Contains(t, res.stdout, strings.Join(strings.Fields(cfg.Description), " "))
		for _, n := range cfg.Nodes {
			assert.Contains(t, res.stdout, n.ID+" ("+n.Type+")", path)
		}
	}
	assert.Contains(t, res.stdout, "    replan -> execute [continue]\n")
	assert.Contains(t, res.stdout, "    START -> plan\n")

	mermaid := cli(t, "paradigms", "--dir", dir, "--format", "mermaid")
	require.Equal(t, 0, mermaid.code, "stderr: %s", mermaid.stderr)
	assert.Equal(t, len(shippedConfigs(t)), strings.Count(mermaid.stdout, "flowchart TD\n"))
}

func TestParadigmsReportsInvalidFilesAndListsTheRest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good, err := os.ReadFile(configPath("direct.yaml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a_good.yaml"), good, 0o600))
	bad := filepath.Join(dir, "b_bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("name: bad\nnodes:\n  - id: x\n    type: no_such_type\nedges: []\n"), 0o600))

	res := cli(t, "paradigms", "--dir", dir)
	assert.Equal(t, 1, res.code)
	assert.Contains(t, res.stdout, "direct ("+filepath.Join(dir, "a_good.yaml")+")")
	assert.Regexp(t, regexp.QuoteMeta(bad)+`:\d+: `, res.stderr)

	empty := cli(t, "paradigms", "--dir", t.TempDir())
	assert.Equal(t, 2, empty.code)
	assert.Contains(t, empty.stderr, "no pipeline files")
}

func TestCompareWithTheSimModelReportsJSON(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	res := cli(t, "compare", "--suite", "demo", "--config", configPath("react.yaml"), "--config", configPath("cot.yaml"),
		"--llm", "sim", "--limit", "5", "--out", out, "--json")
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	var rep struct {
		Simulated bool `json:"simulated"`
		Tasks     int  `json:"tasks"`
		Configs   []struct {
			Config string `json:"config"`
			Runs   int    `json:"runs"`
		} `json:"configs"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &rep), "stdout: %s", res.stdout)
	assert.True(t, rep.Simulated)
	assert.Equal(t, 5, rep.Tasks)
	require.Len(t, rep.Configs, 2)
	assert.Equal(t, "react", rep.Configs[0].Config)
	assert.Equal(t, "cot", rep.Configs[1].Config)
	for _, c := range rep.Configs {
		assert.Equal(t, 5, c.Runs, c.Config)
	}
	for _, f := range []string{"report.json", "report.md", "report.html"} {
		assert.FileExists(t, filepath.Join(out, f))
	}
}

func TestCompareSlicesTheDemoSuiteLikeAFileAndReadsTheEnvironment(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		slice string
		tasks int
	}{
		{name: "negative start counts from the end", slice: "-3:", tasks: 3},
		{name: "range", slice: "10:14", tasks: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := execPlanner(t, invocation{env: []string{"PLANNER_LLM=sim"}, args: []string{"compare", "--suite", "demo",
				"--config", configPath("direct.yaml"), "--slice", tt.slice, "--out", t.TempDir(), "--json"}})
			require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
			var rep struct {
				Simulated bool `json:"simulated"`
				Tasks     int  `json:"tasks"`
			}
			require.NoError(t, json.Unmarshal([]byte(res.stdout), &rep), "stdout: %s", res.stdout)
			assert.True(t, rep.Simulated, "PLANNER_LLM=sim set --llm")
			assert.Equal(t, tt.tasks, rep.Tasks)
		})
	}
}

func TestPlannerVariablesFillTheFlagsNotGiven(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		env, args  []string
		wantCode   int
		wantStdout string
		wantStderr string // regexp
	}{
		{name: "a variable sets a flag", env: []string{"PLANNER_FORMAT=png"}, args: []string{"graph", configPath("cot.yaml")},
			wantCode: 2, wantStderr: `--format must be dot, mermaid or svg, got "png"`},
		{name: "a flag wins over its variable", env: []string{"PLANNER_FORMAT=png"},
			args: []string{"graph", configPath("cot.yaml"), "--format", "mermaid"}, wantCode: 0, wantStdout: "flowchart TD"},
		{name: "a bad value names the variable", env: []string{"PLANNER_MAX_STEPS=lots"},
			args: []string{"run", "--config", configPath("cot.yaml"), "--llm", "sim", "task"}, wantCode: 2, wantStderr: `PLANNER_MAX_STEPS: `},
		{name: "an empty variable counts as unset", env: []string{"PLANNER_LLM="},
			args: []string{"run", "--config", configPath("cot.yaml"), "task"}, wantCode: 2, wantStderr: `no model configured`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := execPlanner(t, invocation{env: tt.env, args: tt.args})
			assert.Equal(t, tt.wantCode, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
			assert.Contains(t, res.stdout, tt.wantStdout)
			assert.Regexp(t, tt.wantStderr, res.stderr)
		})
	}
}
