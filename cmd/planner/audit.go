package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/planner-engine/planner/audit"
	"github.com/planner-engine/planner/internal/textutil"
	"github.com/spf13/cobra"
)

type auditFlags struct {
	thread, tool, db, store, since string
	limit                          int
	json                           bool
}

// auditInputWidth and auditResultWidth clip the table's input and result
// columns, in characters.
const (
	auditInputWidth  = 40
	auditResultWidth = 60
)

func newAuditCmd(p process) *cobra.Command {
	f := &auditFlags{}
	c := &cobra.Command{
		Use:   "audit [--thread NAME] [--tool TOOL] [--json]",
		Short: "List the recorded tool calls (the audit log)",
		Long: `List the tool calls the audit log recorded, oldest first: when each started, its thread (or
run id), node, tool, input (scrubbed of secrets), output size, duration, and how it ended: ok, the
error, or the human decision on a call that needed approval (approved by, denied by, pending).

Runs with --thread record in audit.db beside the thread store (--store); run --audit FILE records
any run in FILE (read it with --db FILE). Records are only appended: calls a resumed thread
replays from its journal are not recorded again.

--json prints one JSON object per line (JSON Lines), every field of the record, including the
output's SHA-256 digest, the call id, the step and the decider's reason.`,
		Example: `  planner run --config configs/react.yaml --llm sim --suite demo --task demo-07 --thread galileo -q
  planner audit --thread galileo
  planner audit --tool search --json --limit 0
  planner run --config configs/react.yaml --llm sim --suite demo --task demo-07 -q --audit calls.db
  planner audit --db calls.db --since 1h`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error { return listAudit(c, p, f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.thread, "thread", "", "only the calls of this thread")
	fl.StringVar(&f.tool, "tool", "", "only the calls of this tool")
	fl.StringVar(&f.since, "since", "", "only the calls started since this long ago (1h, 30m) or this time (RFC 3339)")
	fl.IntVar(&f.limit, "limit", 50, "show the newest N calls (0: all)")
	fl.BoolVar(&f.json, "json", false, "print one JSON object per line")
	fl.StringVar(&f.db, "db", "", "audit log file (default: audit.db beside the thread store)")
	storeFlag(c, &f.store)
	return c
}

func listAudit(c *cobra.Command, p process, f *auditFlags) error {
	ctx := c.Context()
	usage := func(err error) error { return &usageError{cmd: "audit", err: err} }
	if f.limit < 0 {
		return usage(fmt.Errorf("--limit %d: give 0 (all) or more", f.limit))
	}
	filter := audit.Filter{Thread: f.thread, Tool: f.tool, Limit: f.limit}
	if f.since != "" {
		since, err := parseSince(f.since, time.Now())
		if err != nil {
			return usage(err)
		}
		filter.Since = since
	}
	path := f.db
	if path == "" {
		store, err := storePath(p, f.store)
		if err != nil {
			return err
		}
		path = audit.PathBeside(store)
	}
	l, err := audit.Open(ctx, path, audit.MustExist())
	switch {
	case errors.Is(err, audit.ErrNoLog) && f.db != "":
		return fmt.Errorf("%w (planner run --audit %s ... creates it)", err, f.db)
	case errors.Is(err, audit.ErrNoLog):
		return fmt.Errorf("%w yet: runs with --thread create it beside their thread store (--store); "+
			"a run with --audit FILE records in FILE instead (read it with --db FILE)", err)
	}
	if err != nil {
		return err
	}
	defer l.Close()
	rs, err := l.Query(ctx, filter)
	if err != nil {
		return err
	}
	out := c.OutOrStdout()
	if f.json {
		enc := json.NewEncoder(out)
		for _, r := range rs {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	if len(rs) == 0 {
		fmt.Fprintf(out, "no tool calls recorded in %s%s\n", l.Path(), describeFilter(f))
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tTHREAD/RUN\tNODE\tTOOL\tINPUT\tOUTPUT\tMS\tRESULT")
	for _, r := range rs {
		where := r.Thread
		if where == "" {
			where = "run " + r.Run
		}
		output, ms := "-", "-" // the tool did not run
		if r.OutputSHA256 != "" {
			output, ms = humanize.Bytes(uint64(r.OutputBytes)), fmt.Sprintf("%.1f", r.DurationMS)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Time.Local().Format("2006-01-02 15:04:05"), where, r.Node, r.Tool,
			textutil.Clip(textutil.OneLine(r.Input), auditInputWidth), output, ms, textutil.Clip(textutil.OneLine(auditResult(r)), auditResultWidth))
	}
	return tw.Flush()
}

// auditResult says how a recorded call ended, for the table.
func auditResult(r audit.Record) string {
	var parts []string
	switch r.Decision {
	case audit.DecisionApproved:
		parts = append(parts, "approved by "+orUnknown(r.DecidedBy))
	case audit.DecisionDenied:
		s := "denied by " + orUnknown(r.DecidedBy)
		if r.Reason != "" {
			s += ": " + r.Reason
		}
		return s
	case audit.DecisionPending:
		return "pending approval"
	}
	if r.Error != "" {
		parts = append(parts, "error: "+r.Error)
	} else {
		parts = append(parts, "ok")
	}
	return strings.Join(parts, ", ")
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// describeFilter names the filters in force, for the empty listing.
func describeFilter(f *auditFlags) string {
	var parts []string
	if f.thread != "" {
		parts = append(parts, "thread "+f.thread)
	}
	if f.tool != "" {
		parts = append(parts, "tool "+f.tool)
	}
	if f.since != "" {
		parts = append(parts, "since "+f.since)
	}
	if len(parts) == 0 {
		return ""
	}
	return " for " + strings.Join(parts, ", ")
}

// parseSince reads --since: a duration back from now, or an RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--since %q: give a duration back from now (1h, 30m) or a time such as 2026-01-02T15:04:05Z", s)
}
