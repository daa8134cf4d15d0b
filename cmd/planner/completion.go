package main

import (
	"cmp"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/journal/sqlitestore"
	"github.com/planner-engine/planner/llm/provider"
	"github.com/spf13/cobra"
)

// Shell completion beyond cobra's own (commands and flag names): thread
// names, pipeline and suite files, --llm specs and suite task ids. Every
// completion function here is quiet and quick: it prints nothing, an
// error gives no candidates, and the thread store is read for at most
// completeTimeout.

const (
	// completeTimeout bounds how long completing a thread name may wait
	// on the thread store (a store locked by a run, a slow disk).
	completeTimeout = time.Second
	// completeMax bounds the candidates one completion offers (task ids
	// of a large suite file, files of a large folder).
	completeMax = 1000
)

// The extensions of the files each completion offers: pipelines
// (--config, validate, graph) and scripted models' scripts, suite files,
// thread stores, and cassettes (replay:).
func pipelineExts() []string { return []string{".yaml", ".yml"} }
func suiteExts() []string    { return []string{".jsonl", ".json", ".yaml", ".yml", ".csv"} }
func storeExts() []string    { return []string{".db", ".sqlite", ".sqlite3"} }
func cassetteExts() []string { return []string{".jsonl", ".json", ".yaml", ".yml"} }

// registerCompletions walks the command tree under root once and attaches
// completion functions: to flags by their name (--config, --llm,
// --judge-llm, --suite, --task, --thread, --store, --db, --dir) on every
// command that has them, and to the positional arguments of the commands
// that take pipeline files or thread names. p gives the environment the default
// thread store and PLANNER_SUITE are read from.
func registerCompletions(root *cobra.Command, p process) {
	byFlag := map[string]cobra.CompletionFunc{
		"config":    filesFunc(pipelineExts()...),
		"llm":       llmFunc(false),
		"judge-llm": llmFunc(false),
		"suite":     completeSuite,
		"task": func(c *cobra.Command, _ []string, s string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return completeTask(c, p, s)
		},
		"thread": func(c *cobra.Command, _ []string, s string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return completeThread(c, p, s)
		},
		"store":       filesFunc(storeExts()...),
		"db":          filesFunc(storeExts()...), // audit's log; serve's old name of --store
		"dir":         dirsOnly,
		"compare-dir": dirsOnly,
	}
	threadArg := func(c *cobra.Command, args []string, s string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return completeThread(c, p, s)
	}
	pipelineArgs := func(c *cobra.Command, args []string, s string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if c.Name() == "graph" && len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return completeFiles(s, pipelineExts()...)
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for name, fn := range byFlag {
			if name == "llm" && c.Name() == "compare" && c.Parent() == root {
				fn = llmFunc(true)
			}
			if c.LocalNonPersistentFlags().Lookup(name) != nil {
				// Only fails for a flag already registered by its
				// constructor, which keeps its own.
				_ = c.RegisterFlagCompletionFunc(name, fn)
			}
		}
		if c.ValidArgsFunction == nil && c.HasParent() && c.Parent() == root {
			switch c.Name() {
			case "resume", "history":
				c.ValidArgsFunction = threadArg
			case "validate", "graph":
				c.ValidArgsFunction = pipelineArgs
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// dirsOnly completes folders only.
func dirsOnly(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveFilterDirs
}

// filesFunc completes files with one of exts, and folders.
func filesFunc(exts ...string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeFiles(toComplete, exts...)
	}
}

// completeFiles offers the files beside toComplete's folder whose names
// start as it does and end with one of exts, and the folders (ending in
// "/", so the shell adds no space and the user goes on typing).
func completeFiles(toComplete string, exts ...string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return withFiles(nil, "", listFiles(toComplete, exts))
}

// withFiles adds the paths (as listFiles lists them) to cands, each after
// prefix, with the directive that suits them: no space after a folder,
// so the user can go on into it; never the shell's own file completion.
func withFiles(cands []cobra.Completion, prefix string, paths []string) ([]cobra.Completion, cobra.ShellCompDirective) {
	d := cobra.ShellCompDirectiveNoFileComp
	for _, p := range paths {
		cands = append(cands, prefix+p)
		if strings.HasSuffix(p, "/") {
			d |= cobra.ShellCompDirectiveNoSpace
		}
	}
	return cands, d
}

// listFiles lists the files and folders matching partial as completeFiles
// describes, at most completeMax, hidden ones only when partial names
// them.
func listFiles(partial string, exts []string) []string {
	dir, base := filepath.Split(partial)
	entries, err := os.ReadDir(cmp.Or(dir, "."))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base) || (strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".")) {
			continue
		}
		isDir := e.IsDir()
		if e.Type()&os.ModeSymlink != 0 {
			if st, err := os.Stat(filepath.Join(cmp.Or(dir, "."), name)); err == nil {
				isDir = st.IsDir()
			}
		}
		switch {
		case isDir:
			out = append(out, dir+name+"/")
		case slices.Contains(exts, strings.ToLower(filepath.Ext(name))):
			out = append(out, dir+name)
		}
		if len(out) >= completeMax {
			break
		}
	}
	return out
}

// llmFunc completes --llm as completeLLM does.
func llmFunc(modelsFiles bool) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeLLM(toComplete, modelsFiles)
	}
}

// The offline models' names in an --llm spec (llm.ParseSpec).
const (
	specSim      = "sim"
	specScripted = "scripted"
	specReplay   = "replay"
)

// completeLLM completes a model spec: the providers ("openai:"), then
// after the kind's colon the sim profiles (sim:noisy), the scripts of
// scripted: (YAML files) and the cassettes of replay:; the offline
// models without a colon (sim, scripted) too; with modelsFiles, also YAML
// files (compare's --llm takes a models file).
func completeLLM(toComplete string, modelsFiles bool) ([]cobra.Completion, cobra.ShellCompDirective) {
	kind, rest, hasColon := strings.Cut(toComplete, ":")
	if hasColon {
		switch strings.ToLower(kind) {
		case specSim:
			var out []cobra.Completion
			for _, name := range sim.ProfileNames() {
				if strings.HasPrefix(name, rest) {
					out = append(out, kind+":"+name)
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		case specScripted:
			return withFiles(nil, kind+":", listFiles(rest, pipelineExts()))
		case specReplay:
			return withFiles(nil, kind+":", listFiles(rest, cassetteExts()))
		}
		// A provider's model names are the provider's to know: none offered.
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, name := range provider.Providers() {
		out = append(out, cobra.CompletionWithDesc(name+":", "provider: "+name+":MODEL"))
	}
	out = append(out,
		cobra.CompletionWithDesc(specSim, "offline simulated model of suite tasks"),
		cobra.CompletionWithDesc(specSim+":", "sim:PROFILE, a simulated model's fault profile"),
		cobra.CompletionWithDesc(specScripted, "offline: each suite task's own replies"),
		cobra.CompletionWithDesc(specScripted+":", "scripted:FILE.yaml, an offline script of replies"),
		cobra.CompletionWithDesc(specReplay+":", "replay:FILE, a cassette of run --record"),
	)
	out = filterPrefix(out, toComplete)
	d := cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp // after "openai:" comes the model
	if modelsFiles && toComplete != "" {
		var fd cobra.ShellCompDirective
		out, fd = withFiles(out, "", listFiles(toComplete, pipelineExts()))
		d |= fd
	}
	return out, d
}

// filterPrefix keeps the candidates whose value (before any description)
// starts with prefix.
func filterPrefix(cands []cobra.Completion, prefix string) []cobra.Completion {
	var out []cobra.Completion
	for _, c := range cands {
		value, _, _ := strings.Cut(c, "\t")
		if strings.HasPrefix(value, prefix) {
			out = append(out, c)
		}
	}
	return out
}

// completeSuite completes --suite: the built-in suites, then suite files.
func completeSuite(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	for _, name := range suite.BuiltinNames() {
		if strings.HasPrefix(name, toComplete) {
			out = append(out, name)
		}
	}
	return withFiles(out, "", listFiles(toComplete, suiteExts()))
}

// completeTask completes --task with the ids of the --suite given on the
// command line (else PLANNER_SUITE, else demo): a built-in suite's, or a
// suite file's first completeMax.
func completeTask(c *cobra.Command, p process, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	name, _ := c.Flags().GetString("suite")
	if f := c.Flags().Lookup("suite"); f == nil || !f.Changed {
		name = cmp.Or(p.getenv("PLANNER_SUITE"), cmp.Or(name, suite.DemoName))
	}
	ctx, cancel := context.WithTimeout(cmpCtx(c), completeTimeout)
	defer cancel()
	tasks, _, ok, err := suite.Builtin(name)
	if !ok && err == nil {
		tasks, _, err = suite.LoadFormat(ctx, name, suite.WithLimit(completeMax))
	}
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, t := range tasks {
		if strings.HasPrefix(t.ID, toComplete) {
			out = append(out, cobra.CompletionWithDesc(t.ID, oneLine(t.Question, 60)))
		}
		if len(out) >= completeMax {
			break
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeThread completes a thread name from the thread store (--store
// on the command line, else the default store). A store that does not
// exist is not created; one that does not answer within completeTimeout
// gives no candidates.
func completeThread(c *cobra.Command, p process, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	flag, _ := c.Flags().GetString("store")
	path, err := storePath(p, flag)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(cmpCtx(c), completeTimeout)
	defer cancel()
	names, err := threadNames(ctx, path)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, n := range names {
		if strings.HasPrefix(n, toComplete) {
			out = append(out, n)
		}
		if len(out) >= completeMax {
			break
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// errStoreSlow: the thread store did not answer in time.
var errStoreSlow = errors.New("thread store did not answer in time")

// threadNames lists the names of the threads of the store at path. It
// returns when ctx ends even if the store has not answered; the store is
// then closed once it does.
func threadNames(ctx context.Context, path string) ([]string, error) {
	type answer struct {
		names []string
		err   error
	}
	done := make(chan answer, 1)
	go func() {
		s, err := sqlitestore.Open(ctx, path, sqlitestore.WithBusyTimeout(completeTimeout))
		if err != nil {
			done <- answer{err: err}
			return
		}
		defer s.Close()
		ts, err := s.Threads(ctx)
		names := make([]string, 0, len(ts))
		for _, t := range ts {
			names = append(names, t.Name)
		}
		done <- answer{names, err}
	}()
	select {
	case a := <-done:
		return a.names, a.err
	case <-ctx.Done():
		return nil, errStoreSlow
	}
}

// cmpCtx is c's context, or a background one when it has none (cobra
// sets it only when executed with one).
func cmpCtx(c *cobra.Command) context.Context {
	if ctx := c.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// oneLine is s on one line, cut to at most n runes, for a candidate's
// description.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
