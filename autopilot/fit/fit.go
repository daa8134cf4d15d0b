// Package fit fits the paradigm autopilot's policy (package autopilot)
// from past comparisons: the run folders `planner compare` wrote. For each
// (config, task) it counts the runs and the successes and averages the
// cost, and it records each task's text, by which a pick finds the past
// tasks most like a new one.
//
// What it reads in each folder:
//
//	results.db   every run's record (eval/compare's Store): config, task id,
//	             seed, model, verdict, tokens, cost
//	report.json  the comparison's seed and repeats (which seeds' records to
//	             read), when there is one
//	tasks.html   the tasks' questions, when Options.Tasks lacks a task
//
// A run succeeded when its answer was scored and judged correct (as the
// comparison's report counts it): by Options.Scorer against the task's
// reference when both are given, else by the verdict stored with the run.
// Runs whose answer could not be scored are left out, and said so through
// Options.Warn.
package fit

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/planner-engine/planner/autopilot"
	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/verify"
)

// ErrFolder means a folder given to Fit is not a comparison's run folder.
var ErrFolder = errors.New("fit: not a comparison folder")

// ErrSelection means a task selection cannot be read or selects nothing.
var ErrSelection = errors.New("fit: bad task selection")

// Options adjust a fit. The zero value learns from every run of every
// config in the folders, with the stored verdicts and the texts the
// folders' tasks.html pages keep.
type Options struct {
	// Tasks are the suite's tasks, for their texts (Question), their order
	// (which Select's halves count in) and, with Scorer, their references.
	// A task the folders ran that is not here takes its text from the
	// folder's tasks.html.
	Tasks []state.Task
	// Scorer, when set, judges every answer again against its task's
	// reference (a task of Tasks); nil keeps the stored verdicts.
	Scorer verify.Scorer
	// Configs, when not empty, keeps only these configs' runs.
	Configs []string
	// Models, when not empty, keeps only the runs of these model specs.
	Models []string
	// Select picks the tasks to learn from (all by default).
	Select Selection
	// Seeds are the seeds whose records to read; nil reads the seeds of
	// each folder's report.json (its seed and repeats), or seed 1, the
	// comparison's default, when a folder has no report.json.
	Seeds []uint64
	// CostWeight is the policy's default weight of cost (see
	// autopilot.Policy.CostWeight).
	CostWeight float64
	// Neighbours is how many past tasks a pick reads; 0:
	// autopilot.DefaultNeighbours.
	Neighbours int
	// Warn, when set, is told what the fit left out and why (unscored
	// runs, a config file edited between runs of one folder).
	Warn func(msg string)
}

// Fit reads the comparison folders dirs and returns the policy they
// teach. It fails with ErrFolder for a folder that holds no results.db,
// with autopilot.ErrNoData when no scored run is left after the
// selection, and with an error naming the tasks that have no text.
//
// Runs of one config under several models count together, the policy's
// Model naming them all; Options.Models keeps one. Candidates are sorted
// by mean cost per run, cheapest first. Cost is in dollars ("usd") when
// every run that used tokens has a price, else in thousands of tokens
// ("ktokens").
func Fit(ctx context.Context, dirs []string, o Options) (*autopilot.Policy, error) {
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%w: no folder given (give the run folders planner compare wrote)", ErrFolder)
	}
	if o.CostWeight < 0 {
		return nil, fmt.Errorf("fit: cost weight %v: want 0 or more", o.CostWeight)
	}
	if o.Neighbours < 0 {
		return nil, fmt.Errorf("fit: neighbours %d: want 1 or more", o.Neighbours)
	}
	warn := o.Warn
	if warn == nil {
		warn = func(string) {}
	}
	texts := map[string]string{}
	tasks := map[string]state.Task{}
	var order []string
	for _, t := range o.Tasks {
		if _, dup := tasks[t.ID]; dup || t.ID == "" {
			continue
		}
		tasks[t.ID] = t
		texts[t.ID] = t.Question
		order = append(order, t.ID)
	}
	var recs []compare.Record
	for _, dir := range dirs {
		rs, pageTasks, err := readFolder(ctx, dir, o.Seeds)
		if err != nil {
			return nil, err
		}
		recs = append(recs, rs...)
		for _, t := range pageTasks {
			if _, ok := texts[t.ID]; !ok && t.Question != "" {
				texts[t.ID] = t.Question
				order = append(order, t.ID)
			}
		}
	}
	recs = slices.DeleteFunc(recs, func(r compare.Record) bool {
		return (len(o.Configs) > 0 && !slices.Contains(o.Configs, r.Config)) ||
			(len(o.Models) > 0 && !slices.Contains(o.Models, r.Model))
	})
	// The order the halves count in: the suite's, then any other task by id.
	var others []string
	seen := map[string]bool{}
	for _, id := range order {
		seen[id] = true
	}
	for _, r := range recs {
		if !seen[r.TaskID] {
			seen[r.TaskID] = true
			others = append(others, r.TaskID)
		}
	}
	sort.Strings(others)
	keep, err := o.Select.Pick(append(order, others...))
	if err != nil {
		return nil, err
	}
	recs = slices.DeleteFunc(recs, func(r compare.Record) bool { return !keep[r.TaskID] })
	if len(recs) == 0 {
		return nil, fmt.Errorf("%w: the folders %s hold no runs%s", autopilot.ErrNoData, strings.Join(dirs, ", "), o.restricted())
	}
	return build(dirs, recs, texts, tasks, o, warn)
}

// restricted says which options may have left every run out.
func (o Options) restricted() string {
	var parts []string
	if len(o.Configs) > 0 {
		parts = append(parts, "configs "+strings.Join(o.Configs, ", "))
	}
	if len(o.Models) > 0 {
		parts = append(parts, "models "+strings.Join(o.Models, ", "))
	}
	if !o.Select.all() {
		parts = append(parts, "tasks "+o.Select.String())
	}
	if o.Seeds != nil {
		parts = append(parts, fmt.Sprintf("seeds %v", o.Seeds))
	}
	if len(parts) == 0 {
		return " (run planner compare with --out FOLDER first)"
	}
	return " of " + strings.Join(parts, " and ") + " (check the names against the comparison's report)"
}

// cell accumulates one (config, task)'s runs.
type cell struct {
	runs, successes int
	usd, ktokens    float64
}

// build turns the selected records into the policy.
func build(dirs []string, recs []compare.Record, texts map[string]string, tasks map[string]state.Task, o Options, warn func(string)) (*autopilot.Policy, error) {
	cells := map[[2]string]*cell{}
	models := map[string]bool{}
	priced, withTokens, unscored := true, false, 0
	fingerprints := map[[3]string]map[string]bool{}
	for _, r := range recs {
		ok, scored := verdict(r, tasks, o.Scorer)
		if !scored {
			unscored++
			continue
		}
		k := [2]string{r.Config, r.TaskID}
		c := cells[k]
		if c == nil {
			c = &cell{}
			cells[k] = c
		}
		c.runs++
		if ok {
			c.successes++
		}
		tokens := r.PromptTokens + r.CompletionTokens
		c.usd += r.CostUSD
		c.ktokens += float64(tokens) / 1000
		if tokens > 0 {
			withTokens = true
			if r.CostUSD <= 0 {
				priced = false
			}
		}
		models[r.Model] = true
		fk := [3]string{r.Config, r.Model, r.TaskID}
		if fingerprints[fk] == nil {
			fingerprints[fk] = map[string]bool{}
		}
		fingerprints[fk][r.Fingerprint] = true
	}
	if unscored > 0 {
		warn(fmt.Sprintf("left out %d runs whose answer could not be scored", unscored))
	}
	if len(cells) == 0 {
		return nil, fmt.Errorf("%w: none of the %d runs in %s has a scored answer (pass the suite, --suite, so answers are judged against its references)",
			autopilot.ErrNoData, len(recs), strings.Join(dirs, ", "))
	}
	var edited []string
	for fk, fps := range fingerprints {
		if len(fps) > 1 && !slices.Contains(edited, fk[0]) {
			edited = append(edited, fk[0])
		}
	}
	if len(edited) > 0 {
		sort.Strings(edited)
		warn(fmt.Sprintf("config %s ran as more than one version of its file in one folder; the runs of every version count", strings.Join(edited, ", ")))
	}

	p := &autopilot.Policy{
		Version: autopilot.Version, Sources: dirs, CostUnit: autopilot.UnitKTokens, CostWeight: o.CostWeight,
		Neighbours: cmp.Or(o.Neighbours, autopilot.DefaultNeighbours), PriorWeight: autopilot.DefaultPriorWeight, Relevance: autopilot.DefaultRelevance,
	}
	usd := priced && withTokens
	if usd {
		p.CostUnit = autopilot.UnitUSD
	}
	cost := func(c *cell) float64 {
		if usd {
			return c.usd
		}
		return c.ktokens
	}
	names := slices.Sorted(mapKeys(models))
	p.Model = strings.Join(names, ", ")
	p.Simulated = slices.ContainsFunc(names, isSim)

	overall := map[string]*cell{}
	byTask := map[string]map[string]autopilot.Outcome{}
	var missing []string
	for k, c := range cells {
		config, task := k[0], k[1]
		all := overall[config]
		if all == nil {
			all = &cell{}
			overall[config] = all
		}
		all.runs += c.runs
		all.successes += c.successes
		all.usd += c.usd
		all.ktokens += c.ktokens
		if byTask[task] == nil {
			byTask[task] = map[string]autopilot.Outcome{}
			if strings.TrimSpace(texts[task]) == "" {
				missing = append(missing, task)
			}
		}
		byTask[task][config] = autopilot.Outcome{Runs: c.runs, Successes: c.successes, Cost: cost(c) / float64(c.runs)}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("fit: %s no text (pass the suite the comparison ran with --suite, or drop them with --tasks)", taskList(missing))
	}
	for name, c := range overall {
		p.Candidates = append(p.Candidates, autopilot.Candidate{Name: name,
			Outcome: autopilot.Outcome{Runs: c.runs, Successes: c.successes, Cost: cost(c) / float64(c.runs)}})
	}
	slices.SortFunc(p.Candidates, func(a, b autopilot.Candidate) int {
		return cmp.Or(cmp.Compare(a.Cost, b.Cost), cmp.Compare(a.Name, b.Name))
	})
	for _, id := range slices.Sorted(mapKeys(byTask)) {
		p.Tasks = append(p.Tasks, autopilot.Task{ID: id, Text: texts[id], Outcomes: byTask[id]})
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("fit: the fitted policy is not valid (a bug): %w", err)
	}
	return p, nil
}

// verdict says whether r succeeded and whether it was scored at all: by
// sc against its task's reference when both are known, else as stored.
func verdict(r compare.Record, tasks map[string]state.Task, sc verify.Scorer) (ok, scored bool) {
	if t, known := tasks[r.TaskID]; known && sc != nil {
		v := sc.Score(r.Answer, t.Reference())
		return !v.Unscorable && v.Correct, !v.Unscorable
	}
	return compare.Succeeded(r), r.Scored
}

// isSim reports whether a model spec names the offline simulator.
func isSim(spec string) bool { return spec == "sim" || strings.HasPrefix(spec, "sim:") }

// taskList names up to five task ids: "task a has" or "tasks a, b and 3 more have".
func taskList(ids []string) string {
	if len(ids) == 1 {
		return fmt.Sprintf("task %s has", ids[0])
	}
	shown := ids[:min(5, len(ids))]
	more := ""
	if len(ids) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(ids)-len(shown))
	}
	return fmt.Sprintf("tasks %s%s have", strings.Join(shown, ", "), more)
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// readFolder returns the records of dir's results store under seeds (nil:
// the folder's own) and the tasks its tasks.html page shows (none without
// one).
func readFolder(ctx context.Context, dir string, seeds []uint64) ([]compare.Record, []state.Task, error) {
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, fmt.Errorf("%w: %s does not exist (give the folder planner compare printed as its run folder, or its --out)", ErrFolder, dir)
	case err != nil:
		return nil, nil, fmt.Errorf("%w: %w", ErrFolder, err)
	case !info.IsDir():
		return nil, nil, fmt.Errorf("%w: %s is a file, not a folder (give the folder that holds results.db)", ErrFolder, dir)
	}
	// OpenStore would create an empty store: check first.
	if _, err := os.Stat(filepath.Join(dir, "results.db")); err != nil {
		return nil, nil, fmt.Errorf("%w: %s holds no results.db (run planner compare --out %s first, or give the folder it printed)", ErrFolder, dir, dir)
	}
	if seeds == nil {
		if seeds, err = folderSeeds(dir); err != nil {
			return nil, nil, err
		}
	}
	st, err := compare.OpenStore(ctx, dir)
	if err != nil {
		return nil, nil, fmt.Errorf("fit: %s: %w", dir, err)
	}
	defer st.Close()
	recs, err := st.All(ctx, seeds...)
	if err != nil {
		return nil, nil, fmt.Errorf("fit: reading %s: %w", dir, err)
	}
	tasks, err := pageTasks(dir)
	if err != nil {
		return nil, nil, err
	}
	return recs, tasks, nil
}

// folderSeeds returns the seeds of dir's comparison, from its report.json
// (seed, repeats); seed 1 alone without one.
func folderSeeds(dir string) ([]uint64, error) {
	path := filepath.Join(dir, "report.json")
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return []uint64{compare.SeedOf(1, 0)}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	var rep struct {
		Seed    uint64 `json:"seed"`
		Repeats int    `json:"repeats"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("%w: %s: %w (run planner compare again in the folder to rewrite it)", ErrFolder, path, err)
	}
	seed := cmp.Or(rep.Seed, 1)
	seeds := make([]uint64, max(rep.Repeats, 1))
	for r := range seeds {
		seeds[r] = compare.SeedOf(seed, r)
	}
	return seeds, nil
}

// pageTasks returns the tasks (id, question) of dir's tasks.html page,
// which carries its data as JSON in a script block; none without a page.
func pageTasks(dir string) ([]state.Task, error) {
	path := filepath.Join(dir, "tasks.html")
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	const open = `<script type="application/json" id="viewer-data">`
	_, rest, ok := bytes.Cut(b, []byte(open))
	if !ok {
		return nil, nil // a page of another version: the texts come from Options.Tasks
	}
	data, _, ok := bytes.Cut(rest, []byte("</script>"))
	if !ok {
		return nil, nil
	}
	var page struct {
		Tasks []struct {
			ID       string `json:"id"`
			Question string `json:"question"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal(data, &page); err != nil {
		return nil, nil //nolint:nilerr // an unreadable page only means no fallback texts
	}
	out := make([]state.Task, 0, len(page.Tasks))
	for _, t := range page.Tasks {
		out = append(out, state.Task{ID: t.ID, Question: t.Question})
	}
	return out, nil
}
