package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/internal/app"
	"github.com/planner-engine/planner/internal/textutil"
	"github.com/spf13/cobra"
)

func newValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate FILE...",
		Short: "Check pipeline files without calling any model",
		Long: `Load and check each pipeline: YAML syntax, unknown keys, node types and settings, tools,
edges, routes, reachability from START and to END. Prints "file: ok" (with any cycles, which
are legal and bounded by limits.max_steps) or one "file:line: message" line per problem found;
exits 1 if any file is invalid.`,
		Example: `  planner validate configs/*.yaml`,
		Args:    minArgs(1, "at least one pipeline file"),
		RunE: func(c *cobra.Command, args []string) error {
			return validateEach(c, args, func(path string, p *planner.Pipeline) {
				line := fmt.Sprintf("%s: ok (%s)", path, textutil.Count(len(p.Graph().Nodes()), "node", "nodes"))
				for _, cy := range p.Graph().Cycles() {
					line += fmt.Sprintf("; cycle %s (bounded by max_steps=%d)", strings.Join(cy, " -> "), p.Config().Limits.MaxSteps)
				}
				fmt.Fprintln(c.OutOrStdout(), line)
			})
		},
	}
}

// validateEach checks the pipeline files at paths in turn, as planner
// validate does: it writes the error of each invalid file to c's error
// stream and calls valid with each valid file's pipeline, already closed.
// When any file is invalid it returns a *silentError that counts them.
func validateEach(c *cobra.Command, paths []string, valid func(path string, p *planner.Pipeline)) error {
	a, err := app.New()
	if err != nil {
		return err
	}
	bad := 0
	for _, path := range paths {
		p, err := a.Validate(c.Context(), path)
		if err != nil {
			bad++
			fmt.Fprintln(c.ErrOrStderr(), err)
			continue
		}
		if err := p.Close(); err != nil {
			fmt.Fprintln(c.ErrOrStderr(), err)
		}
		valid(path, p)
	}
	if bad > 0 {
		return &silentError{fmt.Errorf("%d of %s invalid", bad, textutil.Count(len(paths), "file", "files"))}
	}
	return nil
}

func newGraphCmd() *cobra.Command {
	var format string
	c := &cobra.Command{
		Use:   "graph FILE",
		Short: "Render a pipeline's graph as DOT, Mermaid or SVG",
		Long: `Render a pipeline's graph: DOT (for Graphviz), Mermaid (for a Markdown page), or SVG, drawn
without Graphviz exactly as planner serve draws it on its web page.`,
		Example: `  planner graph configs/plan_execute.yaml | dot -Tsvg > plan_execute.svg
  planner graph configs/react.yaml --format mermaid
  planner graph configs/react.yaml --format svg > react.svg`,
		Args: exactArgs(1, "one pipeline file"),
		RunE: func(c *cobra.Command, args []string) error {
			if !slices.Contains([]string{"dot", "mermaid", "svg"}, format) {
				return &usageError{cmd: "graph", err: fmt.Errorf("--format must be dot, mermaid or svg, got %q", format)}
			}
			a, err := app.New()
			if err != nil {
				return err
			}
			p, err := a.Validate(c.Context(), args[0])
			if err != nil {
				return err
			}
			defer func() {
				if err := p.Close(); err != nil {
					fmt.Fprintln(c.ErrOrStderr(), err)
				}
			}()
			switch format {
			case "svg":
				fmt.Fprint(c.OutOrStdout(), p.Graph().SVG(p.Name(), p.Kinds(), p.Nested()...))
			case "dot":
				fmt.Fprint(c.OutOrStdout(), p.Graph().DOT(p.Name(), p.Kinds(), p.Nested()...))
			default: // mermaid
				fmt.Fprint(c.OutOrStdout(), p.Graph().Mermaid(p.Kinds(), p.Nested()...))
			}
			return nil
		},
	}
	c.Flags().StringVarP(&format, "format", "f", "dot", "output format: dot, mermaid or svg")
	_ = c.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]cobra.Completion{"dot", "mermaid", "svg"}, cobra.ShellCompDirectiveNoFileComp))
	return c
}
