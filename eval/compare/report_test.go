package compare_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/planner-engine/planner/eval/compare"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sampleReport summarises a few hand-made records of two configs.
func sampleReport(simulated, scripted bool) *compare.Report {
	records := []compare.Record{
		{Config: "react", TaskID: "t1", Scored: true, Correct: true, EM: 1, ModelCalls: 3, PromptTokens: 900, CompletionTokens: 60, ToolCalls: 2, LatencyMS: 30},
		{Config: "react", TaskID: "t2", Scored: true, Failure: "parse", ModelCalls: 4, PromptTokens: 1200, CompletionTokens: 80, ToolCalls: 2, LatencyMS: 45},
		{Config: "rewoo", TaskID: "t1", Scored: true, Correct: true, EM: 1, Failure: "tool", ModelCalls: 2, PromptTokens: 700, CompletionTokens: 40, ToolCalls: 3, LatencyMS: 20},
		{Config: "rewoo", TaskID: "t2", Scored: true, Correct: true, EM: 1, ModelCalls: 2, PromptTokens: 650, CompletionTokens: 40, ToolCalls: 3, LatencyMS: 25},
	}
	rep := compare.Summarize(records, []string{"react", "rewoo"})
	rep.Simulated, rep.Scripted = simulated, scripted
	rep.Model = "openai: gpt-4o-mini"
	if simulated {
		rep.Model = "sim: SIMULATED oracle"
	}
	rep.Suite, rep.Seed, rep.Tasks, rep.Ran, rep.WallSeconds = "demo", 1, 2, 4, 0.5
	rep.GeneratedAt = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return rep
}

type rendered struct{ table, markdown, json, html string }

func render(t *testing.T, rep *compare.Report) rendered {
	t.Helper()
	var table, md bytes.Buffer
	require.NoError(t, rep.WriteTable(&table))
	require.NoError(t, rep.WriteMarkdown(&md))
	js, err := json.Marshal(rep)
	require.NoError(t, err)
	page, err := rep.HTML()
	require.NoError(t, err)
	return rendered{table.String(), md.String(), string(js), string(page)}
}

func TestEveryOutputCarriesTheBannerOfWhatProducedTheNumbers(t *testing.T) {
	tests := []struct {
		name                string
		simulated, scripted bool
		want                string
		absent              []string
	}{
		{"simulated", true, false, "SIMULATED: these numbers come from the sim oracle model", []string{"SCRIPTED"}},
		{"scripted", false, true, "SCRIPTED: these numbers come from a scripted model", []string{"SIMULATED"}},
		{"real model", false, false, "Model: openai: gpt-4o-mini", []string{"SIMULATED", "SCRIPTED"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := render(t, sampleReport(tt.simulated, tt.scripted))
			for name, text := range map[string]string{"table": out.table, "markdown": out.markdown, "html": out.html} {
				assert.Contains(t, text, tt.want, name)
				for _, a := range tt.absent {
					assert.NotContains(t, text, a, name)
				}
			}
			var js struct {
				Banner    string `json:"banner"`
				Simulated bool   `json:"simulated"`
				Configs   []struct {
					Config    string         `json:"config"`
					Failures  map[string]int `json:"failures"`
					Recovered map[string]int `json:"recovered"`
				} `json:"configs"`
			}
			require.NoError(t, json.Unmarshal([]byte(out.json), &js))
			assert.True(t, strings.HasPrefix(js.Banner, tt.want), js.Banner)
			assert.Equal(t, tt.simulated, js.Simulated)
			require.Len(t, js.Configs, 2)
			assert.Equal(t, map[string]int{"parse": 1}, js.Configs[0].Failures)
			assert.Equal(t, map[string]int{"tool": 1}, js.Configs[1].Recovered)
		})
	}
}

func TestTableAndMarkdownShowFailuresAndRecoveredWithTheLegend(t *testing.T) {
	out := render(t, sampleReport(true, false))
	for name, text := range map[string]string{"table": out.table, "markdown": out.markdown} {
		assert.Contains(t, text, "recovered", name)
		assert.Regexp(t, `react\b.*parse:1\s.*-`, text, name)
		assert.Regexp(t, `rewoo\b.*-\s.*tool:1`, text, name)
	}
	assert.Contains(t, out.markdown, compare.FailureLegend)
	assert.Contains(t, out.markdown, "| react | 0.500 |")
	assert.Contains(t, out.markdown, "| rewoo | 1.000 |")
}

var (
	svgOpen  = regexp.MustCompile(`<svg[\s>]`)
	urlRef   = regexp.MustCompile(`(?i)https?:|\b(src|href)\s*=|url\(`)
	scriptEl = regexp.MustCompile(`(?i)<script`)
)

func TestHTMLReportIsSelfContainedWithTwoCharts(t *testing.T) {
	for _, simulated := range []bool{true, false} {
		page := render(t, sampleReport(simulated, false)).html
		assert.Len(t, svgOpen.FindAllString(page, -1), 2, "two inline SVG charts")
		assert.Equal(t, 2, strings.Count(page, "</svg>"))
		assert.Contains(t, page, "success vs tokens/task")
		assert.Contains(t, page, "run latency: p50 ms and p95 ms")
		assert.False(t, scriptEl.MatchString(page), "no scripts")
		assert.Empty(t, urlRef.FindAllString(page, -1), "no URLs, links or external assets")
		assert.Contains(t, page, "recovered")
	}
}

func TestHTMLReportEscapesNames(t *testing.T) {
	rep := compare.Summarize([]compare.Record{{Config: `<img src=x onerror=alert(1)>`, Scored: true, Correct: true}},
		[]string{`<img src=x onerror=alert(1)>`})
	page, err := rep.HTML()
	require.NoError(t, err)
	assert.NotContains(t, string(page), "<img")
	assert.Contains(t, string(page), "&lt;img")
}

func TestHTMLReportRendersWithoutConfigs(t *testing.T) {
	page, err := (&compare.Report{Simulated: true}).HTML()
	require.NoError(t, err)
	assert.Len(t, svgOpen.FindAllString(string(page), -1), 2)
}

func TestWriteFilesWritesTheThreeReports(t *testing.T) {
	dir := t.TempDir()
	rep := sampleReport(true, false)
	path, err := rep.WriteFiles(dir)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "report.html"), path)
	for _, name := range []string{"report.md", "report.json", "report.html"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err, name)
		assert.Contains(t, string(b), "SIMULATED", name)
	}
	var back compare.Report
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, rep.Configs[1].Recovered, back.Configs[1].Recovered)
	assert.Equal(t, rep.Seed, back.Seed)
}

// htmlTable returns the cells of the page's table, header row first.
func htmlTable(t *testing.T, page string) [][]string {
	t.Helper()
	start, end := strings.Index(page, "<table>"), strings.Index(page, "</table>")
	require.True(t, start >= 0 && end > start, "the page has a table")
	cell := regexp.MustCompile(`<t[hd][^>]*>([^<]*)</t[hd]>`)
	var rows [][]string
	for _, tr := range strings.Split(page[start:end], "<tr>")[1:] {
		var row []string
		for _, m := range cell.FindAllStringSubmatch(tr, -1) {
			row = append(row, html.UnescapeString(m[1]))
		}
		rows = append(rows, row)
	}
	return rows
}

// textRow returns the whitespace-separated fields of the line of text that
// starts with prefix.
func textRow(t *testing.T, text, prefix string) []string {
	t.Helper()
	for line := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, "| "), prefix) {
			return strings.Fields(strings.ReplaceAll(line, "|", " "))
		}
	}
	t.Fatalf("no line starts with %q in\n%s", prefix, text)
	return nil
}

func TestEveryOutputShowsTheSameColumnsWithPerTaskValues(t *testing.T) {
	out := render(t, sampleReport(true, false))
	cols := compare.Columns()
	heads := make([]string, len(cols))
	for i, c := range cols {
		heads[i] = c.Column
	}
	assert.Equal(t, []string{"config", "success", "EM", "F1", "failures", "recovered", "calls/task", "tools/task",
		"prompt tok/task", "compl tok/task", "cost $/task", "p50 ms", "p95 ms", "success 95% CI", "vs baseline W/T/L", "McNemar p",
		"Δsuccess 95% CI", "Δcost $/task 95% CI", "tasks to detect"}, heads)

	// react: two runs, 3+4 model calls, 900+1200 prompt and 60+80
	// completion tokens, 2+2 tool calls; per task 3.5, 1050, 70, 2.0.
	// Wilson 95% for 1 of 2: 0.5 ± 1.96·sqrt(0.25/2 + 1.96²/16) / (1 + 1.96²/2) = 0.095-0.905;
	// react is the first config, the baseline of the paired columns.
	wantReact := []string{"react", "0.500", "0.500", "-", "parse:1", "-", "3.5", "2.0", "1050", "70", "0.00000", "30", "45", "0.095-0.905", "baseline", "-", "-", "-", "-"}
	rows := htmlTable(t, out.html)
	require.Len(t, rows, 3)
	assert.Equal(t, heads, rows[0], "html headers")
	assert.Equal(t, wantReact, rows[1], "html shows per-task values, not totals")
	assert.NotContains(t, out.html, ">2100<", "no prompt-token total in the html table")

	mdHead := "| " + strings.Join(heads, " | ") + " |"
	assert.Contains(t, out.markdown, mdHead+"\n")
	assert.Equal(t, wantReact, textRow(t, out.markdown, "react "), "markdown")
	assert.Equal(t, wantReact, textRow(t, out.table, "react "), "terminal")
	assert.Regexp(t, `(?m)^config +success +EM +F1 +failures +recovered +calls/task +tools/task +prompt tok/task +compl tok/task +cost \$/task +p50 ms +p95 ms +success 95% CI +vs baseline W/T/L +McNemar p +Δsuccess 95% CI +Δcost \$/task 95% CI +tasks to detect$`,
		out.table, "terminal headers")

	// report.json: every column names a field of configs[i] that holds the
	// value the tables show, and "columns" says so.
	var js struct {
		Columns []compare.ColumnDoc `json:"columns"`
		Configs []map[string]any    `json:"configs"`
	}
	require.NoError(t, json.Unmarshal([]byte(out.json), &js))
	assert.Equal(t, cols, js.Columns)
	require.Len(t, js.Configs, 2)
	react := js.Configs[0]
	for _, c := range cols {
		// The baseline's row has no paired differences: they are looked
		// up in the other config's.
		cfg := react
		if strings.HasPrefix(c.Field, "vs_baseline.") {
			cfg = js.Configs[1]
		}
		var v any = cfg
		for part := range strings.SplitSeq(c.Field, ".") {
			m, ok := v.(map[string]any)
			require.True(t, ok, "%s: %s is not an object", c.Column, c.Field)
			v, ok = m[part]
			require.True(t, ok, "%s: report.json has no %s", c.Column, c.Field)
		}
	}
	perTask := react["per_task"].(map[string]any)
	assert.InDelta(t, 3.5, perTask["model_calls"], 1e-9)
	assert.InDelta(t, 1050, perTask["prompt_tokens"], 1e-9)
	assert.InDelta(t, 70, perTask["completion_tokens"], 1e-9)
	assert.InDelta(t, 2, perTask["tool_calls"], 1e-9)
	assert.InDelta(t, 2100, react["prompt_tokens"], 1e-9, "the totals stay")
	for _, c := range cols {
		assert.Contains(t, out.markdown, "| "+c.Column+" | `"+c.Field+"` |", "report.md documents the columns")
		assert.Contains(t, out.html, "<code>"+c.Field+"</code>", "report.html documents the columns")
	}
}

func TestEstimatedTokenCountsAreMarkedInEveryOutput(t *testing.T) {
	rep := sampleReport(true, false)
	rep.Configs[1].Estimated = true // rewoo
	out := render(t, rep)
	// rewoo per task: 675 prompt and 40 completion tokens.
	assert.Equal(t, []string{"~675", "~40", "~0.00000"}, htmlTable(t, out.html)[2][8:11], "html")
	assert.Equal(t, []string{"1050", "70", "0.00000"}, htmlTable(t, out.html)[1][8:11], "html")
	assert.Contains(t, out.html, compare.EstimatedNote)
	for name, text := range map[string]string{"table": out.table, "markdown": out.markdown} {
		assert.Equal(t, []string{"~675", "~40", "~0.00000"}, textRow(t, text, "rewoo ")[8:11], name)
		assert.Equal(t, []string{"1050", "70", "0.00000"}, textRow(t, text, "react ")[8:11], name)
		assert.Contains(t, text, compare.EstimatedNote, name)
	}
	var js struct {
		Configs []struct {
			Estimated bool `json:"tokens_estimated"`
		} `json:"configs"`
	}
	require.NoError(t, json.Unmarshal([]byte(out.json), &js))
	assert.Equal(t, []bool{false, true}, []bool{js.Configs[0].Estimated, js.Configs[1].Estimated})

	plain := render(t, sampleReport(true, false))
	for name, text := range map[string]string{"table": plain.table, "markdown": plain.markdown, "html": plain.html} {
		assert.NotContains(t, text, compare.EstimatedNote, name)
	}
}

func TestRecoveredRunsShowByKindInEveryOutput(t *testing.T) {
	out := render(t, sampleReport(true, false))
	assert.Equal(t, []string{"rewoo", "1.000", "1.000", "-", "-", "tool:1"}, htmlTable(t, out.html)[2][:6])
	for name, text := range map[string]string{"table": out.table, "markdown": out.markdown} {
		assert.Equal(t, []string{"rewoo", "1.000", "1.000", "-", "-", "tool:1"}, textRow(t, text, "rewoo ")[:6], name)
	}
}

// wideReport has configs with long names and long failure lists.
func wideReport() *compare.Report {
	var records []compare.Record
	var order []string
	for i := range 6 {
		name := fmt.Sprintf("config_with_a_long_name_%d", i)
		order = append(order, name)
		for j, kind := range []string{"budget", "loop", "parse", "provider", "timeout", "tool", "wrong"} {
			records = append(records, compare.Record{Config: name, Scored: true, Failure: kind, ModelCalls: 100 * j,
				PromptTokens: 123456 * (i + 1), CompletionTokens: 6543, ToolCalls: 7, LatencyMS: 123456, Estimated: i%2 == 0})
		}
	}
	rep := compare.Summarize(records, order)
	rep.Simulated, rep.Suite, rep.Tasks = true, "demo", 7
	return rep
}

func TestTheTerminalTableFitsTheTerminalWidth(t *testing.T) {
	heads := make([]string, 0, len(compare.Columns()))
	for _, c := range compare.Columns() {
		heads = append(heads, c.Column)
	}
	for _, rep := range []*compare.Report{sampleReport(true, false), wideReport()} {
		var full bytes.Buffer
		require.NoError(t, rep.WriteTable(&full))
		headLine := regexp.MustCompile(`(?m)^config .*$`).FindString(full.String())
		for _, h := range heads {
			assert.Contains(t, headLine, h, "without a width one table holds every column")
		}
		require.Greater(t, len(headLine), 100, "the whole table is wider than the widths below")
		for _, width := range []int{120, 100, 80, 60, 40} {
			var b bytes.Buffer
			require.NoError(t, rep.WriteTableWidth(&b, width))
			text := b.String()
			for line := range strings.SplitSeq(text, "\n") {
				assert.LessOrEqual(t, utf8.RuneCountInString(line), width, "width %d: %q", width, line)
			}
			words := strings.Fields(text)
			for _, h := range heads[1:] {
				assert.True(t, strings.Contains(text, h), "width %d: no %q", width, h)
			}
			for _, s := range rep.Configs {
				assert.Contains(t, words, s.Config, "width %d", width)
				for _, kind := range strings.Fields(s.FailureList()) {
					assert.Contains(t, words, kind, "width %d: %s", width, s.Config)
				}
			}
			if width >= 80 && rep.Configs[0].Config == "react" {
				assert.Regexp(t, `(?m)^config +success`, text, "width %d: still tables", width)
			}
		}
	}
	var fits bytes.Buffer
	require.NoError(t, sampleReport(true, false).WriteTableWidth(&fits, 1000))
	var full bytes.Buffer
	require.NoError(t, sampleReport(true, false).WriteTable(&full))
	assert.Equal(t, full.String(), fits.String(), "a table that fits is written whole")
}

func TestTheScatterPlotNumbersEveryPointAndKeysItsConfig(t *testing.T) {
	rep := sampleReport(true, false)
	twin := rep.Configs[0]
	twin.Config = "react_twin"
	rep.Configs = append(rep.Configs, twin) // the same point as react
	page := render(t, rep).html
	scatter := page[strings.Index(page, "success vs tokens/task"):]
	scatter = scatter[:strings.Index(scatter, "</svg>")]
	labels := regexp.MustCompile(`<text[^>]*>([^<]*)</text>`).FindAllStringSubmatch(scatter, -1)
	var texts []string
	for _, m := range labels {
		texts = append(texts, html.UnescapeString(m[1]))
	}
	assert.Contains(t, texts, "1,3", "configs on the same spot share one label")
	assert.Contains(t, texts, "2")
	for i, s := range rep.Configs {
		assert.Contains(t, texts, fmt.Sprintf("%d  %s", i+1, s.Config), "the key names config %d", i+1)
	}
	assert.False(t, slices.Contains(texts, "100"), "no 0-100 percent axis")
}
