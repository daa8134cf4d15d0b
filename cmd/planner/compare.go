package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/internal/app"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/verify"
	"github.com/spf13/cobra"
)

type compareFlags struct {
	suite, format, slice, llm, out, scorer string
	configs                                []string
	limit, concurrency                     int
	timeout                                time.Duration
	seed                                   uint64
	json, quiet                            bool
}

func newCompareCmd() *cobra.Command {
	f := &compareFlags{}
	c := &cobra.Command{
		Use:   "compare --suite SUITE --config A.yaml --config B.yaml ... [flags]",
		Short: "Run several pipelines on a task suite and report them side by side",
		Long: `Run every config on every task of a suite (bounded concurrency, per-task timeout, seed),
store each result in SQLite under --out so an interrupted compare resumes where it stopped,
keep each run's JSONL trace, and report per config: success rate (EM/F1 where the scorer has
them), model calls, prompt and completion tokens, tool calls, latency p50/p95, estimated cost
and failures by kind. Writes report.md, report.json and report.html (offline charts) to --out.

--suite demo is the built-in demo suite; other suites are files: JSONL tasks, GSM8K, Game of 24
CSV, HotpotQA or ParallelQA JSON (format detected, or --format).

With --llm sim the numbers come from a simulated oracle model and measure the engine, not any
model; every output says so.`,
		Example: `  planner compare --suite demo --config configs/react.yaml --config configs/plan_execute.yaml --llm sim:noisy
  planner compare --suite ../shared/data/gsm8k/test.jsonl --limit 200 --llm sim --config configs/react.yaml --config configs/rewoo.yaml
  planner compare --suite tasks.jsonl --config configs/cot.yaml --llm openai:gpt-4o-mini --concurrency 2 --out runs/cot`,
		Args: exactArgs(0, "no arguments (use --suite and --config)"),
		RunE: func(c *cobra.Command, _ []string) error {
			return runCompare(c, f)
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.suite, "suite", "demo", "task suite: demo, or a file path")
	fl.StringVar(&f.format, "format", "auto", "suite format: auto, jsonl, gsm8k, game24, hotpotqa, parallelqa")
	fl.IntVar(&f.limit, "limit", 0, "use only the first N tasks (after --slice)")
	fl.StringVar(&f.slice, "slice", "", "task range a:b (0-based, end exclusive), e.g. 900:1000")
	fl.StringArrayVar(&f.configs, "config", nil, "pipeline YAML (repeat for each config)")
	fl.StringVar(&f.llm, "llm", "", "model for every config (e.g. sim:noisy, openai:gpt-4o-mini); default: each config's llm block")
	fl.IntVar(&f.concurrency, "concurrency", 8, "runs in flight")
	fl.DurationVar(&f.timeout, "timeout", 2*time.Minute, "time limit per run")
	fl.Uint64Var(&f.seed, "seed", 1, "seed (recorded with results; seeds the sim model's faults)")
	fl.StringVar(&f.out, "out", "out/compare", "output folder for results.db, traces and reports")
	fl.StringVar(&f.scorer, "scorer", "", "scorer: em, contains, numeric, numeric:TOL, game24, choice:A|B (default: the suite format's)")
	fl.BoolVar(&f.json, "json", false, "print report.json to stdout instead of the table")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress bar")
	return c
}

// loadSuite loads the --suite tasks (with their gold solutions, for the
// simulator), sliced and limited, and the scorer that judges them:
// --scorer, or the suite format's default.
func loadSuite(c *cobra.Command, f *compareFlags) ([]suite.Task, verify.Scorer, error) {
	var opts []suite.Option
	if f.slice != "" {
		a, b, err := suite.ParseSlice(f.slice)
		if err != nil {
			return nil, nil, &usageError{cmd: "compare", err: err}
		}
		opts = append(opts, suite.WithSlice(a, b))
	}
	if f.limit > 0 {
		opts = append(opts, suite.WithLimit(f.limit))
	}
	var tasks []suite.Task
	format := suite.FormatJSONL
	if f.suite == "demo" {
		all, err := suite.Demo()
		if err != nil {
			return nil, nil, err
		}
		tasks = suite.Select(all, opts...)
	} else {
		ff, err := suite.ParseFormat(f.format)
		if err != nil {
			return nil, nil, &usageError{cmd: "compare", err: err}
		}
		if tasks, format, err = suite.LoadFormat(c.Context(), f.suite, append(opts, suite.WithFormat(ff))...); err != nil {
			return nil, nil, err
		}
	}
	if f.scorer != "" {
		sc, err := verify.ByName(f.scorer)
		if err != nil {
			return nil, nil, &usageError{cmd: "compare", err: err}
		}
		return tasks, sc, nil
	}
	sc, err := suite.DefaultScorer(format)
	if err != nil {
		return nil, nil, err
	}
	return tasks, sc, nil
}

func runCompare(c *cobra.Command, f *compareFlags) error {
	if len(f.configs) == 0 {
		return &usageError{cmd: "compare", err: errors.New("give at least one --config")}
	}
	var expanded []string
	for _, pat := range f.configs {
		m, err := filepath.Glob(pat)
		if err != nil || len(m) == 0 {
			expanded = append(expanded, pat)
			continue
		}
		expanded = append(expanded, m...)
	}
	tasks, sc, err := loadSuite(c, f)
	if err != nil {
		return err
	}
	var llmCfg config.LLM
	if f.llm != "" {
		if llmCfg, err = llm.ParseSpec(f.llm); err != nil {
			return &usageError{cmd: "compare", err: err}
		}
		if llmCfg.Script != "" {
			llmCfg.Script, _ = filepath.Abs(llmCfg.Script)
		}
	}
	a, err := app.New(app.WithTasks(tasks))
	if err != nil {
		return err
	}
	opts := compare.Options{Configs: expanded, LLM: llmCfg, Concurrency: f.concurrency, Timeout: f.timeout,
		Seed: f.seed, OutDir: f.out, Scorer: sc, Suite: f.suite}
	if !f.quiet && !f.json {
		opts.Progress = c.ErrOrStderr()
	}
	rep, err := compare.Run(c.Context(), a, suite.AgentTasks(tasks), opts)
	if err != nil {
		return err
	}
	html, err := rep.WriteFiles(f.out)
	if err != nil {
		return err
	}
	out := c.OutOrStdout()
	if f.json {
		b, err := json.Marshal(rep)
		if err != nil {
			return err
		}
		fmt.Fprintln(out, string(b))
		return nil
	}
	if err := rep.WriteTable(out); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nreports: %s (also report.md, report.json; traces in %s)\n", html, filepath.Join(f.out, "traces"))
	return nil
}
