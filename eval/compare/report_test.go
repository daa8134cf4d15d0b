package compare_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/planner-engine/planner/eval/compare"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sampleReport summarises a few hand-made records of two configs.
func sampleReport(simulated, scripted bool) *compare.Report {
	records := []compare.Record{
		{Config: "react", Scored: true, Correct: true, EM: 1, ModelCalls: 3, PromptTokens: 900, CompletionTokens: 60, ToolCalls: 2, LatencyMS: 30},
		{Config: "react", Scored: true, Failure: "parse", ModelCalls: 4, PromptTokens: 1200, CompletionTokens: 80, ToolCalls: 2, LatencyMS: 45},
		{Config: "rewoo", Scored: true, Correct: true, EM: 1, Failure: "tool", ModelCalls: 2, PromptTokens: 700, CompletionTokens: 40, ToolCalls: 3, LatencyMS: 20},
		{Config: "rewoo", Scored: true, Correct: true, EM: 1, ModelCalls: 2, PromptTokens: 650, CompletionTokens: 40, ToolCalls: 3, LatencyMS: 25},
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
	assert.Contains(t, out.markdown, "| react | 50.0% |")
	assert.Contains(t, out.markdown, "| rewoo | 100.0% |")
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
		assert.Contains(t, page, "Success rate vs tokens per task")
		assert.Contains(t, page, "Latency per task (ms)")
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
