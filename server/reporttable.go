package server

import (
	"github.com/planner-engine/planner/eval/compare"
)

// ReportTable is a finished comparison's table as report.md prints it
// (GET /api/compares/{id}/report?format=table): the same columns, in the
// same order, with the same cell text (rates 0 to 1, figures per task,
// failures and recovered runs by kind), so that the web page tells what
// every report tells.
type ReportTable struct {
	// Banner says what produced the numbers (SIMULATED, SCRIPTED, or the
	// model).
	Banner string `json:"banner"`
	// Columns document the columns: header, report.json field and
	// meaning (compare.Report.Columns).
	Columns []compare.ColumnDoc `json:"columns"`
	// Rows hold one row per config, one cell per column.
	Rows [][]string `json:"rows"`
	// Notes explain the figures: per-task means, estimates, the failure
	// and fault kinds.
	Notes []string `json:"notes"`
}

// reportTable builds rep's table: report.md's columns and cells
// (compare.Report.Columns and Cells).
func reportTable(rep *compare.Report) ReportTable {
	t := ReportTable{Banner: rep.Banner(), Columns: rep.Columns(), Rows: [][]string{}}
	if _, rows := rep.Cells(); rows != nil {
		t.Rows = rows
	}
	t.Notes = append(t.Notes, compare.PerTaskNote)
	for _, c := range rep.Configs {
		if c.Estimated {
			t.Notes = append(t.Notes, compare.EstimatedNote)
			break
		}
	}
	t.Notes = append(t.Notes, compare.FailureLegend, compare.FaultLegend)
	return t
}
