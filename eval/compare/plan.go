package compare

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
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

// configs are a comparison's pipelines, in the order of Options.Configs,
// with what each one's runs are stored under.
type configs struct {
	pipes   []*planner.Pipeline
	names   []string     // the pipelines' names
	prints  []string     // their fingerprints (see fingerprint)
	models  []config.LLM // the llm block each runs with
	specs   []string     // their ModelSpecs
	digests map[string]string            // Options.TaskDigests
	byCfg   map[string]map[string]string // Options.ConfigTaskDigests
}

// job is one run to make: config cfg on task task, indexes into a
// comparison's configs and tasks.
type job struct {
	cfg  int
	task int
}

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
	for _, p := range c.cfgs.pipes {
		_ = p.Close()
	}
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

// loadConfigs loads every pipeline of opts.Configs with opts.runLLM() and
// fingerprints it. Pipeline names must be unique. On an error it closes
// the pipelines it loaded.
func loadConfigs(ctx context.Context, loader Loader, opts Options) (_ configs, err error) {
	var c configs
	defer func() {
		if err != nil {
			for _, p := range c.pipes {
				_ = p.Close()
			}
		}
	}()
	c.digests, c.byCfg = opts.TaskDigests, opts.ConfigTaskDigests
	paths := map[string]string{} // pipeline name -> config path
	for _, path := range opts.Configs {
		p, err := loader.LoadWith(ctx, path, opts.runLLM(), 0)
		if err != nil {
			return c, err
		}
		c.pipes = append(c.pipes, p)
		name := p.Name()
		if prev, dup := paths[name]; dup {
			return c, fmt.Errorf("%w: %s and %s are both named %q", ErrOptions, prev, path, name)
		}
		paths[name] = path
		fp, err := fingerprint(p.Config().File, opts.LLM)
		if err != nil {
			return c, err
		}
		model := p.Config().LLM
		if opts.LLM.Provider != "" {
			model = opts.LLM
		}
		c.names, c.prints = append(c.names, name), append(c.prints, fp)
		c.models, c.specs = append(c.models, model), append(c.specs, ModelSpec(model))
	}
	if opts.Baseline != "" && !slices.Contains(c.names, opts.Baseline) {
		return c, fmt.Errorf("%w: --baseline %q names no config of the comparison (its configs: %s)", ErrOptions, opts.Baseline, strings.Join(c.names, ", "))
	}
	return c, nil
}

// printOf is the fingerprint of config i's runs of task id: the config's,
// with the task's digest when it has one (Options.ConfigTaskDigests for
// the config, else Options.TaskDigests).
func (c *configs) printOf(i int, id string) string {
	d := c.byCfg[c.names[i]][id]
	if d == "" {
		d = c.digests[id]
	}
	if d == "" {
		return c.prints[i]
	}
	sum := sha256.Sum256([]byte(c.prints[i] + "\x00" + d))
	return hex.EncodeToString(sum[:])[:16]
}

// plan returns the runs whose results the store does not hold yet, task
// by task, each task's configs in order.
func (c *comparison) plan(ctx context.Context) ([]job, error) {
	done, err := c.store.Done(ctx, c.opts.Seed)
	if err != nil {
		return nil, err
	}
	var jobs []job
	for t, task := range c.tasks {
		for i, name := range c.cfgs.names {
			if !done[storeKey(name, task.ID, c.cfgs.printOf(i, task.ID), c.cfgs.specs[i])] {
				jobs = append(jobs, job{cfg: i, task: t})
			}
		}
	}
	return jobs, nil
}

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
func storeKey(config, taskID, fingerprint, model string) string {
	return config + "\x00" + taskID + "\x00" + fingerprint + "\x00" + model
}
