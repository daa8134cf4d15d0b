package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/internal/textutil"
	"github.com/spf13/cobra"
)

func newParadigmsCmd() *cobra.Command {
	var dir, format string
	c := &cobra.Command{
		Use:   "paradigms [--dir DIR] [--format text|mermaid]",
		Short: "List the paradigm configs in a folder with their nodes and graphs",
		Long: `List every pipeline file (*.yaml, *.yml) in --dir: its name, description, node types and the
graph's edges, one "from -> to [route]" line each (or a Mermaid flowchart per config with
--format mermaid). Files are checked as 'planner validate' does; an invalid one is reported as
file:line: message on stderr and makes the command exit 1 after listing the others.`,
		Example: `  planner paradigms
  planner paradigms --dir configs --format mermaid`,
		Args: exactArgs(0, "no arguments (use --dir)"),
		RunE: func(c *cobra.Command, _ []string) error {
			if format != "text" && format != "mermaid" {
				return &usageError{cmd: "paradigms", err: fmt.Errorf("--format must be text or mermaid, got %q", format)}
			}
			return listParadigms(c, dir, format)
		},
	}
	c.Flags().StringVar(&dir, "dir", "configs", "folder holding the pipeline files")
	c.Flags().StringVarP(&format, "format", "f", "text", "text or mermaid")
	return c
}

func listParadigms(c *cobra.Command, dir, format string) error {
	var files []string
	for _, pat := range []string{"*.yaml", "*.yml"} {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return &usageError{cmd: "paradigms", err: fmt.Errorf("--dir %q: %w", dir, err)}
		}
		files = append(files, m...)
	}
	slices.Sort(files)
	if len(files) == 0 {
		return &usageError{cmd: "paradigms", err: fmt.Errorf("no pipeline files (*.yaml, *.yml) in %q; pass --dir", dir)}
	}
	out := c.OutOrStdout()
	listed := 0
	return validateEach(c, files, func(path string, p *planner.Pipeline) {
		if listed > 0 {
			fmt.Fprintln(out)
		}
		listed++
		if format == "mermaid" {
			fmt.Fprintf(out, "%%%% %s (%s): %s\n%s", p.Name(), path, textutil.OneLine(p.Config().Description), p.Graph().Mermaid(p.Kinds(), p.Nested()...))
			return
		}
		writeParadigm(out, path, p)
	})
}

// writeParadigm prints one pipeline as name, description, nodes and edges.
func writeParadigm(w io.Writer, path string, p *planner.Pipeline) {
	fmt.Fprintf(w, "%s (%s)\n", p.Name(), path)
	if d := textutil.OneLine(p.Config().Description); d != "" {
		fmt.Fprintf(w, "  %s\n", d)
	}
	kinds := p.Kinds()
	nodes := p.Graph().Nodes()
	parts := make([]string, len(nodes))
	for i, id := range nodes {
		parts[i] = fmt.Sprintf("%s (%s)", id, kinds[id])
	}
	fmt.Fprintf(w, "  nodes: %s\n", strings.Join(parts, ", "))
	fmt.Fprintln(w, "  edges:")
	for _, e := range p.Graph().Edges() {
		if e.Route == "" {
			fmt.Fprintf(w, "    %s -> %s\n", e.From, e.To)
		} else {
			fmt.Fprintf(w, "    %s -> %s [%s]\n", e.From, e.To, e.Route)
		}
	}
}
