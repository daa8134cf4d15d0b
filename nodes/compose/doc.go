// Package compose holds the node kinds that run a pipeline inside a node:
// `subgraph` runs one pipeline (a YAML file or an inline graph) once, with
// an input mapping (its question and vars as templates over the run
// state) and an output mapping (its answer into the answer or a var, and
// chosen vars); `map` runs one pipeline once per item of a list in the
// run state, with bounded concurrency, and stores the answers in item
// order.
//
// The nested runs are the engine's own (nodekind.Subgraph): their model
// and tool calls pass the run's hooks, so budgets, usage, the journal,
// audit and spans see them, nested under the node; a resumed run replays
// a nested run's finished calls, item by item, whatever order the items
// finished in.
package compose

import "github.com/planner-engine/planner/nodekind"

// SubgraphTemplates declares the templates of `subgraph`: the question,
// over the run state (the vars' templates see the same).
func SubgraphTemplates() []nodekind.TemplateSpec {
	return []nodekind.TemplateSpec{{Key: "question"}}
}

// MapTemplates declares the templates of `map`: the question, over the
// run state with the item ({{.Extra.Item}}) and its number
// ({{.Extra.Index}}); the vars' templates see the same.
func MapTemplates() []nodekind.TemplateSpec { return []nodekind.TemplateSpec{mapSpec("question")} }
