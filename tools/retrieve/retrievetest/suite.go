// Package retrievetest holds the tool-retrieval suite that the tests and
// benchmarks of tools/retrieve and of the executor's tool retrieval share:
// about 70 tools (the built-ins that build offline, tools described as MCP
// servers describe theirs, and synthetic ones: currency, flights, calendar,
// mail, stocks, translation...) and about 140 tasks, each with the steps a
// solver would take: the thought written before each step and the step's
// gold tool. Only tests import it.
package retrievetest

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/builtin"
	"github.com/planner-engine/planner/tools/retrieve"
)

//go:embed testdata/tools.json testdata/tasks.json
var data embed.FS

// ErrBadSuite means the suite's data is inconsistent: a task names a tool
// the suite does not have, or a tool is listed twice.
var ErrBadSuite = errors.New("retrievetest: bad suite")

// Tool is one tool of the suite's data file.
type Tool struct {
	// Kind is "synthetic", "mcp" (described as an MCP server would) or
	// "builtin" (a built-in's stand-in, made by Registry).
	Kind string `json:"kind"`
	// Name, Description and Schema are what the model is shown.
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Schema      map[string]any `json:"schema"`
}

// Step is one step of a task: the thought written before the action and
// the gold tool of the action.
type Step struct {
	Thought string `json:"thought"`
	Tool    string `json:"tool"`
}

// Task is one task of the suite.
type Task struct {
	Task  string `json:"task"`
	Steps []Step `json:"steps"`
}

// Suite is the retrieval suite.
type Suite struct {
	// Tools are the tools of the data file; the built-ins come from
	// Registry.
	Tools []Tool `json:"tools"`
	// Tasks are the tasks, each with one or more steps.
	Tasks []Task `json:"tasks"`
}

// Builtins are the built-in tools the suite builds (tools/builtin), each
// with the settings that let it build offline.
func Builtins() []config.Tool {
	return []config.Tool{
		{Name: "calculator"}, {Name: "code"}, {Name: "docstore"}, {Name: "get_time"},
		{Name: "http_fetch"}, {Name: "search"}, {Name: "weather"}, {Name: "web_search"}, {Name: "wikipedia"},
		{Name: "files", Settings: map[string]any{"root": ".", "write": true}},
		{Name: "sql", Settings: map[string]any{"path": "suite.db", "create": true, "write": true}},
	}
}

// Load reads the embedded suite.
func Load() (Suite, error) {
	var s Suite
	for _, name := range []string{"testdata/tools.json", "testdata/tasks.json"} {
		b, err := data.ReadFile(name)
		if err != nil {
			return Suite{}, fmt.Errorf("%w: %w", ErrBadSuite, err)
		}
		if err := json.Unmarshal(b, &s); err != nil {
			return Suite{}, fmt.Errorf("%w: %s: %w", ErrBadSuite, name, err)
		}
	}
	return s, nil
}

// Registry builds the suite's tools: the built-ins (the files tools on
// dir, a new SQLite database in dir) and the data file's tools. Every tool
// is a stand-in that shows the real tool's name, description and schema
// and answers every call with a short canned observation: nothing runs,
// and nothing reaches the network. Every gold tool of the tasks must be
// among them.
func (s Suite) Registry(ctx context.Context, dir string, opts ...tools.Option) (*tools.Registry, error) {
	var all []tools.Tool
	for _, spec := range Builtins() {
		made, err := builtin.Factory{}.Tools(ctx, spec, dir)
		for _, t := range made {
			if c, ok := t.(io.Closer); ok {
				defer c.Close()
			}
		}
		if err != nil {
			return nil, fmt.Errorf("build %s: %w", spec.Name, err)
		}
		for _, t := range made {
			all = append(all, fake{Tool{Kind: "builtin", Name: t.Name(), Description: t.Description(), Schema: tools.SchemaOf(t)}})
		}
	}
	for _, t := range s.Tools {
		all = append(all, fake{t})
	}
	reg, err := tools.NewRegistry(all, opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSuite, err)
	}
	for _, task := range s.Tasks {
		for _, st := range task.Steps {
			if !reg.Has(st.Tool) {
				return nil, fmt.Errorf("%w: task %q uses tool %q, which the suite does not have", ErrBadSuite, task.Task, st.Tool)
			}
		}
	}
	return reg, nil
}

// Query is the retrieval query of a model call, as the ReAct loop builds
// it (retrieve.Query).
func Query(task, thought string) string { return retrieve.Query(task, thought) }

// fake is a data-file tool: it answers with a canned observation.
type fake struct{ t Tool }

func (f fake) Name() string           { return f.t.Name }
func (f fake) Description() string    { return f.t.Description }
func (f fake) Schema() map[string]any { return f.t.Schema }

// Call returns a short observation naming the tool and its input.
func (f fake) Call(_ context.Context, input string) (string, error) {
	return fmt.Sprintf("%s returned a result for %s.", f.t.Name, strings.TrimSpace(input)), nil
}
