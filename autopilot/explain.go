package autopilot

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// maxExplainText is the most characters of a neighbour's text Explain
// prints.
const maxExplainText = 70

// Explain writes c for a reader: the SIMULATED banner when the policy was
// fitted on the simulator, the candidate chosen and the rule that chose
// it, a table of every available candidate's estimate, and a table of the
// neighbours read, with their BM25 scores and each candidate's outcome on
// them (successes/runs and mean cost).
func (c Choice) Explain(w io.Writer) error {
	unit := c.CostUnit
	if unit == "" {
		unit = "cost"
	}
	var b strings.Builder
	if c.Simulated {
		fmt.Fprintf(&b, "SIMULATED: this policy was fitted on runs of the offline simulator (%s); it reflects the simulator, not a language model.\n\n", c.Model)
	}
	fmt.Fprintf(&b, "chosen: %s\n", c.Candidate)
	if len(c.Neighbours) == 0 {
		b.WriteString("neighbours: none (no past task shares a word with this one): each candidate's rate and cost over all past tasks decide\n")
	} else {
		fmt.Fprintf(&b, "neighbours: the %d past tasks most like this one (BM25 over their text; those scoring below %g of the best are left out)\n", len(c.Neighbours), c.Relevance)
	}
	fmt.Fprintf(&b, "rule: success = (neighbours' successes + %g × overall rate) / (neighbours' runs + %g); cost likewise, in %s per run;\n",
		c.PriorWeight, c.PriorWeight, unit)
	fmt.Fprintf(&b, "      utility = success − %g × cost; the highest utility wins, a tie going to the cheaper candidate\n\n", c.CostWeight)

	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "candidate\tsuccess\tcost (%s)\tutility\truns\t\n", unit)
	for _, e := range c.Estimates {
		mark := ""
		if e.Name == c.Candidate {
			mark = "  <- chosen"
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%.5g\t%.4f\t%d\t%s\n", e.Name, e.Success, e.Cost, e.Utility, e.Runs, mark)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(c.Neighbours) > 0 {
		b.WriteString("\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprint(tw, "#\ttask\tscore")
		for _, e := range c.Estimates {
			fmt.Fprintf(tw, "\t%s", e.Name)
		}
		fmt.Fprint(tw, "\ttext\t\n")
		for i, n := range c.Neighbours {
			fmt.Fprintf(tw, "%d\t%s\t%.3f", i+1, n.ID, n.Score)
			for _, e := range c.Estimates {
				o, ok := n.Outcomes[e.Name]
				if !ok || o.Runs == 0 {
					fmt.Fprint(tw, "\t-")
					continue
				}
				fmt.Fprintf(tw, "\t%d/%d, %.4g", o.Successes, o.Runs, o.Cost)
			}
			fmt.Fprintf(tw, "\t%s\t\n", clip(n.Text, maxExplainText))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintf(&b, "(each candidate column: successes/runs, mean cost in %s)\n", unit)
	}
	_, err := io.WriteString(w, trimLines(b.String()))
	return err
}

// trimLines removes the spaces tabwriter leaves at the ends of lines.
func trimLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// clip shortens s to n characters, on one line, marking a cut with "…".
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
