package nodekind

import (
	"slices"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"
)

// ref is a field chain a template reads from its data (PromptData): for
// {{.Extra.Tools}} the chain is [Extra Tools]; line is its line in the
// template text.
type ref struct {
	chain []string
	line  int
}

// references returns the field chains that t reads from its root data, in
// every branch: fields of the root dot, of $, of a `with` whose dot is a
// known chain ({{with .Extra}}{{.Tools}}{{end}}), and constant `index`
// keys ({{index .Extra "Tools"}}). Inside `range` and in {{define}}d
// templates the dot is unknown and only $ chains of the main template are
// followed; rendering with sample data covers the rest.
func references(t *template.Template) []ref {
	var out []ref
	for _, tt := range t.Templates() {
		if tt.Tree == nil || tt.Root == nil {
			continue
		}
		w := walker{tree: tt.Tree, root: tt.Name() == t.Name()}
		var dot []string
		if w.root {
			dot = []string{}
		}
		w.list(tt.Root, dot)
		out = append(out, w.refs...)
	}
	return out
}

// uses reports whether t reads one of the .Extra fields, or .Extra whole.
func uses(t *template.Template, fields []string) bool {
	for _, r := range references(t) {
		if len(r.chain) == 1 && r.chain[0] == "Extra" {
			return true
		}
		if len(r.chain) >= 2 && r.chain[0] == "Extra" && slices.Contains(fields, r.chain[1]) {
			return true
		}
	}
	return false
}

type walker struct {
	tree *parse.Tree
	// root is true for the main template, where $ is the root data.
	root bool
	refs []ref
}

// list walks a list of nodes with dot equal to the chain dot (nil when
// unknown).
func (w *walker) list(l *parse.ListNode, dot []string) {
	if l == nil {
		return
	}
	for _, n := range l.Nodes {
		w.node(n, dot)
	}
}

func (w *walker) node(n parse.Node, dot []string) {
	switch n := n.(type) {
	case *parse.ActionNode:
		w.pipe(n.Pipe, dot)
	case *parse.IfNode:
		w.pipe(n.Pipe, dot)
		w.list(n.List, dot)
		w.list(n.ElseList, dot)
	case *parse.WithNode:
		w.pipe(n.Pipe, dot)
		w.list(n.List, w.chainOfPipe(n.Pipe, dot))
		w.list(n.ElseList, dot)
	case *parse.RangeNode:
		w.pipe(n.Pipe, dot)
		w.list(n.List, nil)
		w.list(n.ElseList, dot)
	case *parse.TemplateNode:
		w.pipe(n.Pipe, dot)
	case *parse.ListNode:
		w.list(n, dot)
	}
}

func (w *walker) pipe(p *parse.PipeNode, dot []string) {
	if p == nil {
		return
	}
	for _, c := range p.Cmds {
		w.command(c, dot)
	}
}

func (w *walker) command(c *parse.CommandNode, dot []string) {
	for _, a := range c.Args {
		w.arg(a, dot)
	}
	// {{index .Extra "Tools"}}: constant keys extend the chain.
	if len(c.Args) >= 3 {
		if id, ok := c.Args[0].(*parse.IdentifierNode); ok && id.Ident == "index" {
			if base, ok := w.chainOf(c.Args[1], dot); ok {
				chain := slices.Clone(base)
				for _, k := range c.Args[2:] {
					s, ok := k.(*parse.StringNode)
					if !ok {
						return
					}
					chain = append(chain, s.Text)
				}
				w.add(chain, c)
			}
		}
	}
}

func (w *walker) arg(a parse.Node, dot []string) {
	switch a := a.(type) {
	case *parse.FieldNode, *parse.VariableNode:
		if chain, ok := w.chainOf(a, dot); ok && len(chain) > 0 {
			w.add(chain, a)
		}
	case *parse.ChainNode:
		if chain, ok := w.chainOf(a, dot); ok {
			w.add(chain, a)
			return
		}
		w.arg(a.Node, dot)
	case *parse.PipeNode:
		w.pipe(a, dot)
	}
}

// chainOf returns the root chain a node evaluates to, when it is a field
// chain from a known dot or from $.
func (w *walker) chainOf(n parse.Node, dot []string) ([]string, bool) {
	switch n := n.(type) {
	case *parse.DotNode:
		return dot, dot != nil
	case *parse.FieldNode:
		if dot == nil {
			return nil, false
		}
		return append(slices.Clone(dot), n.Ident...), true
	case *parse.VariableNode:
		if w.root && len(n.Ident) > 0 && n.Ident[0] == "$" {
			return slices.Clone(n.Ident[1:]), true
		}
	case *parse.ChainNode:
		base, ok := w.chainOf(n.Node, dot)
		if !ok {
			if p, isPipe := n.Node.(*parse.PipeNode); isPipe {
				base = w.chainOfPipe(p, dot)
				ok = base != nil
			}
		}
		if ok {
			return append(slices.Clone(base), n.Field...), true
		}
	}
	return nil, false
}

// chainOfPipe is the chain a pipeline of one plain argument evaluates to,
// or nil.
func (w *walker) chainOfPipe(p *parse.PipeNode, dot []string) []string {
	if p == nil || len(p.Cmds) != 1 || len(p.Cmds[0].Args) != 1 {
		return nil
	}
	chain, ok := w.chainOf(p.Cmds[0].Args[0], dot)
	if !ok {
		return nil
	}
	return chain
}

func (w *walker) add(chain []string, n parse.Node) {
	w.refs = append(w.refs, ref{chain: chain, line: w.line(n)})
}

// line is n's 1-based line in the template text.
func (w *walker) line(n parse.Node) int {
	loc, _ := w.tree.ErrorContext(n) // "name:line:col"
	parts := strings.Split(loc, ":")
	if len(parts) < 3 {
		return 0
	}
	line, err := strconv.Atoi(parts[len(parts)-2])
	if err != nil {
		return 0
	}
	return line
}
