package schema

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	ijs "github.com/invopop/jsonschema"
	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/tools"
	jsv "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

var update = flag.Bool("update", false, "rewrite comments.json and docs/pipeline.schema.json from the source")

// root is the repository root, relative to this package.
const root = "../.."

// schemaFile is the committed schema, relative to the repository root.
const schemaFile = "docs/pipeline.schema.json"

// sourceComments reads the doc comments Generate needs from the Go source:
// those of every type and field the schema reflects.
func sourceComments(t *testing.T) map[string]string {
	t.Helper()
	used := map[string]bool{}
	_, err := generate(planner.NodeKinds(), func(key string) string { used[key] = true; return "" })
	require.NoError(t, err)
	dirs := map[string]bool{}
	for key := range used {
		slash := strings.LastIndex(key, "/")
		dot := strings.Index(key[slash+1:], ".")
		require.Positive(t, dot, "comment key %q", key)
		pkg := key[:slash+1+dot]
		if rel, ok := strings.CutPrefix(pkg, module+"/"); ok {
			dirs[rel] = true
		}
	}
	var r ijs.Reflector
	t.Chdir(root) // AddGoComments names packages by the walked paths
	for _, dir := range sortedKeys(dirs) {
		require.NoError(t, r.AddGoComments(module, dir), dir)
	}
	out := map[string]string{}
	for key := range used {
		if c := r.CommentMap[key]; c != "" {
			out[key] = c
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// The embedded comments and the committed schema are what the source
// gives; -update rewrites both.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	comments := sourceComments(t) // changes into the repository root
	want, err := json.MarshalIndent(comments, "", "  ")
	require.NoError(t, err)
	want = append(want, '\n')
	fresh, err := generate(planner.NodeKinds(), func(key string) string { return comments[key] })
	require.NoError(t, err)
	commentsPath := filepath.Join("internal", "schema", "comments.json")
	if *update {
		require.NoError(t, os.WriteFile(commentsPath, want, 0o644))
		require.NoError(t, os.WriteFile(schemaFile, fresh, 0o644))
		return
	}
	assert.Equal(t, string(want), string(commentsJSON),
		"internal/schema/comments.json is stale: run go test ./internal/schema -update")
	got, err := Generate()
	require.NoError(t, err)
	committed, err := os.ReadFile(schemaFile)
	require.NoError(t, err)
	assert.Equal(t, string(got), string(committed), "%s is not Generate's output: run go test ./internal/schema -update", schemaFile)
	assert.Equal(t, string(fresh), string(got))
	assert.Greater(t, len(comments), 100, "the settings' doc comments are read")
}

func TestGenerateIsDeterministicAndDescribed(t *testing.T) {
	a, err := Generate()
	require.NoError(t, err)
	b, err := Generate()
	require.NoError(t, err)
	assert.Equal(t, a, b)

	var doc map[string]any
	require.NoError(t, json.Unmarshal(a, &doc))
	assert.Equal(t, "https://json-schema.org/draft/2020-12/schema", doc["$schema"])
	defs := doc["$defs"].(map[string]any)
	react := defs["node.react"].(map[string]any)
	assert.Equal(t, false, react["additionalProperties"])
	maxIter := react["properties"].(map[string]any)["max_iterations"].(map[string]any)
	assert.Equal(t, "integer", maxIter["type"])
	assert.Contains(t, maxIter["description"], "Default 8", "defaults come with the doc comments")
	timeout := defs["config.Limits"].(map[string]any)["properties"].(map[string]any)["timeout"].(map[string]any)
	assert.Contains(t, timeout["description"], "10m")
	for _, name := range planner.NodeKinds().Names() {
		assert.Contains(t, defs, "node."+name)
	}
}

// compile compiles the generated schema with an independent validator
// (which also checks it against the draft 2020-12 meta-schema).
func compile(t *testing.T) *jsv.Schema {
	t.Helper()
	raw, err := Generate()
	require.NoError(t, err)
	doc, err := jsv.UnmarshalJSON(bytes.NewReader(raw))
	require.NoError(t, err)
	c := jsv.NewCompiler()
	const url = "file:///pipeline.schema.json"
	require.NoError(t, c.AddResource(url, doc))
	s, err := c.Compile(url)
	require.NoError(t, err)
	return s
}

// validate checks YAML text against s, as an editor would: the YAML as
// written, turned into JSON.
func validate(t *testing.T, s *jsv.Schema, text []byte) error {
	t.Helper()
	var v any
	require.NoError(t, yaml.Unmarshal(text, &v))
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	inst, err := jsv.UnmarshalJSON(bytes.NewReader(raw))
	require.NoError(t, err)
	return s.Validate(inst)
}

var schemaLine = regexp.MustCompile(`^# yaml-language-server: \$schema=(\S+)$`)

func shippedConfigs(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pattern := range []string{"configs/*.yaml", "examples/pipelines/*.yaml"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		require.NoError(t, err)
		files = append(files, m...)
	}
	require.GreaterOrEqual(t, len(files), 20)
	return files
}

// Every shipped config names the committed schema on its first line and
// is valid against it.
func TestShippedConfigsValidate(t *testing.T) {
	s := compile(t)
	want, err := filepath.Abs(filepath.Join(root, schemaFile))
	require.NoError(t, err)
	for _, file := range shippedConfigs(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			text, err := os.ReadFile(file)
			require.NoError(t, err)
			first, _, _ := strings.Cut(string(text), "\n")
			m := schemaLine.FindStringSubmatch(first)
			require.NotNil(t, m, "first line %q: want # yaml-language-server: $schema=<path to %s>", first, schemaFile)
			got, err := filepath.Abs(filepath.Join(filepath.Dir(file), m[1]))
			require.NoError(t, err)
			assert.Equal(t, want, got, "the $schema comment names %s", schemaFile)
			assert.NoError(t, validate(t, s, text))
		})
	}
}

// fakeTools gives every tools entry one tool of its name.
type fakeTools struct{}

func (fakeTools) Tools(_ context.Context, spec config.Tool, _ string) ([]tools.Tool, error) {
	return []tools.Tool{fakeTool(spec.Name)}, nil
}

type fakeTool string

func (f fakeTool) Name() string                                 { return string(f) }
func (f fakeTool) Description() string                          { return "a test tool" }
func (f fakeTool) Call(context.Context, string) (string, error) { return "ok", nil }

// load is the loader: decode the YAML and build the pipeline, without a
// model.
func load(t *testing.T, text string) error {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.yaml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	e, err := planner.New(planner.WithTools(fakeTools{}))
	require.NoError(t, err)
	p, err := e.Validate(context.Background(), path)
	if err == nil {
		require.NoError(t, p.Close())
	}
	return err
}

const validPipeline = `name: ok
llm: {provider: scripted, script: s.yaml, temperature: 0.2, retry: {max_attempts: 2, base_delay: 100ms}}
limits: {max_steps: 5, timeout: 30s}
nodes:
  - {id: a, type: cot, max_tokens: 100}
edges:
  - {from: START, to: a}
  - {from: a, to: END}
`

// A key the loader rejects as unknown, at the top level, in the llm block
// or among a node's settings, the schema rejects too.
func TestUnknownKeysRejectedLikeTheLoader(t *testing.T) {
	s := compile(t)
	require.NoError(t, load(t, validPipeline))
	require.NoError(t, validate(t, s, []byte(validPipeline)))
	for name, c := range map[string]struct{ old, new, key, schemaSays string }{
		"top level":              {"limits:", "limitz: {max_steps: 5}\nlimits:", "limitz", ""},
		"llm block":              {"temperature: 0.2", "temprature: 0.2", "temprature", ""},
		"llm retry":              {"max_attempts: 2", "max_attempt: 2", "max_attempt", ""},
		"node settings":          {"max_tokens: 100", "max_token: 100", "max_token", ""},
		"node llm":               {"max_tokens: 100", "llm: {modle: x}", "modle", ""},
		"edge":                   {"{from: a, to: END}", "{from: a, to: END, label: x}", "label", ""},
		"another kind's setting": {"max_tokens: 100", "samples: 3", "samples", ""},
		"unknown type":           {"type: cot", "type: cott", "cott", "at '/nodes/0/type': value must be one of"},
	} {
		t.Run(name, func(t *testing.T) {
			text := strings.Replace(validPipeline, c.old, c.new, 1)
			require.NotEqual(t, validPipeline, text)
			err := load(t, text)
			require.ErrorIs(t, err, config.ErrInvalid)
			assert.Contains(t, err.Error(), c.key)
			err = validate(t, s, []byte(text))
			require.Error(t, err, "the schema accepts what the loader rejects")
			if c.schemaSays == "" {
				c.schemaSays = "'" + c.key + "'"
			}
			assert.Contains(t, err.Error(), c.schemaSays, "the schema's error names the key")
		})
	}
}

// A pipeline with a node of every built-in kind, which the loader builds,
// is valid against the schema; the same pipeline with one unknown setting
// in any one node is not.
func TestEveryKindAccepted(t *testing.T) {
	s := compile(t)
	require.NoError(t, load(t, everyKind))
	require.NoError(t, validate(t, s, []byte(everyKind)))
	var p struct {
		Nodes []struct{ Type string } `yaml:"nodes"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(everyKind), &p))
	seen := map[string]bool{}
	for _, n := range p.Nodes {
		seen[n.Type] = true
	}
	assert.Equal(t, planner.NodeKinds().Names(), sortedKeys(seen), "the pipeline has a node of every kind")
}

// kindSettings names, for each kind, the struct whose keys its
// constructor accepts: the keys of the schema's node.<kind> are the ones
// the constructor lists when given an unknown setting.
func TestKindSettingsMatchConstructors(t *testing.T) {
	raw, err := Generate()
	require.NoError(t, err)
	var doc struct {
		Defs map[string]struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"$defs"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	known := regexp.MustCompile(`known(?: settings)?: ([^)]*)\)`)
	for _, k := range planner.NodeKinds().Kinds() {
		t.Run(k.Name, func(t *testing.T) {
			_, err := k.New(nodekind.Env{}, nodekind.Spec{ID: "n", Type: k.Name, Settings: map[string]any{"zz_not_a_setting": 1}})
			require.ErrorIs(t, err, config.ErrSettings)
			m := known.FindStringSubmatch(err.Error())
			require.NotNil(t, m, "error %q lists the known settings", err)
			var schemaKeys []string
			for key := range doc.Defs["node."+k.Name].Properties {
				if key != "id" && key != "type" && key != "llm" {
					schemaKeys = append(schemaKeys, key)
				}
			}
			sort.Strings(schemaKeys)
			assert.Equal(t, strings.Split(m[1], ", "), schemaKeys)
		})
	}
}

// everyKind has a node of every built-in kind: most on branches of one
// fan-out, the plan-and-execute nodes after the join.
const everyKind = `# yaml-language-server: $schema=../../docs/pipeline.schema.json
name: every
description: one node of every kind
llm: {provider: scripted, profile: perfect, seed: 3, timeout: 1m30s, rate_limit: {max_concurrent: 2}}
tools: [search, {name: calculator, approve: true}]
limits: {max_steps: 80, timeout: -1s, max_parallel: 4, max_cost_usd: 0.5}
x-gen: &gen {max_tokens: 200, temperature: 0.3}
nodes:
  - {id: d, type: direct, <<: *gen}
  - {id: c, type: cot, llm: {temperature: 0.1}}
  - {id: ps, type: plan_solve}
  - {id: sc, type: self_consistency, samples: 3}
  - {id: ltm, type: least_to_most}
  - {id: re, type: react, max_iterations: 4, tools: [search], observation_limit: 500}
  - {id: la, type: lats, iterations: 2, react: {max_iterations: 3}}
  - {id: totn, type: tot, search: bfs, beam: 2}
  - {id: ask, type: llm, prompt: "Answer: {{.Question}}"}
  - {id: look, type: tool, tool: search, input: "{{.Question}}", output: var:found}
  - {id: sub, type: subgraph, graph: {nodes: [{id: x, type: cot}], edges: [{from: START, to: x}, {from: x, to: END}]},}
  - {id: each, type: map, over: var:found, into: var:each, graph: {nodes: [{id: y, type: direct}], edges: [{from: START, to: y}, {from: y, to: END}]}}
  - {id: auto, type: autopilot, record: false, check: {complete: true, agreement: 3}, candidates: [{name: a, graph: {nodes: [{id: z, type: direct}], edges: [{from: START, to: z}, {from: z, to: END}]}}, {name: b, check: {judge: true}, graph: {nodes: [{id: w, type: cot}], edges: [{from: START, to: w}, {from: w, to: END}]}}]}
  - {id: pick, type: join, wait: all, merge: vote}
  - {id: mark, type: set, assign: [{var: picked, expr: 'answer'}]}
  - {id: route, type: router, routes: [{route: plan, when: 'vars.picked != ""'}], default: check}
  - {id: check, type: human, ask: approve}
  - {id: judge, type: evaluate}
  - {id: lesson, type: reflect}
  - {id: plan, type: planner}
  - {id: run, type: execute, react: {max_iterations: 3}}
  - {id: replan, type: replanner}
  - {id: fin, type: finalizer}
  - {id: plan2, type: planner}
  - {id: run2, type: execute}
  - {id: joinr, type: joiner}
  - {id: solve, type: solver}
edges:
  - {from: START, to: [d, c, ps, sc, ltm, re, la, totn, ask, sub, auto]}
  - {from: auto, to: pick}
  - {from: d, to: pick}
  - {from: c, to: pick}
  - {from: ps, to: pick}
  - {from: sc, to: pick}
  - {from: ltm, to: pick}
  - {from: re, to: pick}
  - {from: la, to: pick}
  - {from: totn, to: pick}
  - {from: ask, to: pick}
  - {from: sub, to: pick}
  - {from: pick, to: look}
  - {from: look, to: each}
  - {from: each, to: mark}
  - {from: mark, to: route}
  - {from: route, to: {plan: plan, check: check}}
  - {from: check, to: {"": judge, rejected: END}}
  - {from: judge, to: {pass: plan, retry: lesson}}
  - {from: lesson, to: plan}
  - {from: plan, to: run}
  - {from: run, to: replan}
  - {from: replan, to: {continue: run, finish: fin}}
  - {from: fin, to: plan2}
  - {from: plan2, to: run2}
  - {from: run2, to: joinr}
  - {from: joinr, to: {continue: plan2, finish: solve}}
  - {from: solve, to: END}
`

// A node kind registered without a settings struct known to the schema
// fails the generation, naming it, rather than going unchecked.
func TestKindWithoutSettingsFails(t *testing.T) {
	reg := planner.NodeKinds().MustRegister(nodekind.Kind{Name: "custom", New: func(nodekind.Env, nodekind.Spec) (nodekind.Built, error) {
		return nodekind.Built{}, nil
	}})
	_, err := generate(reg, func(string) string { return "" })
	require.ErrorIs(t, err, ErrNoSettings)
	assert.Contains(t, err.Error(), `"custom"`)
}
