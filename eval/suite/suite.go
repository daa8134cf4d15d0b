// Package suite loads evaluation suites into Task values, each an
// agent.Task with the gold solution a perfect agent would follow where the
// suite has one: the built-in demo suite (Demo), the built-in sorting
// suites of the Graph of Thoughts paper, generated in code (Sorting;
// Builtin resolves the built-in suites' names), the project's own JSONL
// format and the public GSM8K, Game of 24 (Tree of Thoughts), HotpotQA and
// ParallelQA (LLMCompiler) files, with slicing and limits, and names the
// scorer each format is judged by.
//
// A JSONL task may also carry its own scripted model replies (Task.Replies),
// such as a recorded run's raw model outputs, which --llm scripted plays
// back: a suite of recorded runs is a regression suite. The replies may
// differ by config (Task.ConfigReplies): recorded runs of several
// paradigms on the same tasks, each config's played back to its own runs,
// so that they replay side by side in one comparison.
//
// A JSONL or demo task with a gold solution but no reference answer gets
// the gold answer as its reference (agent.Task.Answer), so scorers, which
// read only the agent.Task, judge it against the gold solution; GSM8K tasks
// get their final answer. A Game of 24 puzzle has no single reference
// answer: its Answer stays empty and verify.Game24 checks any expression.
package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/verify"
)

// Sentinel errors. Load's errors wrap one of them (or the os error for an
// unreadable file) and name the file and the line or record at fault.
var (
	// ErrUnknownFormat means the format name is not one of the Format
	// constants, or auto-detection could not recognise the file.
	ErrUnknownFormat = errors.New("unknown suite format")
	// ErrBadRecord means a record is malformed: invalid JSON, a missing or
	// mistyped field, a duplicate task id, or an inconsistent gold program.
	ErrBadRecord = errors.New("bad suite record")
	// ErrBadSlice means a slice specification such as "900:1000" cannot be
	// read.
	ErrBadSlice = errors.New("bad slice")
	// ErrEmptySlice means a slice selects no task of a suite that has some.
	ErrEmptySlice = errors.New("empty slice")
	// ErrEmptySuite means a suite file holds no tasks: it is empty, blank,
	// or a well-formed file without records (an empty JSON array, a CSV
	// header alone).
	ErrEmptySuite = errors.New("the suite is empty")
)

// Format names a suite file format.
type Format string

// The formats Load reads.
const (
	// FormatAuto detects the format from the file's content and extension:
	// a JSON array whose first record has "branch" is ParallelQA, any other
	// JSON array HotpotQA; JSON lines whose first record looks like GSM8K
	// (only "question" and an "answer" containing "####") are GSM8K, other
	// JSON lines the project's JSONL; a .csv file, or one whose header names
	// a "Puzzles" column, is Game of 24.
	FormatAuto Format = "auto"
	// FormatJSONL is one Task per line:
	// {"id","question","answer","gold","tags","replies"}. Unknown fields
	// are ignored; a missing id becomes "<file stem>-<index>", a missing
	// answer the gold solution's. "replies" is an array of the scripted
	// model's replies (see scripted.ParseReplies: objects in a script's
	// reply format, or strings, each a reply's text), which every config
	// plays, or an object whose keys are config (pipeline) names and
	// whose values are such arrays, each the replies of that config's
	// runs, with the key "*" for the replies of every config not named:
	// {"cot": ["..."], "react": ["...", "..."], "*": ["..."]}. A malformed
	// reply is an error naming the line, the config and the reply; so is
	// an object with no key, an empty key, a key given twice, or a key
	// whose value is not a non-empty array.
	FormatJSONL Format = "jsonl"
	// FormatGSM8K is GSM8K's JSON lines {"question","answer"}; see
	// GSM8KGold for how the worked answer becomes a gold program.
	FormatGSM8K Format = "gsm8k"
	// FormatGame24 is the Tree of Thoughts CSV with a "Puzzles" column of
	// space-separated numbers such as "4 5 6 10". Puzzles of up to four
	// numbers get a Gold solution when solvable; larger ones are posed
	// without one, since solving them can take minutes.
	FormatGame24 Format = "game24"
	// FormatHotpotQA is a JSON array of {"question","answer"} records with
	// optional "_id" or "id", "type" and "level".
	FormatHotpotQA Format = "hotpotqa"
	// FormatParallelQA is LLMCompiler's JSON array of
	// {"id","question","answer","branch"} records.
	FormatParallelQA Format = "parallelqa"
)

// Formats lists every format name ParseFormat accepts, auto first.
func Formats() []Format {
	return []Format{FormatAuto, FormatJSONL, FormatGSM8K, FormatGame24, FormatHotpotQA, FormatParallelQA, FormatSorting}
}

// ParseFormat reads a format name, case-insensitively; "" means auto.
func ParseFormat(name string) (Format, error) {
	n := Format(strings.ToLower(strings.TrimSpace(name)))
	if n == "" {
		return FormatAuto, nil
	}
	for _, f := range Formats() {
		if n == f {
			return f, nil
		}
	}
	return "", fmt.Errorf("%w: %q (known: %s)", ErrUnknownFormat, name, formatList())
}

func formatList() string {
	names := make([]string, 0, len(Formats()))
	for _, f := range Formats() {
		names = append(names, string(f))
	}
	return strings.Join(names, ", ")
}

// DefaultScorer returns the scorer a format's tasks are judged by: numeric
// for GSM8K, the Game of 24 verifier for Game of 24, the sorted-list
// scorer verify.Sorting for FormatSorting, and normalised exact match with
// F1 for HotpotQA, ParallelQA and JSONL. FormatAuto and unknown names give
// an error wrapping ErrUnknownFormat; resolve auto with Detect first.
func DefaultScorer(f Format) (verify.Scorer, error) {
	switch f {
	case FormatGSM8K:
		return verify.Numeric{}, nil
	case FormatGame24:
		return verify.Game24{}, nil
	case FormatSorting:
		return verify.Sorting{}, nil
	case FormatJSONL, FormatHotpotQA, FormatParallelQA:
		return verify.ExactMatch{}, nil
	case FormatAuto:
		return nil, fmt.Errorf("%w: auto has no scorer; detect the file's format first", ErrUnknownFormat)
	default:
		return nil, fmt.Errorf("%w: %q (known: %s)", ErrUnknownFormat, f, formatList())
	}
}

// Option adjusts Load.
type Option func(*options)

type options struct {
	format     Format
	limit      int
	start, end int
	sliced     bool
}

// WithFormat sets the file format. Optional. Defaults to FormatAuto.
func WithFormat(f Format) Option {
	return func(o *options) { o.format = f }
}

// WithLimit keeps at most n tasks, the first n after any slice. Optional.
// Defaults to no limit; n <= 0 also means no limit.
func WithLimit(n int) Option {
	return func(o *options) { o.limit = n }
}

// WithSlice keeps tasks [start, end) of the file, 0-based, with Python's
// slice rules: negative indexes count from the end and indexes beyond
// either end are clamped; a range that selects no task is an error
// wrapping ErrEmptySlice. Use math.MaxInt for an open end; WithSlice(900, 1000) is the Tree of Thoughts Game of 24 test
// range. Task ids keep their position in the whole file. Optional. Defaults
// to the whole file.
func WithSlice(start, end int) Option {
	return func(o *options) { o.start, o.end, o.sliced = start, end, true }
}

// ParseSlice reads a Python-style slice "start:end" as used on the command
// line ("900:1000", "900:", ":100", "-100:"). An omitted start is 0 and an
// omitted end is math.MaxInt; pass the results to WithSlice.
func ParseSlice(spec string) (start, end int, err error) {
	a, b, found := strings.Cut(strings.TrimSpace(spec), ":")
	if !found {
		return 0, 0, fmt.Errorf("%w: %q: want start:end, e.g. 900:1000", ErrBadSlice, spec)
	}
	start, end = 0, math.MaxInt
	if a = strings.TrimSpace(a); a != "" {
		if start, err = strconv.Atoi(a); err != nil {
			return 0, 0, fmt.Errorf("%w: %q: start %q is not an integer", ErrBadSlice, spec, a)
		}
	}
	if b = strings.TrimSpace(b); b != "" {
		if end, err = strconv.Atoi(b); err != nil {
			return 0, 0, fmt.Errorf("%w: %q: end %q is not an integer", ErrBadSlice, spec, b)
		}
	}
	return start, end, nil
}

// sliceSpec writes a slice as ParseSlice reads it: an open end is left out.
func sliceSpec(start, end int) string {
	if end == math.MaxInt {
		return strconv.Itoa(start) + ":"
	}
	return strconv.Itoa(start) + ":" + strconv.Itoa(end)
}

// pyBounds resolves a Python slice [start:end) over n items.
func pyBounds(n, start, end int) (lo, hi int) {
	clamp := func(i int) int {
		if i < 0 {
			i += n
		}
		return min(max(i, 0), n)
	}
	lo, hi = clamp(start), clamp(end)
	return lo, max(lo, hi)
}

// Load reads the suite at path. The format comes from WithFormat or is
// detected; then WithSlice and WithLimit select tasks, in that order. Every
// task gets a unique id. Errors name the file and the line or record at
// fault and wrap ErrUnknownFormat or ErrBadRecord; a file without tasks
// gives ErrEmptySuite and a slice that selects none ErrEmptySlice; a
// cancelled ctx stops the load with ctx's error.
func Load(ctx context.Context, path string, opts ...Option) ([]Task, error) {
	tasks, _, err := LoadFormat(ctx, path, opts...)
	return tasks, err
}

// LoadFormat is Load that also returns the file's format: the WithFormat
// one, or the format FormatAuto was detected as, ready for DefaultScorer.
func LoadFormat(ctx context.Context, path string, opts ...Option) ([]Task, Format, error) {
	o := newOptions(opts)
	format, err := ParseFormat(string(o.format))
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("read suite: %w", err)
	}
	return loadData(ctx, path, data, format, o)
}

// loadData is LoadFormat on the contents of the file at path, read
// already; format is a Format constant.
func loadData(ctx context.Context, path string, data []byte, format Format, o options) ([]Task, Format, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, "", fmt.Errorf("%s: %w: the file has nothing in it", path, ErrEmptySuite)
	}
	var err error
	if format == FormatAuto {
		if format, err = detect(path, data); err != nil {
			return nil, "", err
		}
	}
	src := source{ctx: ctx, path: path, data: data}
	var tasks []Task
	switch format {
	case FormatJSONL, FormatSorting:
		tasks, err = src.jsonl()
	case FormatGSM8K:
		tasks, err = src.gsm8k()
	case FormatGame24:
		tasks, err = src.game24()
	case FormatHotpotQA:
		tasks, err = src.hotpotqa()
	case FormatParallelQA:
		tasks, err = src.parallelqa()
	}
	if err != nil {
		return nil, "", err
	}
	if len(tasks) == 0 {
		return nil, "", fmt.Errorf("%s: %w: the %s file holds no tasks", path, ErrEmptySuite, format)
	}
	if err := uniqueIDs(path, tasks); err != nil {
		return nil, "", err
	}
	tasks, err = o.selectTasks(tasks)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	return tasks, format, nil
}

// Select applies WithSlice and then WithLimit to tasks already in memory
// (such as the built-in demo suite), with the same rules as Load; other
// options are ignored. The result shares tasks' backing array. A slice
// that selects no task gives an error wrapping ErrEmptySlice.
func Select(tasks []Task, opts ...Option) ([]Task, error) {
	return newOptions(opts).selectTasks(tasks)
}

func newOptions(opts []Option) options {
	o := options{format: FormatAuto}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// selectTasks applies the slice, then the limit. A slice that selects
// nothing is an error that says what would have.
func (o options) selectTasks(tasks []Task) ([]Task, error) {
	if o.sliced {
		n := len(tasks)
		lo, hi := pyBounds(n, o.start, o.end)
		if lo == hi {
			if n == 0 {
				return nil, fmt.Errorf("%w: %s selects nothing: there are no tasks", ErrEmptySlice, sliceSpec(o.start, o.end))
			}
			return nil, fmt.Errorf("%w: %s selects nothing from the %d tasks (0-based start:end, end excluded; a start from 0 to %d, or -%d to -1 counting from the end, and an end after it)",
				ErrEmptySlice, sliceSpec(o.start, o.end), n, n-1, n)
		}
		tasks = tasks[lo:hi]
	}
	if o.limit > 0 && len(tasks) > o.limit {
		tasks = tasks[:o.limit]
	}
	return tasks, nil
}

// Detect returns the format FormatAuto resolves to for the file at path.
func Detect(ctx context.Context, path string) (Format, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read suite: %w", err)
	}
	return detect(path, bytes.TrimPrefix(data, []byte("\ufeff")))
}

// detect recognises a format from content first and extension second.
func detect(path string, data []byte) (Format, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	switch {
	case len(trimmed) > 0 && trimmed[0] == '[':
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		var first map[string]json.RawMessage
		if _, err := dec.Token(); err == nil && dec.More() && dec.Decode(&first) == nil {
			if _, ok := first["branch"]; ok {
				return FormatParallelQA, nil
			}
		}
		return FormatHotpotQA, nil
	case len(trimmed) > 0 && trimmed[0] == '{':
		line, _, _ := bytes.Cut(trimmed, []byte("\n"))
		var first map[string]json.RawMessage
		if json.Unmarshal(line, &first) == nil && looksGSM8K(first) {
			return FormatGSM8K, nil
		}
		return FormatJSONL, nil
	}
	header, _, _ := bytes.Cut(trimmed, []byte("\n"))
	if strings.EqualFold(filepath.Ext(path), ".csv") || bytes.Contains(bytes.ToLower(header), []byte("puzzles")) {
		return FormatGame24, nil
	}
	return "", fmt.Errorf("%s: %w: cannot tell the format from its content; pass one of %s", path, ErrUnknownFormat, formatList())
}

// looksGSM8K reports whether a JSON record has GSM8K's shape: only
// "question" and "answer", with "####" in the answer.
func looksGSM8K(rec map[string]json.RawMessage) bool {
	if len(rec) != 2 || rec["question"] == nil {
		return false
	}
	var ans string
	return json.Unmarshal(rec["answer"], &ans) == nil && strings.Contains(ans, "####")
}

// uniqueIDs rejects duplicate task ids: results are stored and resumed by id.
func uniqueIDs(path string, tasks []Task) error {
	seen := make(map[string]int, len(tasks))
	for i, t := range tasks {
		if j, dup := seen[t.ID]; dup {
			return fmt.Errorf("%s: record %d: %w: task id %q already used by record %d", path, i, ErrBadRecord, t.ID, j)
		}
		seen[t.ID] = i
	}
	return nil
}

// source is one suite file being read.
type source struct {
	ctx  context.Context
	path string
	data []byte
}

// stem is the file name without directory and extension.
func (s source) stem() string {
	base := filepath.Base(s.path)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// lineCounter maps increasing byte offsets to line numbers in time linear
// in the file size.
type lineCounter struct {
	data []byte
	off  int64
	line int
}

// at returns the 1-based line of off. An offset below the previous one is
// counted again from the start of the file.
func (c *lineCounter) at(off int64) int {
	off = min(max(off, 0), int64(len(c.data)))
	if off < c.off || c.line == 0 {
		c.off, c.line = 0, 1
	}
	c.line += bytes.Count(c.data[c.off:off], []byte("\n"))
	c.off = off
	return c.line
}

// lines calls fn for each non-blank line with its 1-based number, checking
// ctx as it goes.
func (s source) lines(fn func(lineNo int, line []byte) error) error {
	lineNo := 0
	for line := range bytes.SplitSeq(s.data, []byte("\n")) {
		lineNo++
		if lineNo%256 == 0 {
			if err := s.ctx.Err(); err != nil {
				return err
			}
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if err := fn(lineNo, line); err != nil {
			return err
		}
	}
	return nil
}

// records decodes the JSON array in the file one element at a time, calling
// fn with each element's index and line.
func (s source) records(fn func(index, line int, raw json.RawMessage) error) error {
	dec := json.NewDecoder(bytes.NewReader(s.data))
	lines := &lineCounter{data: s.data}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return fmt.Errorf("%s:1: %w: want a JSON array of records", s.path, ErrBadRecord)
	}
	for index := 0; dec.More(); index++ {
		if index%256 == 0 {
			if err := s.ctx.Err(); err != nil {
				return err
			}
		}
		start := dec.InputOffset()
		for start < int64(len(s.data)) && strings.IndexByte(" \t\r\n,", s.data[start]) >= 0 {
			start++
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			line := lines.at(start)
			var syn *json.SyntaxError
			if errors.As(err, &syn) {
				line = lines.at(syn.Offset)
			}
			return fmt.Errorf("%s:%d: record %d: %w: %w", s.path, line, index, ErrBadRecord, err)
		}
		if err := fn(index, lines.at(start), raw); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("%s:%d: %w: array not closed: %w", s.path, lines.at(dec.InputOffset()), ErrBadRecord, err)
	}
	return nil
}

// badRecord formats an error for record index at line.
func (s source) badRecord(line, index int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: record %d: %w: %s", s.path, line, index, ErrBadRecord, fmt.Sprintf(format, args...))
}

// jsonl reads the project's own format.
func (s source) jsonl() ([]Task, error) {
	var tasks []Task
	err := s.lines(func(lineNo int, line []byte) error {
		index := len(tasks)
		var rec struct {
			Task
			// Replies shadows Task.Replies: a list or an object of lists
			// by config, read by parseTaskReplies.
			Replies json.RawMessage `json:"replies"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			return fmt.Errorf("%s:%d: record %d: %w: %w", s.path, lineNo, index, ErrBadRecord, err)
		}
		t := rec.Task
		var err error
		if t.Replies, t.ConfigReplies, err = parseTaskReplies(rec.Replies); err != nil {
			task := ""
			if t.ID != "" {
				task = fmt.Sprintf(" (task %q)", t.ID)
			}
			return fmt.Errorf("%s:%d: record %d%s: %w: %w", s.path, lineNo, index, task, ErrBadRecord, err)
		}
		if strings.TrimSpace(t.Question) == "" {
			return s.badRecord(lineNo, index, `missing "question"`)
		}
		if t.ID == "" {
			t.ID = s.stem() + "-" + strconv.Itoa(index)
		}
		if t.Gold != nil {
			if err := checkGold(t.Gold); err != nil {
				return s.badRecord(lineNo, index, "gold program: %v", err)
			}
		}
		answerFromGold(&t)
		tasks = append(tasks, t)
		return nil
	})
	return tasks, err
}

// parseTaskReplies reads a JSONL task's "replies": a list, the replies of
// every config, or an object of lists by config name, whose key
// scripted.AnyConfig holds the replies of every config not named. Absent
// or null, it is no replies. Errors name the config and the reply.
func parseTaskReplies(raw json.RawMessage) (all []scripted.Reply, byConfig map[string][]scripted.Reply, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil, nil
	}
	const want = `want a list of replies, which every config plays, or an object of such lists by config name ("*" for every config not named)`
	switch raw[0] {
	case '[':
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, nil, fmt.Errorf("replies: %w", err)
		}
		if len(list) == 0 {
			return nil, nil, nil
		}
		if all, err = scripted.ParseReplies(list); err != nil {
			return nil, nil, fmt.Errorf("replies: %w", err)
		}
		return all, nil, nil
	case '{':
	default:
		return nil, nil, fmt.Errorf("replies: %s, not %s", want, jsonKind(raw))
	}
	keys, values, err := objectMembers(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("replies: %w", err)
	}
	if len(keys) == 0 {
		return nil, nil, fmt.Errorf(`replies: the object names no config; %s, e.g. {"cot": ["..."], "react": ["..."]}`, want)
	}
	for i, key := range keys {
		if strings.TrimSpace(key) == "" {
			return nil, nil, fmt.Errorf(`replies: key %d of the object is empty; give a config's pipeline name (its name:), or "*" for every config not named`, i+1)
		}
		who := fmt.Sprintf("config %q", key)
		if key == scripted.AnyConfig {
			who = `"*" (every config not named)`
		}
		v := bytes.TrimSpace(values[i])
		var list []json.RawMessage
		if len(v) == 0 || v[0] != '[' {
			return nil, nil, fmt.Errorf("replies for %s: want a list of that config's replies, not %s", who, jsonKind(v))
		}
		if err := json.Unmarshal(v, &list); err != nil {
			return nil, nil, fmt.Errorf("replies for %s: %w", who, err)
		}
		if len(list) == 0 {
			return nil, nil, fmt.Errorf("replies for %s: the list is empty; give the replies recorded for it, or remove the key", who)
		}
		replies, err := scripted.ParseReplies(list)
		if err != nil {
			return nil, nil, fmt.Errorf("replies for %s: %w", who, err)
		}
		if key == scripted.AnyConfig {
			all = replies
			continue
		}
		if byConfig == nil {
			byConfig = map[string][]scripted.Reply{}
		}
		byConfig[key] = replies
	}
	return all, byConfig, nil
}

// objectMembers returns the keys of the JSON object raw and their raw
// values, in order. A key given twice is an error.
func objectMembers(raw json.RawMessage) (keys []string, values []json.RawMessage, err error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // the '{' the caller saw
		return nil, nil, err
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		key, _ := tok.(string) // object keys are strings
		if seen[key] {
			return nil, nil, fmt.Errorf("config %q is given twice; give each config's replies once", key)
		}
		seen[key] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, fmt.Errorf("config %q: %w", key, err)
		}
		keys, values = append(keys, key), append(values, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	return keys, values, nil
}

// jsonKind names the kind of JSON value raw starts, for messages.
func jsonKind(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "a list"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// checkGold verifies a gold program's step ids are unique, that every
// dependency, declared or referenced as #E<id>, names an earlier step, that
// a declared type is one of GoldTypes and a memory prior lies in [0,1].
func checkGold(g *Gold) error {
	if g.Type != "" && !slices.Contains(GoldTypes(), g.Type) {
		return fmt.Errorf("unknown type %q (known: %s); leave it out to infer it from the steps", g.Type, strings.Join(GoldTypes(), ", "))
	}
	if g.Memory != nil && !(*g.Memory >= 0 && *g.Memory <= 1) {
		return fmt.Errorf("memory prior %v is outside [0,1]; give the chance that a model knows the answer without looking it up", *g.Memory)
	}
	seen := map[string]bool{}
	for i, st := range g.Steps {
		if st.ID == "" {
			return fmt.Errorf("step %d has no id", i+1)
		}
		if seen[st.ID] {
			return fmt.Errorf("step id %q is used twice", st.ID)
		}
		for _, d := range slices.Concat(st.DependsOn, plan.References(st.Input)) {
			if !seen[d] {
				return fmt.Errorf("step %q depends on %q, which is not an earlier step", st.ID, d)
			}
		}
		seen[st.ID] = true
	}
	return nil
}
