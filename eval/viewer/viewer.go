// Package viewer renders the per-task view of a comparison: one
// self-contained HTML page (tasks.html, beside report.html in a run folder)
// with a grid of the suite's tasks against the compared columns (a config,
// or a config with one model), each cell the outcome of that column's runs
// of the task, and a click on a cell opening those runs' traces as
// timelines. It also reads one run's events back from a run folder's trace
// files (ReadTrace), for a caller, such as the HTTP server, that fetches a
// trace when it is asked for.
//
// The package knows no comparison: its caller (eval/compare, the server)
// builds a Data from what it has. Everything a page shows is model output
// or comes from files, so nothing of it is ever written into the page as
// markup: the data travels as JSON inside a <script type="application/json">
// block, '<' escaped, and the page's script builds the document with
// textContent only; a Content-Security-Policy lets only the page's own
// script run. The page is bounded: each event's text and data are clipped
// (MaxEventText), each run keeps at most MaxEventsPerRun events and the
// page at most MaxPageTraceBytes of trace text, and the page says what was
// cut.
package viewer

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"time"
	"unicode/utf8"

	"github.com/planner-engine/planner/trace"
)

// The page's bounds.
const (
	// MaxEventText is the most characters of an event's text, and of its
	// data encoded as JSON, the page keeps; the rest is cut and the cut
	// said.
	MaxEventText = 2000
	// MaxEventsPerRun is the most events of one run the page keeps: the
	// first ones, with the count of those left out.
	MaxEventsPerRun = 400
	// MaxAnswer is the most characters of an answer, a failure or a
	// question the page keeps.
	MaxAnswer = 20000
	// MaxPageTraceBytes bounds the trace text of the whole page: once the
	// events kept so far hold this many bytes, the later runs' events are
	// left out (the page says so for each such run).
	MaxPageTraceBytes = 32 << 20
)

// FileName is the name of the page WriteFile writes in a run folder.
const FileName = "tasks.html"

// ErrData marks a Data that cannot be rendered: a run that points at no
// task or no column.
var ErrData = errors.New("viewer: bad data")

// Data is what the page shows.
type Data struct {
	// Title heads the page. Default "Tasks".
	Title string `json:"title"`
	// Banner says what produced the numbers (a SIMULATED or SCRIPTED
	// model, or the real model's name); it is always shown at the top.
	Banner string `json:"banner"`
	// Tasks are the grid's rows, in suite order.
	Tasks []Task `json:"tasks"`
	// Columns are the grid's columns: one per config, or per config and
	// model.
	Columns []Column `json:"columns"`
	// Runs are the outcomes, in any order: several for a cell when the
	// comparison repeats runs, none for a cell not run (yet).
	Runs []Run `json:"runs"`
}

// Task is one row: a task of the suite.
type Task struct {
	// ID is the task's id in the suite.
	ID string `json:"id"`
	// Question is the task.
	Question string `json:"question"`
	// Reference is the expected answer; empty when the task has none.
	Reference string `json:"reference,omitempty"`
}

// Column is one column of the grid.
type Column struct {
	// Config is the pipeline's name.
	Config string `json:"config"`
	// Model is the model spec ("sim:noisy", "openai:gpt-4o"); empty when
	// it is each config's own.
	Model string `json:"model,omitempty"`
	// Label heads the column: "react", or "react @ openai:gpt-4o".
	// Default: Config, with " @ Model" when Model is set.
	Label string `json:"label"`
}

// Run is the outcome of one run of a task by a column.
type Run struct {
	// Task and Column index Data.Tasks and Data.Columns.
	Task   int `json:"task"`
	Column int `json:"column"`
	// Repeat numbers the runs of one cell (0, 1, ...).
	Repeat int `json:"repeat"`
	// Answer is the run's final answer.
	Answer string `json:"answer"`
	// Scored says whether the answer was judged; Correct is the verdict.
	Scored  bool `json:"scored"`
	Correct bool `json:"correct"`
	// Failure is the run's failure kind; empty when it ended well.
	Failure string `json:"failure,omitempty"`
	// CostUSD and LatencyMS are what the run cost and took.
	CostUSD   float64 `json:"cost_usd"`
	LatencyMS float64 `json:"latency_ms"`
	// ModelCalls and ToolCalls count the run's calls.
	ModelCalls int `json:"model_calls"`
	ToolCalls  int `json:"tool_calls"`
	// Scores holds the other scorers' scores by name (judge, code:x...);
	// nil when there are none.
	Scores map[string]float64 `json:"scores,omitempty"`
	// Trace locates the run's trace in its run folder (see ReadTrace);
	// empty without one. The page shows it; a caller that leaves Events
	// empty can fetch them with it.
	Trace string `json:"trace,omitempty"`
	// Events are the run's trace events, in order; empty when traces
	// were off or are fetched separately.
	Events []trace.Event `json:"events,omitempty"`
}

// label returns the column's label: Label, else Config with " @ Model"
// when Model is set.
func (c Column) label() string {
	switch {
	case c.Label != "":
		return c.Label
	case c.Model != "":
		return c.Config + " @ " + c.Model
	default:
		return c.Config
	}
}

// Check returns an error, wrapping ErrData, naming the first run that
// points at no task or no column.
func (d Data) Check() error {
	for i, r := range d.Runs {
		if r.Task < 0 || r.Task >= len(d.Tasks) {
			return fmt.Errorf("%w: run %d points at task %d, but there are %d tasks: build Runs with indexes into Tasks", ErrData, i, r.Task, len(d.Tasks))
		}
		if r.Column < 0 || r.Column >= len(d.Columns) {
			return fmt.Errorf("%w: run %d points at column %d, but there are %d columns: build Runs with indexes into Columns", ErrData, i, r.Column, len(d.Columns))
		}
	}
	return nil
}

//go:embed assets/page.css
var pageCSS string

//go:embed assets/page.js
var pageJS string

// pageEvent is an event as the page carries it: clipped, its data as
// JSON text.
type pageEvent struct {
	Seq       int64        `json:"seq"`
	Kind      trace.Kind   `json:"kind"`
	Node      string       `json:"node,omitempty"`
	Text      string       `json:"text,omitempty"`
	Data      string       `json:"data,omitempty"`
	Usage     *trace.Usage `json:"usage,omitempty"`
	ElapsedMS float64      `json:"elapsed_ms,omitempty"`
	// AtMS is the time since the run's first event, where both have one.
	AtMS *float64 `json:"at_ms,omitempty"`
}

// pageRun is a run as the page carries it.
type pageRun struct {
	Run
	Events []pageEvent `json:"events"`
	// EventsCut counts the events left out; Why says why.
	EventsCut int    `json:"events_cut,omitempty"`
	Why       string `json:"why,omitempty"`
}

// pageData is the JSON the page reads.
type pageData struct {
	Title   string    `json:"title"`
	Banner  string    `json:"banner"`
	Tasks   []Task    `json:"tasks"`
	Columns []Column  `json:"columns"`
	Runs    []pageRun `json:"runs"`
	Limits  struct {
		EventText    int `json:"event_text"`
		EventsPerRun int `json:"events_per_run"`
		Answer       int `json:"answer"`
	} `json:"limits"`
	// Clipped counts the texts that were cut.
	Clipped int `json:"clipped"`
}

// clipper clips texts and counts what it cut.
type clipper struct{ n int }

// clip returns s cut to at most n characters (runes), saying how many
// were left out.
func (c *clipper) clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	c.n++
	rs := []rune(s)
	return string(rs[:n]) + fmt.Sprintf(" … [%d more characters cut]", len(rs)-n)
}

// finite returns x, or 0 when JSON cannot hold it (NaN, ±Inf).
func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

// finiteScores returns scores without the values JSON cannot hold.
func finiteScores(scores map[string]float64) map[string]float64 {
	if scores == nil {
		return nil
	}
	out := make(map[string]float64, len(scores))
	for k, v := range scores {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out[k] = v
		}
	}
	return out
}

// page turns d into what the page carries, within its bounds.
func page(d Data) pageData {
	var p pageData
	var c clipper
	p.Title, p.Banner = d.Title, d.Banner
	if p.Title == "" {
		p.Title = "Tasks"
	}
	p.Limits.EventText, p.Limits.EventsPerRun, p.Limits.Answer = MaxEventText, MaxEventsPerRun, MaxAnswer
	p.Tasks = make([]Task, len(d.Tasks))
	for i, t := range d.Tasks {
		p.Tasks[i] = Task{ID: t.ID, Question: c.clip(t.Question, MaxAnswer), Reference: c.clip(t.Reference, MaxAnswer)}
	}
	p.Columns = make([]Column, len(d.Columns))
	for i, col := range d.Columns {
		col.Label = col.label()
		p.Columns[i] = col
	}
	budget := MaxPageTraceBytes
	p.Runs = make([]pageRun, len(d.Runs))
	for i, r := range d.Runs {
		events := r.Events
		r.Events = nil
		r.Answer, r.Failure = c.clip(r.Answer, MaxAnswer), c.clip(r.Failure, MaxAnswer)
		r.CostUSD, r.LatencyMS, r.Scores = finite(r.CostUSD), finite(r.LatencyMS), finiteScores(r.Scores)
		pr := pageRun{Run: r, Events: []pageEvent{}}
		if len(events) > MaxEventsPerRun {
			pr.EventsCut = len(events) - MaxEventsPerRun
			pr.Why = fmt.Sprintf("the page keeps the first %d events of a run", MaxEventsPerRun)
			events = events[:MaxEventsPerRun]
		}
		var start time.Time
		if len(events) > 0 {
			start = events[0].Time
		}
		for j, e := range events {
			pe := pageEvent{Seq: e.Seq, Kind: e.Kind, Node: c.clip(e.Node, 200), Text: c.clip(e.Text, MaxEventText), ElapsedMS: finite(e.ElapsedMS)}
			if e.Usage != nil {
				u := *e.Usage
				u.CostUSD = finite(u.CostUSD)
				pe.Usage = &u
			}
			if !start.IsZero() && !e.Time.IsZero() {
				at := float64(e.Time.Sub(start).Microseconds()) / 1000
				pe.AtMS = &at
			}
			if len(e.Data) > 0 {
				if b, err := json.Marshal(e.Data); err == nil {
					pe.Data = c.clip(string(b), MaxEventText)
				} else {
					pe.Data = "(data not shown: " + err.Error() + ")"
				}
			}
			size := len(pe.Text) + len(pe.Data) + len(pe.Node) + 64
			if size > budget {
				pr.EventsCut += len(events) - j
				pr.Why = fmt.Sprintf("the page keeps at most %d MiB of trace text; see the trace file", MaxPageTraceBytes>>20)
				break
			}
			budget -= size
			pr.Events = append(pr.Events, pe)
		}
		p.Runs[i] = pr
	}
	p.Clipped = c.n
	return p
}

// Render returns the page of d: one HTML document with its style, script
// and data inline, which loads nothing else. It fails, wrapping ErrData,
// when a run points at no task or column.
func Render(d Data) ([]byte, error) {
	if err := d.Check(); err != nil {
		return nil, err
	}
	p := page(d)
	data, err := json.Marshal(p) // escapes <, > and & as \u003c...: no "</script>" inside
	if err != nil {
		return nil, fmt.Errorf("viewer: encoding the page's data: %w", err)
	}
	if bytes.Contains(data, []byte("<")) {
		return nil, fmt.Errorf("viewer: the page's data holds a '<' after encoding") // cannot happen with encoding/json
	}
	sum := sha256.Sum256([]byte(pageJS)) // the CSP's hash: only this script runs
	csp := "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; base-uri 'none'; form-action 'none'"
	var b bytes.Buffer
	b.Grow(len(data) + len(pageJS) + len(pageCSS) + 1024)
	b.WriteString("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString("<meta http-equiv=\"Content-Security-Policy\" content=\"" + csp + "\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"referrer\" content=\"no-referrer\">\n")
	b.WriteString("<title>" + html.EscapeString(p.Title) + "</title>\n<style>\n" + pageCSS + "</style>\n</head>\n<body>\n")
	b.WriteString("<noscript><p>This page needs JavaScript to draw its grid; its data is in the script block below.</p></noscript>\n")
	b.WriteString("<div id=\"viewer\"></div>\n<script type=\"application/json\" id=\"viewer-data\">")
	b.Write(data)
	b.WriteString("</script>\n<script>")
	b.WriteString(pageJS)
	b.WriteString("</script>\n</body>\n</html>\n")
	return b.Bytes(), nil
}

// WriteFile renders d and writes it to dir/tasks.html (FileName),
// returning the file's path.
func WriteFile(dir string, d Data) (string, error) {
	b, err := Render(d)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, FileName)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return "", fmt.Errorf("viewer: writing %s: %w", path, err)
	}
	return path, nil
}
