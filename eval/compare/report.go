package compare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Report is a comparison's result.
type Report struct {
	// Model says which model produced the numbers, labelled by kind.
	Model string `json:"model"`
	// Simulated is true when a simulated model (llm.KindSimulated, the
	// oracle of package eval/sim) produced them.
	Simulated bool `json:"simulated"`
	// Scripted is true when a scripted model (llm.KindScripted) produced
	// them.
	Scripted bool `json:"scripted"`
	// Suite names the task suite.
	Suite string `json:"suite"`
	// Seed is the comparison's seed.
	Seed uint64 `json:"seed"`
	// Tasks is the number of tasks in the suite.
	Tasks int `json:"tasks"`
	// Ran counts runs executed by this invocation.
	Ran int `json:"ran"`
	// Reused counts results taken from the store of an earlier invocation.
	Reused int `json:"reused"`
	// WallSeconds is the wall time of this invocation's runs, from the first
	// start to the last result stored, in seconds.
	WallSeconds float64 `json:"wall_seconds"`
	// GeneratedAt is when the report was built (UTC).
	GeneratedAt time.Time `json:"generated_at"`
	// Configs holds one summary per config, in the order given.
	Configs []ConfigSummary `json:"configs"`
}

// FailureLegend explains the failure kinds and how reports count them.
const FailureLegend = "Failure kinds: parse (unparseable model output), loop (repeat breaker or step limit), " +
	"budget (iteration budget ran out; answer from the finalizer), tool (a tool call failed), " +
	"provider (model call failed after retries), timeout, plan (no valid plan after retries), " +
	"error (unclassified run error), wrong (finished normally with a wrong answer). " +
	"failures counts only runs that did not succeed; a run that met one of these but still " +
	"answered correctly (for example a solver answering despite a failed step) is counted under " +
	"recovered instead."

// ConfigSummary aggregates one config's runs. Token, call and cost figures
// are totals; the table divides them by Runs.
type ConfigSummary struct {
	// Config is the pipeline name.
	Config string `json:"config"`
	// Runs counts the config's results.
	Runs int `json:"runs"`
	// Scored counts results the scorer could judge.
	Scored int `json:"scored"`
	// Correct counts scored results judged correct.
	Correct int `json:"correct"`
	// Completed counts runs whose engine state was complete.
	Completed int `json:"completed"`
	// SuccessRate is Correct / Scored (0 when nothing was scored).
	SuccessRate float64 `json:"success_rate"`
	// EM is the mean exact match over scored results.
	EM float64 `json:"em"`
	// F1 is the mean token F1 over results whose scorer gives F1.
	F1 float64 `json:"f1"`
	// HasF1 is true when any result has an F1.
	HasF1 bool `json:"has_f1"`
	// ModelCalls is the total number of model calls.
	ModelCalls int `json:"model_calls"`
	// PromptTokens is the total of prompt tokens.
	PromptTokens int `json:"prompt_tokens"`
	// CompletionTokens is the total of completion tokens.
	CompletionTokens int `json:"completion_tokens"`
	// ToolCalls is the total number of tool calls.
	ToolCalls int `json:"tool_calls"`
	// Estimated is true when some token counts are tokenizer estimates.
	Estimated bool `json:"tokens_estimated"`
	// CostUSD is the total estimated cost in US dollars.
	CostUSD float64 `json:"cost_usd"`
	// LatencyP50MS is the median run latency in milliseconds.
	LatencyP50MS float64 `json:"latency_p50_ms"`
	// LatencyP95MS is the 95th percentile run latency in milliseconds.
	LatencyP95MS float64 `json:"latency_p95_ms"`
	// Failures counts unsuccessful runs by failure kind.
	Failures map[string]int `json:"failures"`
	// Recovered counts successful runs that met a failure, by kind.
	Recovered map[string]int `json:"recovered"`
}

func (s ConfigSummary) mean(total int) float64 {
	if s.Runs == 0 {
		return 0
	}
	return float64(total) / float64(s.Runs)
}

// MeanTokens is the mean prompt+completion tokens per run.
func (s ConfigSummary) MeanTokens() float64 { return s.mean(s.PromptTokens + s.CompletionTokens) }

// FailureList renders Failures as "kind:n" sorted by kind, or "-".
func (s ConfigSummary) FailureList() string { return countList(s.Failures) }

// RecoveredList renders Recovered as "kind:n" sorted by kind, or "-".
func (s ConfigSummary) RecoveredList() string { return countList(s.Recovered) }

func countList(counts map[string]int) string {
	keys := make([]string, 0, len(counts))
	for k, n := range counts {
		if n > 0 {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s:%d", k, counts[k])
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

// Banner is the line that says what produced the numbers.
func (r *Report) Banner() string {
	switch {
	case r.Simulated:
		return "SIMULATED: these numbers come from the sim oracle model, which follows each task's gold solution and injects faults. They measure the engine's recovery and cost structure, not the quality of any language model."
	case r.Scripted:
		return "SCRIPTED: these numbers come from a scripted model replaying fixed replies, not a real language model."
	}
	return "Model: " + r.Model
}

// MarshalJSON writes the report with its banner first, so report.json
// says what produced the numbers as plainly as the other outputs do.
func (r Report) MarshalJSON() ([]byte, error) {
	type plain Report // without this method
	return json.Marshal(struct {
		Banner string `json:"banner"`
		plain
	}{Banner: r.Banner(), plain: plain(r)})
}

// WriteTable writes the terminal table.
func (r *Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "%s\n", r.Banner())
	fmt.Fprintf(w, "suite %s: %d tasks, seed %d, %d runs (%d reused from an earlier run), %.1fs\n\n", r.Suite, r.Tasks, r.Seed, r.Ran+r.Reused, r.Reused, r.WallSeconds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "config\tsuccess\tEM\tF1\tcalls/task\tprompt tok/task\tcompl tok/task\ttools/task\tp50 ms\tp95 ms\tcost $\tfailures\trecovered\t")
	for _, s := range r.Configs {
		f1 := "-"
		if s.HasF1 {
			f1 = fmt.Sprintf("%.3f", s.F1)
		}
		fmt.Fprintf(tw, "%s\t%.1f%%\t%.3f\t%s\t%.1f\t%.0f\t%.0f\t%.1f\t%.0f\t%.0f\t%.4f\t%s\t%s\t\n", s.Config, 100*s.SuccessRate, s.EM, f1,
			s.mean(s.ModelCalls), s.mean(s.PromptTokens), s.mean(s.CompletionTokens), s.mean(s.ToolCalls),
			s.LatencyP50MS, s.LatencyP95MS, s.CostUSD, s.FailureList(), s.RecoveredList())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nfailures: unsuccessful runs by kind; recovered: correct runs that met a failure on the way (see report.md)")
	for _, s := range r.Configs {
		if s.Estimated {
			fmt.Fprintln(w, "token counts marked estimated where the model reported none (tokenizer estimate)")
			break
		}
	}
	return nil
}

// WriteMarkdown writes report.md content.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Comparison report\n\n> %s\n\n", r.Banner())
	fmt.Fprintf(&b, "- model: %s\n- suite: %s (%d tasks)\n- seed: %d\n- wall time: %.1fs (%d runs, %d reused)\n- generated: %s\n\n",
		r.Model, r.Suite, r.Tasks, r.Seed, r.WallSeconds, r.Ran+r.Reused, r.Reused, r.GeneratedAt.Format(time.RFC3339))
	b.WriteString("| config | success | EM | F1 | model calls/task | prompt tokens/task | completion tokens/task | tool calls/task | p50 ms | p95 ms | cost $ | failures | recovered |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n")
	for _, s := range r.Configs {
		f1 := "–"
		if s.HasF1 {
			f1 = fmt.Sprintf("%.3f", s.F1)
		}
		fmt.Fprintf(&b, "| %s | %.1f%% | %.3f | %s | %.1f | %.0f | %.0f | %.1f | %.0f | %.0f | %.4f | %s | %s |\n", s.Config, 100*s.SuccessRate, s.EM, f1,
			s.mean(s.ModelCalls), s.mean(s.PromptTokens), s.mean(s.CompletionTokens), s.mean(s.ToolCalls), s.LatencyP50MS, s.LatencyP95MS, s.CostUSD,
			s.FailureList(), s.RecoveredList())
	}
	b.WriteString("\n" + FailureLegend + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteFiles writes report.md, report.json and report.html into dir and
// returns the HTML path.
func (r *Report) WriteFiles(dir string) (string, error) {
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.md"), md.Bytes(), 0o644); err != nil {
		return "", fmt.Errorf("writing report.md: %w", err)
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.json"), append(js, '\n'), 0o644); err != nil {
		return "", fmt.Errorf("writing report.json: %w", err)
	}
	page, err := r.HTML()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "report.html")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		return "", fmt.Errorf("writing report.html: %w", err)
	}
	return path, nil
}

// HTML renders a self-contained page: no scripts, no external assets; the
// charts are inline SVG drawn with gonum/plot.
func (r *Report) HTML() ([]byte, error) {
	scatter, err := r.scatterSVG()
	if err != nil {
		return nil, err
	}
	bars, err := r.latencySVG()
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	err = pageTmpl.Execute(&out, map[string]any{
		"R": r, "Banner": r.Banner(), "Legend": FailureLegend, "Scatter": template.HTML(scatter), "Latency": template.HTML(bars),
	})
	if err != nil {
		return nil, fmt.Errorf("rendering report.html: %w", err)
	}
	return out.Bytes(), nil
}

// chartWidth and chartHeight are the size of each chart's plot area.
const (
	chartWidth  = 7 * vg.Inch
	chartHeight = 4 * vg.Inch
)

// svgOf renders a plot as an SVG element for inline use.
func svgOf(p *plot.Plot) (string, error) {
	return svgDraw(chartWidth, chartHeight, p.Draw)
}

// svgDraw renders what paint draws on a w × h canvas as an SVG element
// for inline use: no XML prolog and no namespace declarations, so the page
// holds no URL at all.
func svgDraw(w, h vg.Length, paint func(draw.Canvas)) (string, error) {
	c := vgsvg.New(w, h)
	paint(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", fmt.Errorf("drawing chart: %w", err)
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i > 0 {
		s = s[i:]
	}
	if end := strings.IndexByte(s, '>'); end > 0 {
		s = svgNamespace.ReplaceAllString(s[:end], "") + s[end:]
	}
	return s, nil
}

// svgNamespace matches the xmlns attributes of an <svg> start tag.
var svgNamespace = regexp.MustCompile(`\s+xmlns(:\w+)?="[^"]*"`)

// glyphStyle gives config i a colour and shape that no other of the first
// 49 configs shares.
func glyphStyle(i int) draw.GlyphStyle {
	n := len(plotutil.DefaultColors)
	return draw.GlyphStyle{Color: plotutil.Color(i), Shape: plotutil.Shape(i + i/n), Radius: vg.Points(5)}
}

// scatterSVG draws success rate against mean tokens, one glyph per config,
// named in a legend to the right of the plot (labels next to the points
// would overlap where configs tie).
func (r *Report) scatterSVG() (string, error) {
	p := plot.New()
	p.Title.Text = "Success rate vs tokens per task"
	p.X.Label.Text = "mean tokens per task (prompt + completion)"
	p.Y.Label.Text = "success rate (%)"
	p.Y.Min, p.Y.Max = 0, 100
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	var legendWidth vg.Length
	maxX := 0.0
	for i, s := range r.Configs {
		maxX = max(maxX, s.MeanTokens())
		sc, err := plotter.NewScatter(plotter.XYs{{X: s.MeanTokens(), Y: 100 * s.SuccessRate}})
		if err != nil {
			return "", err
		}
		sc.GlyphStyle = glyphStyle(i)
		p.Add(sc)
		legend.Add(s.Config, sc)
		legendWidth = max(legendWidth, legend.TextStyle.Width(s.Config))
	}
	p.X.Min = 0
	if maxX > 0 {
		p.X.Max = maxX * 1.05 // keep the rightmost glyph off the frame
	}
	if len(r.Configs) > 0 {
		legendWidth += legend.ThumbnailWidth + 2*legend.TextStyle.Width(" ")
	}
	titleHeight := p.Title.TextStyle.Height(p.Title.Text) + p.Title.Padding
	return svgDraw(chartWidth+legendWidth, chartHeight, func(c draw.Canvas) {
		p.Draw(draw.Crop(c, 0, -legendWidth, 0, 0))
		legend.Draw(draw.Crop(c, chartWidth+legend.TextStyle.Width(" "), 0, 0, -titleHeight))
	})
}

func (r *Report) latencySVG() (string, error) {
	p := plot.New()
	p.Title.Text = "Latency per task (ms)"
	p.Y.Label.Text = "ms"
	var p50, p95 plotter.Values
	names := make([]string, len(r.Configs))
	for i, s := range r.Configs {
		p50 = append(p50, s.LatencyP50MS)
		p95 = append(p95, s.LatencyP95MS)
		names[i] = s.Config
	}
	if len(names) == 0 {
		return svgOf(p)
	}
	w := vg.Points(12)
	b50, err := plotter.NewBarChart(p50, w)
	if err != nil {
		return "", err
	}
	b50.Color = plotutil.Color(0)
	b50.Offset = -w / 2
	b95, err := plotter.NewBarChart(p95, w)
	if err != nil {
		return "", err
	}
	b95.Color = plotutil.Color(1)
	b95.Offset = w / 2
	p.Add(b50, b95)
	p.Legend.Add("p50", b50)
	p.Legend.Add("p95", b95)
	p.Legend.Top = true
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = 0.5
	p.X.Tick.Label.XAlign = draw.XRight
	return svgOf(p)
}

var pageTmpl = template.Must(template.New("report").Funcs(template.FuncMap{"pct": func(f float64) float64 { return 100 * f }}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>planner comparison report</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1100px}
.banner{padding:.8em 1em;border-left:6px solid #c77800;background:#fff4e0;margin-bottom:1em}
table{border-collapse:collapse;font-size:14px}th,td{border:1px solid #ccc;padding:4px 8px;text-align:right}
th:first-child,td:first-child,td:last-child{text-align:left}.charts svg{max-width:100%;height:auto;margin:1em 0}
</style></head><body>
<h1>Comparison report</h1>
<div class="banner">{{.Banner}}</div>
<p>Model: {{.R.Model}} · suite: {{.R.Suite}} ({{.R.Tasks}} tasks) · seed {{.R.Seed}} · {{.R.Ran}} runs in {{printf "%.1f" .R.WallSeconds}} s, {{.R.Reused}} reused from an earlier run</p>
<table><tr><th>config</th><th>success</th><th>EM</th><th>F1</th><th>model calls</th><th>prompt tokens</th><th>completion tokens</th><th>tool calls</th><th>p50 ms</th><th>p95 ms</th><th>cost $</th><th>failures</th><th>recovered</th></tr>
{{range .R.Configs}}<tr><td>{{.Config}}</td><td>{{printf "%.1f%%" (pct .SuccessRate)}}</td><td>{{printf "%.3f" .EM}}</td><td>{{if .HasF1}}{{printf "%.3f" .F1}}{{else}}–{{end}}</td><td>{{.ModelCalls}}</td><td>{{.PromptTokens}}</td><td>{{.CompletionTokens}}</td><td>{{.ToolCalls}}</td><td>{{printf "%.0f" .LatencyP50MS}}</td><td>{{printf "%.0f" .LatencyP95MS}}</td><td>{{printf "%.4f" .CostUSD}}</td><td>{{.FailureList}}</td><td>{{.RecoveredList}}</td></tr>
{{end}}</table>
<p>Calls, tokens, tool calls and cost are totals over all runs of each config. {{.Legend}}</p>
<div class="charts">{{.Scatter}}{{.Latency}}</div>
</body></html>
`))
