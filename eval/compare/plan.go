package compare

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/state"
)

// comparison is one call of Run once its pipelines are loaded and its run
// folder's store is open: the options with their defaults, the tasks with
// their ids, the configs and the store.
type comparison struct {
	opts  Options
	tasks []state.Task
	ids   map[string]int // task id -> index in tasks
	cfgs  configs
	store *Store
}

// configs are a comparison's entries: one per (config, model) pair, the
// configs in the order of Options.Configs and, within each, the models in
// the order of Options.LLMs, with what each one's runs are stored under.
type configs struct {
	entries []entry
	models  int                          // models per config (1 when each config runs with its own llm block)
	digests map[string]string            // Options.TaskDigests
	byCfg   map[string]map[string]string // Options.ConfigTaskDigests
}

// entry is one row of a comparison: a config run with one model.
type entry struct {
	name  string     // the pipeline's name
	label string     // name, or "name @ spec" when the comparison has several models
	print string     // the fingerprint (see fingerprint)
	model config.LLM // the llm block its runs use (seed aside)
	spec  string     // model's ModelSpec
	// modelLabel names the model in reports: its label
	// (Options.ModelLabels) or spec; "" with one model.
	modelLabel string
	kind       llm.Kind // what kind of model it is
	// pipes holds the pipeline each repeat runs, by repeat index. Repeats
	// share one pipeline unless the model takes its seed when it is built
	// (the simulator, llm.KindSimulated): each repeat then has a pipeline
	// built with that repeat's seed.
	pipes []*planner.Pipeline
}

// job is one run to make: entry e on task task, repeat rep, indexes into
// a comparison's entries and tasks.
type job struct {
	e    int
	task int
	rep  int
}

// SeedOf is the seed of repeat rep (0-based) of a comparison seeded seed:
// seed + rep. A run is fixed by its config, task, model and seed, so a
// result stored for one comparison's repeat is the same run as another's
// with that seed, and is reused.
func SeedOf(seed uint64, rep int) uint64 { return seed + uint64(rep) }

// open checks opts and tasks, fills in the defaults and the missing task
// ids, loads the pipelines and opens the run folder's store. Close the
// comparison when done.
func open(ctx context.Context, loader Loader, tasks []state.Task, opts Options) (_ *comparison, err error) {
	if err := opts.check(tasks); err != nil {
		return nil, err
	}
	c := &comparison{opts: opts.withDefaults()}
	if c.opts.Scrubber == nil {
		c.opts.Scrubber = loader.Scrubber()
	}
	if c.opts.Scrubber == nil {
		c.opts.Scrubber = noScrub{}
	}
	if c.tasks, c.ids, err = numberTasks(tasks); err != nil {
		return nil, err
	}
	if c.cfgs, err = loadConfigs(ctx, loader, c.opts); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			c.close()
		}
	}()
	if err := os.MkdirAll(c.opts.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	if c.store, err = OpenStore(ctx, c.opts.OutDir); err != nil {
		return nil, err
	}
	return c, nil
}

// close closes the store and the pipelines. Closing a pipeline only stops
// what its tools started (MCP servers), and closing the store after its
// last write only releases it: neither failure can change the comparison.
func (c *comparison) close() {
	if c.store != nil {
		_ = c.store.Close()
	}
	c.cfgs.close()
}

// numberTasks returns a copy of tasks whose missing ids are filled in
// ("task-0007"), leaving the caller's slice alone, and the index of each
// id. Ids must be unique.
func numberTasks(tasks []state.Task) ([]state.Task, map[string]int, error) {
	tasks = slices.Clone(tasks)
	ids := make(map[string]int, len(tasks))
	for i := range tasks {
		if tasks[i].ID == "" {
			tasks[i].ID = fmt.Sprintf("task-%04d", i)
		}
		if _, dup := ids[tasks[i].ID]; dup {
			return nil, nil, fmt.Errorf("%w: duplicate task id %q", ErrOptions, tasks[i].ID)
		}
		ids[tasks[i].ID] = i
	}
	return tasks, ids, nil
}

// loadConfigs loads the pipelines of every (config, model) pair of opts
// (for each repeat that needs its own, see entry.pipes) and fingerprints
// them. Pipeline names must be unique. On an error it closes the
// pipelines it loaded.
func loadConfigs(ctx context.Context, loader Loader, opts Options) (_ configs, err error) {
	c := configs{digests: opts.TaskDigests, byCfg: opts.ConfigTaskDigests}
	defer func() {
		if err != nil {
			c.close()
		}
	}()
	models := opts.models()
	c.models = len(models)
	paths := map[string]string{} // pipeline name -> config path
	for _, path := range opts.Configs {
		for mi, m := range models {
			e, err := loadEntry(ctx, loader, path, m, opts)
			c.entries = append(c.entries, e) // closed on error too
			if err != nil {
				return c, err
			}
			if mi > 0 {
				continue
			}
			if prev, dup := paths[e.name]; dup {
				return c, fmt.Errorf("%w: %s and %s are both named %q", ErrOptions, prev, path, e.name)
			}
			paths[e.name] = path
		}
	}
	if len(models) > 1 {
		seen := map[string]bool{}
		for i := range c.entries {
			e := &c.entries[i]
			model := e.spec
			if m := i % len(models); m < len(opts.ModelLabels) && opts.ModelLabels[m] != "" {
				model = opts.ModelLabels[m]
			}
			if seen[model] && i < len(models) {
				return c, fmt.Errorf("%w: the model %s is given twice (label each to compare one model with two settings)", ErrOptions, model)
			}
			seen[model] = true
			e.modelLabel, e.label = model, e.name+" @ "+model
		}
	}
	if opts.Baseline == BaselineBest && c.baseline(opts.Baseline) < 0 {
		if opts.StopWhenDecided {
			return c, fmt.Errorf("%w: --baseline best is chosen from the results, and --stop-when-decided needs its baseline while it runs: name the baseline config", ErrOptions)
		}
		return c, nil
	}
	if opts.Baseline != "" && c.baseline(opts.Baseline) < 0 {
		labels := make([]string, len(c.entries))
		for i, e := range c.entries {
			labels[i] = e.label
		}
		return c, fmt.Errorf("%w: --baseline %q names no config of the comparison (its configs: %s)", ErrOptions, opts.Baseline, strings.Join(labels, ", "))
	}
	return c, nil
}

// loadEntry loads the pipeline at path run with model m (zero: its own llm
// block) for every repeat that needs its own (see entry.pipes).
func loadEntry(ctx context.Context, loader Loader, path string, m config.LLM, opts Options) (entry, error) {
	var e entry
	p, err := loader.LoadWith(ctx, path, withSeed(m, opts.Seed), 0)
	if err != nil {
		return e, err
	}
	e.pipes = append(e.pipes, p)
	e.name, e.label = p.Name(), p.Name()
	if e.print, err = fingerprint(p.Config().File, m); err != nil {
		return e, err
	}
	e.model = p.Config().LLM
	if m.Provider != "" {
		e.model = m
	}
	e.spec = ModelSpec(e.model)
	e.kind = loader.ModelKind(e.model.Provider)
	seeded := opts.RunFunc == nil && e.kind == llm.KindSimulated
	for rep := 1; rep < opts.Repeats; rep++ {
		if !seeded {
			e.pipes = append(e.pipes, p)
			continue
		}
		q, err := loader.LoadWith(ctx, path, withSeed(e.model, SeedOf(opts.Seed, rep)), 0)
		if err != nil {
			return e, err
		}
		e.pipes = append(e.pipes, q)
	}
	return e, nil
}

// withSeed is m with seed, or the zero block when m is (the pipeline runs
// with its own llm block).
func withSeed(m config.LLM, seed uint64) config.LLM {
	if m.Provider != "" {
		m.Seed = seed
	}
	return m
}

// close closes every distinct pipeline.
func (c *configs) close() {
	seen := map[*planner.Pipeline]bool{}
	for _, e := range c.entries {
		for _, p := range e.pipes {
			if p != nil && !seen[p] {
				seen[p] = true
				_ = p.Close()
			}
		}
	}
}

// entryOf returns the index of the entry r belongs to (its config, model
// and fingerprint, which tells apart two models of one spec), or -1.
func (c *configs) entryOf(r Record) int {
	for i, e := range c.entries {
		if e.name == r.Config && e.spec == r.Model && c.printOf(i, r.TaskID) == r.Fingerprint {
			return i
		}
	}
	return -1
}

// baseline returns the index of the entry that name selects (its label,
// or its config name: the first entry of that config), or -1.
func (c *configs) baseline(name string) int {
	if i := slices.IndexFunc(c.entries, func(e entry) bool { return e.label == name }); i >= 0 {
		return i
	}
	return slices.IndexFunc(c.entries, func(e entry) bool { return e.name == name })
}

// printOf is the fingerprint of config i's runs of task id: the config's,
// with the task's digest when it has one (Options.ConfigTaskDigests for
// the config, else Options.TaskDigests).
func (c *configs) printOf(i int, id string) string {
	e := &c.entries[i]
	d := c.byCfg[e.name][id]
	if d == "" {
		d = c.digests[id]
	}
	if d == "" {
		return e.print
	}
	sum := sha256.Sum256([]byte(e.print + "\x00" + d))
	return hex.EncodeToString(sum[:])[:16]
}

// plan returns the runs whose results the store does not hold yet: repeat
// by repeat, task by task (in an order drawn from the repeat's seed with
// Options.StopWhenDecided), each task's entries in order.
func (c *comparison) plan(ctx context.Context) ([]job, error) {
	done, err := c.store.Done(ctx, c.seeds())
	if err != nil {
		return nil, err
	}
	var jobs []job
	order := make([]int, len(c.tasks))
	for t := range order {
		order[t] = t
	}
	for rep := range c.opts.Repeats {
		seed := SeedOf(c.opts.Seed, rep)
		if c.opts.StopWhenDecided {
			order = shuffled(len(c.tasks), seed)
		}
		for _, t := range order {
			task := c.tasks[t]
			for i, e := range c.cfgs.entries {
				if !done[storeKey(e.name, task.ID, c.cfgs.printOf(i, task.ID), e.spec, seed)] {
					jobs = append(jobs, job{e: i, task: t, rep: rep})
				}
			}
		}
	}
	return jobs, nil
}

// seeds are the seeds of the comparison's repeats, in order.
func (c *comparison) seeds() []uint64 {
	out := make([]uint64, c.opts.Repeats)
	for r := range out {
		out[r] = SeedOf(c.opts.Seed, r)
	}
	return out
}

// runs is the number of runs the comparison holds when complete.
func (c *comparison) runs() int { return len(c.tasks) * len(c.cfgs.entries) * c.opts.Repeats }

// fingerprint identifies what a stored result was produced with: the
// pipeline file's bytes and the llm override. Files the pipeline refers to
// (prompt files, corpora) are not included.
func fingerprint(path string, llm config.LLM) (string, error) {
	h := sha256.New()
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("compare: fingerprinting %s: %w", path, err)
		}
		h.Write(b)
	}
	h.Write([]byte{0})
	js, err := json.Marshal(llm)
	if err != nil {
		return "", fmt.Errorf("compare: fingerprinting the llm override: %w", err)
	}
	h.Write(js)
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// storeKey is the key under which the store says a result is done.
func storeKey(config, taskID, fingerprint, model string, seed uint64) string {
	return config + "\x00" + taskID + "\x00" + fingerprint + "\x00" + model + "\x00" + strconv.FormatUint(seed, 10)
}
