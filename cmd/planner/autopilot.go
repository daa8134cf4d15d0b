package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/planner-engine/planner/autopilot"
	"github.com/planner-engine/planner/autopilot/fit"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/internal/app"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools/search"
	"github.com/planner-engine/planner/verify"
	"github.com/spf13/cobra"
)

// autopilotPolicy is the file the documented examples fit and explain: a
// policy fitted with the simulator on the demo suite, kept with package
// autopilot's tests.
const autopilotPolicy = "autopilot/testdata/demo-policy.json"

func newAutopilotCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "autopilot",
		Short: "Fit and explain the paradigm autopilot's policy",
		Long: `The paradigm autopilot picks, for each task, the paradigm (config) that past comparisons say does
best on tasks like it: the highest expected success minus a weight times the expected cost, over the
most similar past tasks (BM25 over the task texts), smoothed towards each config's rate over all tasks.

'planner autopilot fit' learns the policy from comparison folders; 'planner autopilot explain' shows
which config it picks for a task, and why. See docs/autopilot.md.`,
		Args: exactArgs(0, "a subcommand: fit or explain"),
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newAutopilotFitCmd(), newAutopilotExplainCmd())
	return c
}

// autopilotFitFlags are planner autopilot fit's flags.
type autopilotFitFlags struct {
	suite, out, tasks, scorer string
	costWeight                float64
	neighbours                int
	configs, models           []string
}

func newAutopilotFitCmd() *cobra.Command {
	var f autopilotFitFlags
	c := &cobra.Command{
		Use:   "fit DIR... [--suite SUITE] [-o policy.json] [--cost-weight W] [--neighbours K] [--tasks odd|even|ID,ID...]",
		Short: "Learn the autopilot's policy from comparison folders",
		Long: `Read the run folders of earlier comparisons (planner compare's --out folders: their results.db,
and report.json for the seeds) and write the policy: for every task, how often each config
succeeded on it and what it cost, with the task's text. Cost is in dollars per run when every
run was priced, else in thousands of tokens per run.

--suite names the suite the comparisons ran (demo, or the suite file), for the tasks' texts;
without it the texts come from each folder's tasks.html. --tasks odd (or even) fits on one half of
the suite's tasks, in its order, so the other half can test the policy. --scorer judges every
answer again; by default each run's stored verdict counts.

The policy is written to -o (JSON), or to standard output without -o. A policy fitted on runs of
the sim model is marked SIMULATED: it reflects the simulator, not a language model.`,
		Example: `  planner compare --suite demo --llm sim:noisy -c configs/cot.yaml -c configs/react.yaml --out cmp   # writes the folder cmp
  planner autopilot fit cmp --suite demo -o policy.json   # needs the comparison folder above
  planner autopilot fit cmp --suite demo --tasks odd --cost-weight 0.1 -o odd.json   # needs the comparison folder above`,
		Args: minArgs(1, "one or more comparison folders (planner compare's --out)"),
		RunE: func(c *cobra.Command, dirs []string) error { return runAutopilotFit(c, dirs, f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.suite, "suite", "", "the suite the comparisons ran (demo, sorting, or a file), for the tasks' texts and order (default: each folder's tasks.html)")
	fl.StringVarP(&f.out, "output", "o", "", "write the policy to this file (default: standard output)")
	fl.StringVar(&f.tasks, "tasks", "all", "the tasks to learn from: odd or even (one half of the suite, in its order), all, or task ids separated by commas")
	fl.Float64Var(&f.costWeight, "cost-weight", 0, "the policy's weight of cost against success: a pick maximises success − W × cost (0: success only, the cheaper config winning ties)")
	fl.IntVar(&f.neighbours, "neighbours", autopilot.DefaultNeighbours, "how many similar past tasks a pick reads")
	fl.StringSliceVar(&f.configs, "configs", nil, "learn from these configs only (names, separated by commas; default: all)")
	fl.StringSliceVar(&f.models, "models", nil, "learn from the runs of these model specs only (default: all)")
	fl.StringVar(&f.scorer, "scorer", "", "judge every answer again with this scorer (em, contains, numeric, ...) against the --suite references (default: the stored verdicts)")
	return c
}

func runAutopilotFit(c *cobra.Command, dirs []string, f autopilotFitFlags) error {
	sel, err := fit.ParseSelection(f.tasks)
	if err != nil {
		return &usageError{cmd: "autopilot fit", err: fmt.Errorf("--tasks: %w", err)}
	}
	if f.costWeight < 0 {
		return &usageError{cmd: "autopilot fit", err: fmt.Errorf("--cost-weight must be 0 or more, got %v", f.costWeight)}
	}
	if f.neighbours < 1 {
		return &usageError{cmd: "autopilot fit", err: fmt.Errorf("--neighbours must be at least 1, got %d", f.neighbours)}
	}
	o := fit.Options{Configs: f.configs, Models: f.models, Select: sel, CostWeight: f.costWeight, Neighbours: f.neighbours,
		Warn: func(msg string) { fmt.Fprintf(c.ErrOrStderr(), "autopilot fit: %s\n", msg) }}
	if f.scorer != "" {
		if f.suite == "" {
			return &usageError{cmd: "autopilot fit", err: errors.New("--scorer needs --suite, whose references it judges against")}
		}
		if o.Scorer, err = verify.ByName(f.scorer); err != nil {
			return &usageError{cmd: "autopilot fit", err: fmt.Errorf("--scorer: %w", err)}
		}
	}
	if f.suite != "" {
		if o.Tasks, err = autopilotSuite(c, f.suite); err != nil {
			return err
		}
	}
	pol, err := fit.Fit(c.Context(), dirs, o)
	if err != nil {
		return err
	}
	if f.out == "" || f.out == "-" {
		if err := pol.Write(c.OutOrStdout()); err != nil {
			return err
		}
		return writeFitSummary(c.ErrOrStderr(), pol, "")
	}
	file, err := os.Create(f.out)
	if err != nil {
		return err
	}
	if err := pol.Write(file); err != nil {
		file.Close()
		return err
	}
	if err := file.Close(); err != nil {
		return err
	}
	return writeFitSummary(c.OutOrStdout(), pol, f.out)
}

// autopilotSuite loads a suite's tasks, ids filled in as compare fills
// them.
func autopilotSuite(c *cobra.Command, name string) ([]state.Task, error) {
	tasks, err := app.LoadSuite(c.Context(), name)
	if err != nil {
		return nil, fmt.Errorf("--suite %s: %w", name, err)
	}
	out := make([]state.Task, len(tasks))
	for i, t := range tasks {
		out[i] = t.Task
		if out[i].ID == "" {
			out[i].ID = fmt.Sprintf("task-%04d", i)
		}
	}
	return out, nil
}

// writeFitSummary says what a fit learnt: the banner, the file, and each
// candidate's figures over all tasks.
func writeFitSummary(w io.Writer, pol *autopilot.Policy, path string) error {
	var b strings.Builder
	if pol.Simulated {
		fmt.Fprintf(&b, "SIMULATED: fitted on runs of the offline simulator (%s); the policy reflects the simulator, not a language model.\n", pol.Model)
	}
	where := "policy"
	if path != "" {
		where = "policy written to " + path
	}
	fmt.Fprintf(&b, "%s: %d tasks, %d candidates, model %s, cost in %s per run, cost weight %g\n",
		where, len(pol.Tasks), len(pol.Candidates), pol.Model, pol.CostUnit, pol.CostWeight)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "candidate\truns\tsuccess\tcost (%s)\n", pol.CostUnit)
	for _, cand := range pol.Candidates {
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.5g\n", cand.Name, cand.Runs, cand.Rate(), cand.Cost)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// autopilotExplainFlags are planner autopilot explain's flags.
type autopilotExplainFlags struct {
	policy, suite, task string
	costWeight          float64
	neighbours          int
	candidates          []string
	asJSON              bool
}

func newAutopilotExplainCmd() *cobra.Command {
	var f autopilotExplainFlags
	c := &cobra.Command{
		Use:   "explain --policy FILE [--cost-weight W] [--candidates a,b] (TASK TEXT | --suite SUITE --task ID)",
		Short: "Show which config the autopilot's policy picks for a task, and why",
		Long: `Pick a config for a task with a fitted policy and explain the pick: the past tasks most like it
(BM25 over their texts) with their scores and each config's outcomes on them, every config's
expected success, cost and utility, and the rule that chose. The task is the text given, or task
--task of --suite. --cost-weight and --candidates override the policy's weight and restrict the
configs it may pick, as the autopilot node's settings do.`,
		Example: `  planner autopilot explain --policy ` + autopilotPolicy + ` "In what year did Tombaugh discover Pluto?"
  planner autopilot explain --policy ` + autopilotPolicy + ` --suite demo --task demo-07 --cost-weight 0.5
  planner autopilot explain --policy ` + autopilotPolicy + ` --candidates cot,react --json "Who named Pluto?"`,
		RunE: func(c *cobra.Command, args []string) error { return runAutopilotExplain(c, args, f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.policy, "policy", "", "the policy file planner autopilot fit wrote (required)")
	fl.StringVar(&f.suite, "suite", "", "the suite of --task: demo, sorting, or a suite file")
	fl.StringVar(&f.task, "task", "", "explain the pick for this task of --suite, instead of a text")
	fl.Float64Var(&f.costWeight, "cost-weight", 0, "weight of cost against success (default: the policy's)")
	fl.IntVar(&f.neighbours, "neighbours", 0, "how many similar past tasks to read (default: the policy's)")
	fl.StringSliceVar(&f.candidates, "candidates", nil, "the configs the pick may choose from, separated by commas (default: all of the policy's)")
	fl.BoolVar(&f.asJSON, "json", false, "print the choice as JSON")
	return c
}

func runAutopilotExplain(c *cobra.Command, args []string, f autopilotExplainFlags) error {
	usage := func(err error) error { return &usageError{cmd: "autopilot explain", err: err} }
	if f.policy == "" {
		return usage(errors.New("--policy is required: the file planner autopilot fit wrote"))
	}
	text := strings.TrimSpace(strings.Join(args, " "))
	switch {
	case f.task != "" && text != "":
		return usage(errors.New("give the task's text or --task ID, not both"))
	case f.task == "" && f.suite != "":
		return usage(errors.New("--suite needs --task ID"))
	case f.task == "" && text == "":
		return usage(errors.New("give the task's text, or --suite SUITE --task ID"))
	case f.neighbours < 0:
		return usage(fmt.Errorf("--neighbours must be at least 1, got %d", f.neighbours))
	case c.Flags().Changed("cost-weight") && f.costWeight < 0:
		return usage(fmt.Errorf("--cost-weight must be 0 or more, got %v", f.costWeight))
	}
	if f.task != "" {
		t, _, err := app.FindTask(c.Context(), app.TaskQuery{Suite: cmp.Or(f.suite, suite.DemoName), ID: f.task})
		if err != nil {
			return err
		}
		text = t.Question
	}
	pol, err := autopilot.Load(f.policy)
	if err != nil {
		return err
	}
	ix, err := autopilot.NewIndex(c.Context(), pol, search.Keywords{})
	if err != nil {
		return err
	}
	defer ix.Close()
	o := autopilot.PickOptions{Available: f.candidates, Neighbours: f.neighbours}
	if c.Flags().Changed("cost-weight") {
		o.CostWeight = &f.costWeight
	}
	choice, err := ix.Pick(c.Context(), text, o)
	if err != nil {
		return err
	}
	if f.asJSON {
		if choice.Simulated {
			fmt.Fprintf(c.ErrOrStderr(), "SIMULATED: the policy was fitted on runs of the offline simulator (%s)\n", choice.Model)
		}
		enc := json.NewEncoder(c.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(choice)
	}
	if _, err := fmt.Fprintf(c.OutOrStdout(), "task: %s\n", text); err != nil {
		return err
	}
	return choice.Explain(c.OutOrStdout())
}
