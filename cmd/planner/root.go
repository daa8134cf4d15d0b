package main

import (
	"fmt"
	"strings"

	"github.com/planner-engine/planner/internal/textutil"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// newRoot builds the whole command tree. Every call builds fresh commands
// with their own flag values, bound to p.
func newRoot(p process) *cobra.Command {
	root := &cobra.Command{
		Use:   "planner",
		Short: "Run and compare LLM agent reasoning paradigms declared as YAML graphs",
		Long: `planner runs agent reasoning paradigms (Direct, CoT, ReAct, Plan-and-Execute, ReWOO,
LLMCompiler, Reflexion, Tree of Thoughts, ...) as graphs of nodes declared in YAML.

Flags can also be set through the environment as PLANNER_<FLAG>, e.g. PLANNER_LLM=openai:gpt-4o-mini.`,
		// Version makes --version print what 'planner version' prints.
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		Example: `  planner run --config configs/react.yaml --llm sim --suite demo --task demo-07
  planner run --config configs/cot.yaml --llm openai:gpt-4o-mini "What is 17 * 23?"   # needs OPENAI_API_KEY
  planner validate configs/*.yaml
  planner graph configs/react.yaml --format mermaid
  planner models
  planner paradigms`,
	}
	root.SetVersionTemplate("planner {{.Version}}\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &usageError{cmd: subcommand(c), err: err}
	})
	// Every command reads PLANNER_* for the flags the user did not set.
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error { return bindFlags(c, p.lookupEnv) }
	root.AddCommand(newRunCmd(p), newValidateCmd(), newGraphCmd(), newToolsCmd(), newParseCmd(), newCompareCmd(p), newModelsCmd(), newParadigmsCmd(), newVersionCmd(),
		newResumeCmd(p), newThreadsCmd(p), newHistoryCmd(p), newAuditCmd(p), newServeCmd(p), newWorkerCmd(), newMCPCmd(p))
	root.AddCommand(newSchemaCmd())
	root.AddCommand(newAutopilotCmd())
	// Last, once every command is added. cobra adds 'completion' when the
	// tree runs; added now, it is part of the tree as built (the docs
	// tests find it). It keeps the writer the root has now, so p's first.
	if p.stdout != nil {
		root.SetOut(p.stdout)
	}
	root.InitDefaultCompletionCmd()
	// Thread names, pipeline files, --llm specs and task ids (completion.go).
	registerCompletions(root, p)
	return root
}

// bindFlags lets PLANNER_* environment variables fill flags the user did
// not set: --max-steps reads PLANNER_MAX_STEPS. An empty variable counts as
// unset.
func bindFlags(c *cobra.Command, lookupEnv func(string) (string, bool)) error {
	var err error
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed {
			return
		}
		name := "PLANNER_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		val, ok := lookupEnv(name)
		if !ok || val == "" {
			return
		}
		if e := c.Flags().Set(f.Name, val); e != nil {
			err = &usageError{cmd: subcommand(c), err: fmt.Errorf("%s: %w", name, e)}
		}
	})
	return err
}

// subcommand is c's path below the root ("tools call" for 'planner tools
// call'; "" for the root itself), as usageError.cmd wants it.
func subcommand(c *cobra.Command) string {
	return strings.TrimSpace(strings.TrimPrefix(c.CommandPath(), c.Root().Name()))
}

func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return &usageError{cmd: subcommand(c), err: fmt.Errorf("expected %s, got %s", what, textutil.Count(len(args), "argument", "arguments"))}
		}
		return nil
	}
}

func minArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) < n {
			return &usageError{cmd: subcommand(c), err: fmt.Errorf("expected %s", what)}
		}
		return nil
	}
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the planner version",
		Example: "  planner version",
		Args:    exactArgs(0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(c.OutOrStdout(), "planner %s\n", version)
			return err
		},
	}
}
