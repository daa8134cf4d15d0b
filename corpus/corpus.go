// Package corpus embeds the demo corpus and the demo task suite.
//
// The demo corpus is a small encyclopaedia of the Solar System: the Sun, the
// planets and Pluto, major moons, the astronomers who discovered them, the
// observatories they worked at and the spacecraft that explored them. Each
// Markdown file is one page whose first line is a "# Title" heading. Numbers
// are written without thousands separators ("142984 km") so that an agent can
// pass them to the calculator verbatim.
//
// The demo suite is a JSON Lines file of tasks, one per line, each with its
// reference answer and a gold program of "search" and "calculator" steps
// over that corpus; package eval/suite decodes it (suite.Demo).
//
// The mixed suite is a JSON Lines file of tasks of several types, for
// comparing paradigms on the sim model's capability profiles: knowledge
// questions answered from memory (no steps), lookups and multi-hop
// questions over the demo corpus, arithmetic word problems solved with the
// calculator, and Game of 24 puzzles; package eval/suite decodes it
// (suite.Mixed). The package imports no other package of the module.
package corpus

import (
	"embed"
	"fmt"
	"io/fs"
)

// demoFiles holds the demo pages under demo/.
//
//go:embed demo/*.md
var demoFiles embed.FS

// demoSuite is the demo task suite, one JSON-encoded task per line.
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

// mixedSuite is the mixed task suite, one JSON-encoded task per line.
//
//go:embed mixed_suite.jsonl
var mixedSuite string

// MixedSuite returns a copy of the mixed task suite in JSON Lines form.
func MixedSuite() []byte { return []byte(mixedSuite) }
