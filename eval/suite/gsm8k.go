package suite

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/planner-engine/planner/agent"
)

var (
	// calcRe matches one GSM8K calculator annotation, <<48/2=24>>.
	calcRe = regexp.MustCompile(`<<([^<>]*)>>`)
	// literalRe matches an unsigned number literal in a calculator input.
	literalRe = regexp.MustCompile(`\d+(?:\.\d+)?|\.\d+`)
	// groupedRe matches a number written with thousands separators.
	groupedRe = regexp.MustCompile(`^-?\d{1,3}(?:,\d{3})+(?:\.\d+)?$`)
)

// errNoFinalAnswer reports a GSM8K solution without its "#### answer" line.
var errNoFinalAnswer = errors.New(`no final "#### <answer>" line`)

// GSM8KGold turns a GSM8K worked solution into a gold program:
//
//   - Answer is the text after the last "####", with thousands separators
//     removed ("2,125" becomes "2125").
//   - Each calculator annotation <<48/2=24>> becomes one "calculator" step,
//     in order, with ids "1", "2", ...: Input "48/2", Output "24" (split at
//     the annotation's last "=").
//   - Reasoning is the worked lines before "####" with the annotations
//     removed, blank lines dropped.
//   - Dependencies are inferred, best effort: scanning an input's number
//     literals left to right, a literal numerically equal to the output of
//     an earlier step is replaced by "#E<id>" of the most recent such step,
//     and that id is added to DependsOn (ascending, without repeats). A
//     number from the question that happens to equal an earlier result is
//     therefore also read as a reference; the arithmetic is unchanged.
//
// It fails when the "####" line is missing or an annotation has no "=".
func GSM8KGold(solution string) (*agent.Gold, error) {
	body, final, found := cutLast(solution, "####")
	if !found {
		return nil, errNoFinalAnswer
	}
	ans := strings.TrimSpace(final)
	if groupedRe.MatchString(ans) {
		ans = strings.ReplaceAll(ans, ",", "")
	}
	if ans == "" {
		return nil, errNoFinalAnswer
	}
	g := &agent.Gold{Answer: ans}
	var outputs []*big.Rat // by step index; nil when not a number
	for line := range strings.SplitSeq(body, "\n") {
		for _, m := range calcRe.FindAllStringSubmatch(line, -1) {
			input, output, ok := cutLast(m[1], "=")
			if !ok {
				return nil, fmt.Errorf("calculator annotation %q has no \"=\"", m[0])
			}
			step := agent.GoldStep{
				ID:     strconv.Itoa(len(g.Steps) + 1),
				Tool:   "calculator",
				Output: strings.TrimSpace(output),
			}
			step.Input, step.DependsOn = linkInputs(strings.TrimSpace(input), outputs)
			g.Steps = append(g.Steps, step)
			out, ok := new(big.Rat).SetString(strings.ReplaceAll(step.Output, ",", ""))
			if !ok {
				out = nil
			}
			outputs = append(outputs, out)
		}
		if text := strings.TrimSpace(calcRe.ReplaceAllString(line, "")); text != "" {
			g.Reasoning = append(g.Reasoning, text)
		}
	}
	return g, nil
}

// linkInputs replaces number literals in input that equal an earlier step's
// output with #E references and returns the rewritten input and the ids it
// depends on.
func linkInputs(input string, outputs []*big.Rat) (string, []string) {
	var deps []int
	linked := literalRe.ReplaceAllStringFunc(input, func(lit string) string {
		v, ok := new(big.Rat).SetString(lit)
		if !ok {
			return lit
		}
		for i := len(outputs) - 1; i >= 0; i-- {
			if outputs[i] != nil && outputs[i].Cmp(v) == 0 {
				if !slices.Contains(deps, i+1) {
					deps = append(deps, i+1)
				}
				return "#E" + strconv.Itoa(i+1)
			}
		}
		return lit
	})
	slices.Sort(deps)
	var ids []string
	for _, d := range deps {
		ids = append(ids, strconv.Itoa(d))
	}
	return linked, ids
}

// cutLast splits s around the last sep.
func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// gsm8k reads GSM8K JSON lines; task ids are gsm8k-<index>, 0-based.
func (s source) gsm8k() ([]agent.Task, error) {
	var tasks []agent.Task
	err := s.lines(func(lineNo int, line []byte) error {
		index := len(tasks)
		var rec struct {
			Question *string `json:"question"`
			Answer   *string `json:"answer"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			return fmt.Errorf("%s:%d: record %d: %w: %w", s.path, lineNo, index, ErrBadRecord, err)
		}
		if rec.Question == nil || strings.TrimSpace(*rec.Question) == "" {
			return s.badRecord(lineNo, index, `missing "question"`)
		}
		if rec.Answer == nil {
			return s.badRecord(lineNo, index, `missing "answer"`)
		}
		gold, err := GSM8KGold(*rec.Answer)
		if err != nil {
			return s.badRecord(lineNo, index, "answer: %v", err)
		}
		tasks = append(tasks, agent.Task{
			ID:       "gsm8k-" + strconv.Itoa(index),
			Question: *rec.Question,
			Answer:   gold.Answer,
			Gold:     gold,
		})
		return nil
	})
	return tasks, err
}
