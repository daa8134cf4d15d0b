package general

import "github.com/planner-engine/planner/nodekind"

// The declarations of this package's prompt templates
// (nodekind.Kind.Templates): each constructor compiles its templates
// against the same specs, so validation renders them with samples of the
// values the node passes.

// LLMTemplates declares the prompt of `llm`: the run state, and the
// node's schema under .Extra.Schema.
func LLMTemplates() []nodekind.TemplateSpec { return []nodekind.TemplateSpec{llmSpec()} }

// schemaRequirement is appended to a custom prompt of an llm node with a
// schema that does not show the schema to the model.
const schemaRequirement = `Reply with a JSON value only, matching this JSON Schema:
{{.Extra.Schema}}`

func llmSpec() nodekind.TemplateSpec {
	return nodekind.TemplateSpec{Key: "prompt",
		Extra: []nodekind.Field{{Name: "Schema", Doc: "the node's JSON Schema as indented JSON, or empty without `schema`",
			Sample: "{\n  \"type\": \"object\"\n}"}},
		Required: []nodekind.Requirement{{Fields: []string{"Schema"}, Append: schemaRequirement, When: "when `schema` is set"}},
	}
}

// ToolTemplates declares the input template of `tool`: the run state
// only.
func ToolTemplates() []nodekind.TemplateSpec { return []nodekind.TemplateSpec{toolSpec()} }

func toolSpec() nodekind.TemplateSpec { return nodekind.TemplateSpec{Key: "input"} }
