package compare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Report is a comparison's result.
type Report struct {
	// Model says which model produced the numbers, labelled by kind.
	Model string `json:"model"`
	// Simulated is true when the sim oracle produced them.
	Simulated bool `json:"simulated"`
	// Scripted is true when the scripted model produced them.
	Scripted    bool            `json:"scripted"`
	Suite       string          `json:"suite"`
	Seed        uint64          `json:"seed"`
	Tasks       int             `json:"tasks"`
	Ran         int             `json:"ran"`
	Reused      int             `json:"reused"`
	WallSeconds float64         `json:"wall_seconds"`
	GeneratedAt time.Time       `json:"generated_at"`
	Configs     []ConfigSummary `json:"configs"`
}

// ConfigSummary aggregates one config's runs. Token, call and cost figures
// are totals; the Mean methods divide by Runs.
type ConfigSummary struct {
	Config           string         `json:"config"`
	Runs             int            `json:"runs"`
	Scored           int            `json:"scored"`
	Correct          int            `json:"correct"`
	Completed        int            `json:"completed"`
	SuccessRate      float64        `json:"success_rate"`
	EM               float64        `json:"em"`
	F1               float64        `json:"f1"`
	HasF1            bool           `json:"has_f1"`
	ModelCalls       int            `json:"model_calls"`
	PromptTokens     int            `json:"prompt_tokens"`
	CompletionTokens int            `json:"completion_tokens"`
	ToolCalls        int            `json:"tool_calls"`
	Estimated        bool           `json:"tokens_estimated"`
	CostUSD          float64        `json:"cost_usd"`
	LatencyP50MS     float64        `json:"latency_p50_ms"`
	LatencyP95MS     float64        `json:"latency_p95_ms"`
	Failures         map[string]int `json:"failures"`

	withF1 int
}

func (s ConfigSummary) mean(total int) float64 {
	if s.Runs == 0 {
		return 0
	}
	return float64(total) / float64(s.Runs)
}

// MeanTokens is the mean prompt+completion tokens per run.
func (s ConfigSummary) MeanTokens() float64 { return s.mean(s.PromptTokens + s.CompletionTokens) }

// FailureList renders failures as "kind:n" sorted by kind.
func (s ConfigSummary) FailureList() string {
	keys := make([]string, 0, len(s.Failures))
	for k := range s.Failures {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s:%d", k, s.Failures[k])
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

// WriteTable writes the terminal table.
func (r *Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "%s\n", r.Banner())
	fmt.Fprintf(w, "suite %s: %d tasks, seed %d, %d runs (%d reused from an earlier run), %.1fs\n\n", r.Suite, r.Tasks, r.Seed, r.Ran+r.Reused, r.Reused, r.WallSeconds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "config\tsuccess\tEM\tF1\tcalls/task\tprompt tok/task\tcompl tok/task\ttools/task\tp50 ms\tp95 ms\tcost $\tfailures\t")
	for _, s := range r.Configs {
		f1 := "-"
		if s.HasF1 {
			f1 = fmt.Sprintf("%.3f", s.F1)
		}
		fmt.Fprintf(tw, "%s\t%.1f%%\t%.3f\t%s\t%.1f\t%.0f\t%.0f\t%.1f\t%.0f\t%.0f\t%.4f\t%s\t\n", s.Config, 100*s.SuccessRate, s.EM, f1,
			s.mean(s.ModelCalls), s.mean(s.PromptTokens), s.mean(s.CompletionTokens), s.mean(s.ToolCalls),
			s.LatencyP50MS, s.LatencyP95MS, s.CostUSD, s.FailureList())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range r.Configs {
		if s.Estimated {
			fmt.Fprintln(w, "\ntoken counts marked estimated where the model reported none (tokenizer estimate)")
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
	b.WriteString("| config | success | EM | F1 | model calls/task | prompt tokens/task | completion tokens/task | tool calls/task | p50 ms | p95 ms | cost $ | failures |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, s := range r.Configs {
		f1 := "–"
		if s.HasF1 {
			f1 = fmt.Sprintf("%.3f", s.F1)
		}
		fmt.Fprintf(&b, "| %s | %.1f%% | %.3f | %s | %.1f | %.0f | %.0f | %.1f | %.0f | %.0f | %.4f | %s |\n", s.Config, 100*s.SuccessRate, s.EM, f1,
			s.mean(s.ModelCalls), s.mean(s.PromptTokens), s.mean(s.CompletionTokens), s.mean(s.ToolCalls), s.LatencyP50MS, s.LatencyP95MS, s.CostUSD, s.FailureList())
	}
	b.WriteString("\nFailure kinds: parse (unparseable model output), loop (repeat breaker or step limit), budget (iteration budget ran out; answer from the finalizer), tool, provider (model call failed), timeout, plan (invalid plan after retries), wrong (finished with a wrong answer).\n")
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
	var md bytes.Buffer
	_ = r.WriteMarkdown(&md)
	var out bytes.Buffer
	err = pageTmpl.Execute(&out, map[string]any{
		"R": r, "Banner": r.Banner(), "Scatter": template.HTML(scatter), "Latency": template.HTML(bars),
	})
	if err != nil {
		return nil, fmt.Errorf("rendering report.html: %w", err)
	}
	return out.Bytes(), nil
}

func svgOf(p *plot.Plot) (string, error) {
	wt, err := p.WriterTo(7*vg.Inch, 4*vg.Inch, "svg")
	if err != nil {
		return "", fmt.Errorf("drawing chart: %w", err)
	}
	var b bytes.Buffer
	if _, err := wt.WriteTo(&b); err != nil {
		return "", fmt.Errorf("drawing chart: %w", err)
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i > 0 {
		s = s[i:] // drop the XML prolog for inline use
	}
	return s, nil
}

func (r *Report) scatterSVG() (string, error) {
	p := plot.New()
	p.Title.Text = "Success rate vs tokens per task"
	p.X.Label.Text = "mean tokens per task (prompt + completion)"
	p.Y.Label.Text = "success rate (%)"
	p.Y.Min, p.Y.Max = 0, 100
	for i, s := range r.Configs {
		pts := plotter.XYs{{X: s.MeanTokens(), Y: 100 * s.SuccessRate}}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return "", err
		}
		sc.GlyphStyle.Color = plotutil.Color(i)
		sc.GlyphStyle.Shape = plotutil.Shape(i)
		sc.GlyphStyle.Radius = vg.Points(5)
		p.Add(sc)
		labels, err := plotter.NewLabels(plotter.XYLabels{XYs: pts, Labels: []string{s.Config}})
		if err != nil {
			return "", err
		}
		labels.Offset = vg.Point{X: vg.Points(6), Y: vg.Points(2)}
		p.Add(labels)
	}
	p.X.Min = 0
	return svgOf(p)
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
<p>Model: {{.R.Model}} · suite: {{.R.Suite}} ({{.R.Tasks}} tasks) · seed {{.R.Seed}} · wall time {{printf "%.1f" .R.WallSeconds}} s</p>
<table><tr><th>config</th><th>success</th><th>EM</th><th>F1</th><th>model calls</th><th>prompt tokens</th><th>completion tokens</th><th>tool calls</th><th>p50 ms</th><th>p95 ms</th><th>cost $</th><th>failures</th></tr>
{{range .R.Configs}}<tr><td>{{.Config}}</td><td>{{printf "%.1f%%" (pct .SuccessRate)}}</td><td>{{printf "%.3f" .EM}}</td><td>{{if .HasF1}}{{printf "%.3f" .F1}}{{else}}–{{end}}</td><td>{{.ModelCalls}}</td><td>{{.PromptTokens}}</td><td>{{.CompletionTokens}}</td><td>{{.ToolCalls}}</td><td>{{printf "%.0f" .LatencyP50MS}}</td><td>{{printf "%.0f" .LatencyP95MS}}</td><td>{{printf "%.4f" .CostUSD}}</td><td>{{.FailureList}}</td></tr>
{{end}}</table>
<p>Totals over all runs of each config. Failure kinds: parse, loop, budget, tool, provider, timeout, plan, wrong.</p>
<div class="charts">{{.Scatter}}{{.Latency}}</div>
</body></html>
`))
