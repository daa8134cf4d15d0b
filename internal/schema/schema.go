// Package schema generates the JSON Schema (draft 2020-12) of the pipeline
// YAML, for editors: `planner schema` prints it, docs/pipeline.schema.json
// holds a copy that every shipped config names on its first line
// (`# yaml-language-server: $schema=...`), and a test keeps that copy equal
// to Generate's output.
//
// The schema is reflected (github.com/invopop/jsonschema) from the Go types
// the loader decodes: config.Pipeline and its blocks, with their
// mapstructure keys, and each built-in node kind's settings struct, so a
// key added to a struct appears in the schema at the next regeneration.
// Every object rejects unknown keys, as the loader does; a node is checked
// against the settings of its `type` (an if/then per kind). Descriptions
// are the Go doc comments of the types' fields, defaults included; they
// are read from the source once, by the test's -update, into
// comments.json, which Generate embeds, so that the command needs no
// source at run time.
//
// The schema is a guide for editors, a little stricter than the loader in
// two ways: keys must be written in lower case as documented (the loader
// matches them in any case), and values must have their documented JSON
// type (the loader's settings also accept, for example, "3" for 3).
package schema

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/invopop/jsonschema"
	orderedmap "github.com/pb33f/ordered-map/v2"
	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/executor/steps"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/nodes"
	"github.com/planner-engine/planner/nodes/autopilot"
	"github.com/planner-engine/planner/nodes/compose"
	"github.com/planner-engine/planner/nodes/flow"
	"github.com/planner-engine/planner/nodes/general"
	"github.com/planner-engine/planner/nodes/join"
	plannernode "github.com/planner-engine/planner/planner"
	"github.com/planner-engine/planner/replanner"
)

// module is the module path, cut from package paths to name definitions.
const module = "github.com/planner-engine/planner"

// ErrNoSettings means a node kind of the registry has no settings struct
// known to this package: add it to kindSettings.
var ErrNoSettings = errors.New("node kind without a settings struct in the schema")

// ErrClash means a kind's setting has the name of a key every node has
// (id, type, llm).
var ErrClash = errors.New("node setting clashes with a node key")

//go:embed comments.json
var commentsJSON []byte

// Generate returns the JSON Schema of the pipeline YAML, indented, ending
// in a newline. Its output is the same on every call.
func Generate() ([]byte, error) {
	var comments map[string]string
	if err := json.Unmarshal(commentsJSON, &comments); err != nil {
		return nil, fmt.Errorf("schema: the embedded comments.json is not a JSON object of strings (regenerate it: go test ./internal/schema -update): %w", err)
	}
	return generate(planner.NodeKinds(), func(key string) string { return comments[key] })
}

// kindSettings maps each built-in node kind to the struct its constructor
// decodes the node's settings into (config.Decode). The test checks it
// against the keys each constructor accepts.
func kindSettings() map[string]any {
	return map[string]any{
		"direct":           nodes.GenerateSettings{},
		"cot":              nodes.GenerateSettings{},
		"plan_solve":       nodes.GenerateSettings{},
		"self_consistency": nodes.ConsistencySettings{},
		"least_to_most":    nodes.LeastToMostSettings{},
		"react":            executor.ReActConfig{},
		"planner":          plannernode.Settings{},
		"execute":          steps.Settings{},
		"replanner":        replanner.Settings{},
		"joiner":           replanner.Settings{},
		"finalizer":        nodes.ComposeSettings{},
		"solver":           nodes.ComposeSettings{},
		"evaluate":         nodes.EvaluateSettings{},
		"reflect":          nodes.ReflectSettings{},
		"tot":              nodes.ToTSettings{},
		"lats":             nodes.LATSSettings{},
		"router":           flow.RouterSettings{},
		"set":              flow.SetSettings{},
		"human":            flow.HumanSettings{},
		"join":             join.Settings{},
		"llm":              general.LLMSettings{},
		"tool":             general.ToolSettings{},
		"subgraph":         compose.SubgraphSettings{},
		"map":              compose.MapSettings{},
		"autopilot":        autopilot.Settings{},
	}
}

// nestedBlock returns the definition a setting refers to when it is a
// block of another struct's keys: the `react:` block of an execute or lats
// node holds a react node's settings, the `graph:` block of a subgraph or
// map node an inline pipeline.
func nestedBlock(kind, key string) (reflect.Type, bool) {
	switch {
	case key == "react" && (kind == "execute" || kind == "lats"):
		return reflect.TypeFor[executor.ReActConfig](), true
	case key == "graph" && (kind == "subgraph" || kind == "map"):
		return reflect.TypeFor[config.Pipeline](), true
	}
	return nil, false
}

// generate builds the schema of the node kinds of reg, with comment
// looking up the doc comment of "pkgpath.Type" or "pkgpath.Type.Field".
func generate(reg *nodekind.Registry, comment func(key string) string) ([]byte, error) {
	r := &jsonschema.Reflector{
		FieldNameTag:               "mapstructure",
		RequiredFromJSONSchemaTags: true,
		Anonymous:                  true,
		// mapstructure matches an untagged field by its name in any case;
		// tagged keys are lower case already.
		KeyNamer: strings.ToLower,
		Namer:    defName,
		Mapper:   mapType,
		LookupComment: func(t reflect.Type, field string) string {
			if t.Name() == "" {
				return ""
			}
			key := t.PkgPath() + "." + t.Name()
			if field != "" {
				key += "." + field
			}
			return describe(comment(key))
		},
	}
	root := r.Reflect(&config.Pipeline{})
	defs := root.Definitions
	if err := fixPipeline(defs); err != nil {
		return nil, err
	}
	if err := buildNodes(r, reg, defs); err != nil {
		return nil, err
	}
	// No $id: an editor resolves the schema's own #/$defs references
	// against the file it was given, never against a URL it would fetch.
	root.Title = "planner pipeline"
	root.Description = "A planner pipeline: a graph of nodes (see docs/pipelines-yaml.md). Generated by `planner schema`."
	root.Required = []string{"name", "nodes"}
	out, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return append(out, '\n'), nil
}

// defName names the definition of a type by its package path below the
// module and its name, so that the several Settings types do not clash:
// "config.LLM", "nodes.join.Settings".
func defName(t reflect.Type) string {
	if t.Name() == "" {
		return "" // an unnamed type is written in place
	}
	pkg := strings.TrimPrefix(strings.TrimPrefix(t.PkgPath(), module), "/")
	if pkg == "" {
		pkg = "planner"
	}
	return strings.ReplaceAll(pkg, "/", ".") + "." + t.Name()
}

// durationPattern matches what time.ParseDuration takes.
const durationPattern = `^[-+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|ms|s|m|h))+)$`

// mapType gives time.Duration its YAML form: a string such as "30s" (or
// a number of nanoseconds, which the loader also takes).
func mapType(t reflect.Type) *jsonschema.Schema {
	if t == reflect.TypeFor[time.Duration]() {
		return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{
			{Type: "string", Pattern: durationPattern},
			{Type: "integer"},
		}}
	}
	return nil
}

var singleBreak = regexp.MustCompile(`([^\n])\n([^\n])`)

// describe turns a doc comment into a description: lines of a paragraph
// joined, paragraphs kept.
func describe(doc string) string {
	return strings.TrimSpace(singleBreak.ReplaceAllString(doc, "$1 $2"))
}

// fixPipeline gives the blocks the reflector cannot see their shape: the
// remaining keys of a pipeline (x- extensions), a tools entry (a name, a
// name with settings, or an MCP server) and an edge's to.
func fixPipeline(defs jsonschema.Definitions) error {
	p, ok := defs[defName(reflect.TypeFor[config.Pipeline]())]
	if !ok {
		return errors.New("schema: no definition for config.Pipeline")
	}
	p.Properties.Delete("Extensions")
	p.PatternProperties = map[string]*jsonschema.Schema{
		"^x-": {Description: "A block kept for YAML anchors and aliases (x-sort: &sort {...}, then <<: *sort); planner ignores it otherwise."},
	}
	p.Required = []string{"nodes"}
	if n, ok := p.Properties.Get("nodes"); ok {
		n.MinItems = ptr(uint64(1))
	}

	tool := defs[defName(reflect.TypeFor[config.Tool]())]
	if tool == nil {
		return errors.New("schema: no definition for config.Tool")
	}
	*tool = jsonschema.Schema{
		Description: tool.Description,
		AnyOf: []*jsonschema.Schema{
			{Type: "string", Description: "A built-in tool by name, with its default settings."},
			{
				Type:        "object",
				Description: "A built-in tool with settings: name and the tool's own keys (corpus, timeout, approve, ...).",
				Properties:  props("name", &jsonschema.Schema{Type: "string", Description: "The built-in tool's name."}),
				Required:    []string{"name"},
				Not:         &jsonschema.Schema{Required: []string{"mcp"}},
			},
			{
				Type:        "object",
				Description: "An MCP server: mcp holds its command (the server's argv) or url, and its settings.",
				Properties: props(
					"mcp", &jsonschema.Schema{Type: "object", Description: "The server: command (argv) or url, and its settings."},
					"approve", &jsonschema.Schema{Description: "Which of the server's tools wait for a person's approval."},
				),
				Required:             []string{"mcp"},
				AdditionalProperties: jsonschema.FalseSchema,
			},
		},
	}

	edge := defs[defName(reflect.TypeFor[config.Edge]())]
	if edge == nil {
		return errors.New("schema: no definition for config.Edge")
	}
	edge.Properties = props(
		"from", &jsonschema.Schema{Type: "string", Description: "The node the edge leaves: a node id or START."},
		"to", &jsonschema.Schema{
			Description: "Where the edge goes: a node id (or END); a map from route label to node id; or a list of node ids, a fan-out whose branches run concurrently until their join node.",
			OneOf: []*jsonschema.Schema{
				{Type: "string"},
				{Type: "object", AdditionalProperties: &jsonschema.Schema{Type: "string"}},
				{Type: "array", Items: &jsonschema.Schema{Type: "string"}, MinItems: ptr(uint64(1))},
			},
		},
	)
	edge.Required = []string{"from", "to"}
	return nil
}

// buildNodes defines the node: id and type, the optional llm override, and
// the settings of its type, one definition per kind.
func buildNodes(r *jsonschema.Reflector, reg *nodekind.Registry, defs jsonschema.Definitions) error {
	table := kindSettings()
	node := defs[defName(reflect.TypeFor[config.Node]())]
	if node == nil {
		return errors.New("schema: no definition for config.Node")
	}
	var idDoc, typeDoc string
	if p, ok := node.Properties.Get("id"); ok {
		idDoc = p.Description
	}
	if p, ok := node.Properties.Get("type"); ok {
		typeDoc = p.Description
	}
	llmRef := &jsonschema.Schema{
		Ref:         "#/$defs/" + defName(reflect.TypeFor[config.LLM]()),
		Description: "This node's model: keys of the pipeline's llm block that replace the pipeline's for this node.",
	}
	var names []any
	var cases []*jsonschema.Schema
	for _, k := range reg.Kinds() {
		settings, ok := table[k.Name]
		if !ok {
			return fmt.Errorf("%w: kind %q (add its settings struct to kindSettings in internal/schema)", ErrNoSettings, k.Name)
		}
		t := reflect.TypeOf(settings)
		s := r.ReflectFromType(t)
		for name, d := range s.Definitions {
			defs[name] = d
		}
		sdef := defs[defName(t)]
		if sdef == nil {
			return fmt.Errorf("schema: no definition for the settings of kind %q", k.Name)
		}
		nodeDef := &jsonschema.Schema{
			Type:                 "object",
			Description:          kindDoc(k),
			Properties:           props("id", &jsonschema.Schema{Type: "string", Description: idDoc}, "type", &jsonschema.Schema{Const: k.Name, Description: typeDoc}, "llm", llmRef),
			Required:             []string{"id", "type"},
			AdditionalProperties: jsonschema.FalseSchema,
		}
		for pair := sdef.Properties.Oldest(); pair != nil; pair = pair.Next() {
			if _, clash := nodeDef.Properties.Get(pair.Key); clash {
				return fmt.Errorf("%w: kind %q has a setting %q", ErrClash, k.Name, pair.Key)
			}
			prop := pair.Value
			if nt, ok := nestedBlock(k.Name, pair.Key); ok {
				prop = &jsonschema.Schema{Ref: "#/$defs/" + defName(nt), Description: prop.Description}
			}
			nodeDef.Properties.Set(pair.Key, prop)
		}
		if t != reflect.TypeFor[executor.ReActConfig]() { // a react: block refers to it
			delete(defs, defName(t))
		}
		defs["node."+k.Name] = nodeDef
		names = append(names, k.Name)
		cases = append(cases, &jsonschema.Schema{
			If:   &jsonschema.Schema{Properties: props("type", &jsonschema.Schema{Const: k.Name}), Required: []string{"type"}},
			Then: &jsonschema.Schema{Ref: "#/$defs/node." + k.Name},
		})
	}
	*node = jsonschema.Schema{
		Type:        "object",
		Description: node.Description + " Its keys besides id, type and llm are the settings of its type.",
		Properties: props(
			"id", &jsonschema.Schema{Type: "string", Description: idDoc},
			"type", &jsonschema.Schema{Enum: names, Description: typeDoc},
		),
		Required: []string{"id", "type"},
		AllOf:    cases,
	}
	return nil
}

// kindDoc describes a node kind by its summary.
func kindDoc(k nodekind.Kind) string {
	return fmt.Sprintf("A `%s` node: %s.", k.Name, k.Summary)
}

// props returns ordered properties from name, schema pairs.
func props(pairs ...any) *orderedmap.OrderedMap[string, *jsonschema.Schema] {
	m := jsonschema.NewProperties()
	for i := 0; i+1 < len(pairs); i += 2 {
		m.Set(pairs[i].(string), pairs[i+1].(*jsonschema.Schema))
	}
	return m
}

func ptr[T any](v T) *T { return &v }
