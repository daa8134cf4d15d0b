package pipeline

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/trace"
)

// ErrUnknownNote means a prompt template reads {{.Notes.KEY}} but no node
// of the pipeline writes note KEY.
var ErrUnknownNote = errors.New("template reads a note no node writes")

// Notice is something Build changed in a pipeline, located in its file:
// a custom prompt template that left out a field its node needs (the tool
// list, the plan schema) got it appended.
type Notice struct {
	// File and Line locate the setting.
	File string
	Line int
	// Node is the node's id; Key the setting's path ("nodes[1].prompt").
	Node, Key string
	// Msg says what was done.
	Msg string
}

// String is "file:line: message".
func (n Notice) String() string {
	if n.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", n.File, n.Line, n.Msg)
	}
	return n.File + ": " + n.Msg
}

// Notices returns what Build completed in the pipeline's custom prompt
// templates, in node order. Run reports each one as an info event at the
// start of every run.
func (p *Pipeline) Notices() []Notice { return slices.Clone(p.notices) }

// emitNotices reports the notices to a run's tracer.
func (p *Pipeline) emitNotices(tr *trace.Tracer) {
	for _, n := range p.notices {
		tr.Emit(trace.Event{Node: n.Node, Kind: trace.KindInfo, Text: n.Msg,
			Data: map[string]any{"setting": n.Key, "file": n.File, "line": n.Line}})
	}
}

// nodePrompts is what building one node told about its templates.
type nodePrompts struct {
	templates []*nodekind.Template
	// notes are the note keys the node writes.
	notes []string
}

// settingLine is the line of node i's setting key, a dotted path within
// the node ("react.prompt"), or of its nearest enclosing key.
func settingLine(p *config.Pipeline, i int, key string) int {
	if key == "" {
		return p.NodeLine(i, "")
	}
	return p.Line(fmt.Sprintf("nodes[%d].%s", i, key))
}

// checkPrompts checks, once every node is built, that each template's
// {{.Notes.KEY}} is a note some node writes, and describes the
// completions of custom templates as notices. (Everything else about a
// template was checked when its node compiled it.)
func checkPrompts(p *config.Pipeline, nodes []nodePrompts) ([]Notice, error) {
	var written []string
	for _, n := range nodes {
		written = append(written, n.notes...)
	}
	slices.Sort(written)
	written = slices.Compact(written)
	var notices []Notice
	for i, n := range nodes {
		spec := p.Nodes[i]
		for _, t := range n.templates {
			key := fmt.Sprintf("nodes[%d].%s", i, t.Setting())
			for _, note := range t.Notes() {
				if slices.Contains(written, note) {
					continue
				}
				have := "none"
				if len(written) > 0 {
					have = strings.Join(written, ", ")
				}
				return nil, p.Errorf(key, ErrUnknownNote, "node %q (%s): setting %q: {{.Notes.%s}}: no node of this pipeline writes note %q (notes written: %s; a direct, cot or plan_solve node writes one with output: note:KEY)",
					spec.ID, spec.Type, t.Setting(), note, note, have)
			}
			for _, r := range t.Completed() {
				fields := make([]string, len(r.Fields))
				for j, f := range r.Fields {
					fields[j] = "{{.Extra." + f + "}}"
				}
				notices = append(notices, Notice{File: p.File, Line: settingLine(p, i, t.Setting()), Node: spec.ID, Key: key,
					Msg: fmt.Sprintf("node %q (%s): %s does not use %s, so it was appended to the end of the prompt after a line %q; use the field in the template to place it yourself",
						spec.ID, spec.Type, t.Setting(), strings.Join(fields, " or "), nodekind.CompletionMarker+" ...")})
			}
		}
	}
	return notices, nil
}
