// Package corpus embeds the demo corpus and the demo task suite.
//
// The demo corpus is a small encyclopaedia of the Solar System: the Sun, the
// planets and Pluto, major moons, the astronomers who discovered them, the
// observatories they worked at and the spacecraft that explored them. Each
// Markdown file is one page whose first line is a "# Title" heading. Numbers
// are written without thousands separators ("142984 km") so that an agent can
// pass them to the calculator verbatim.
//
// The demo suite is a JSON Lines file of agent.Task values, one per line, each
// with a gold program of "search" and "calculator" steps over that corpus.
package corpus

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"

	"github.com/planner-engine/planner/agent"
)

// demoFiles holds the demo pages under demo/.
//
//go:embed demo/*.md
var demoFiles embed.FS

// demoSuite is the demo task suite, one JSON-encoded agent.Task per line.
//
//go:embed demo_suite.jsonl
var demoSuite string

// Demo returns the demo corpus: one Markdown file per page at the root of the
// returned file system (for example "titan.md").
func Demo() fs.FS {
	sub, err := fs.Sub(demoFiles, "demo")
	if err != nil {
		// fs.Sub fails only for an invalid directory name; "demo" is valid.
		panic(fmt.Sprintf("corpus: embedded demo directory: %v", err))
	}
	return sub
}

// DemoSuite returns a copy of the demo task suite in JSON Lines form.
func DemoSuite() []byte { return []byte(demoSuite) }

// DemoTasks decodes the demo task suite. Unknown fields are rejected.
func DemoTasks() ([]agent.Task, error) {
	var tasks []agent.Task
	for i, line := range bytes.Split([]byte(demoSuite), []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		var t agent.Task
		if err := dec.Decode(&t); err != nil {
			return nil, fmt.Errorf("demo suite line %d: %w", i+1, err)
		}
		tasks = append(tasks, t)
	}
	return tasks, nil
}
