package suite

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/planner-engine/planner/state"
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
//     A literal directly followed by a letter or underscore ("6x") is not
//     linked, since "#E1x" would name step "1x". Only outputs written as
//     plain decimals ("24", "-3", "12.50", thousands separators allowed)
//     are linked; others (fractions, "1e6") never are.
//
// It fails when the "####" line is missing or an annotation has no "=".
// Its time is linear in the length of the solution.
func GSM8KGold(solution string) (*Gold, error) {
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
	g := &Gold{Answer: ans}
	latest := map[string]int{} // decimalKey of an output to its latest step id
	for line := range strings.SplitSeq(body, "\n") {
		for _, m := range calcRe.FindAllStringSubmatch(line, -1) {
			input, output, ok := cutLast(m[1], "=")
			if !ok {
				return nil, fmt.Errorf("calculator annotation %q has no \"=\"", m[0])
			}
			step := GoldStep{
				ID:     strconv.Itoa(len(g.Steps) + 1),
				Tool:   "calculator",
				Output: strings.TrimSpace(output),
			}
			step.Input, step.DependsOn = linkInputs(strings.TrimSpace(input), latest)
			g.Steps = append(g.Steps, step)
			if key, ok := decimalKey(strings.ReplaceAll(step.Output, ",", "")); ok {
				latest[key] = len(g.Steps)
			}
		}
		if text := strings.TrimSpace(calcRe.ReplaceAllString(line, "")); text != "" {
			g.Reasoning = append(g.Reasoning, text)
		}
	}
	return g, nil
}

// linkInputs replaces number literals in input that equal an earlier step's
// output (latest maps decimalKey values to the most recent such step's id)
// with #E references and returns the rewritten input and the ids it
// depends on. A literal directly followed by a letter or underscore ("6x")
// is kept, since "#E1x" would read as a reference to step "1x".
func linkInputs(input string, latest map[string]int) (string, []string) {
	var (
		deps   []int
		seen   = map[int]bool{}
		linked strings.Builder
		last   int
	)
	for _, m := range literalRe.FindAllStringIndex(input, -1) {
		if m[1] < len(input) && isWordByte(input[m[1]]) {
			continue
		}
		key, ok := decimalKey(input[m[0]:m[1]])
		if !ok {
			continue
		}
		id, ok := latest[key]
		if !ok {
			continue
		}
		if !seen[id] {
			seen[id] = true
			deps = append(deps, id)
		}
		linked.WriteString(input[last:m[0]])
		linked.WriteString("#E" + strconv.Itoa(id))
		last = m[1]
	}
	linked.WriteString(input[last:])
	slices.Sort(deps)
	var ids []string
	for _, d := range deps {
		ids = append(ids, strconv.Itoa(d))
	}
	return linked.String(), ids
}

// isWordByte reports whether c may continue a #E reference's id.
func isWordByte(c byte) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

// decimalKey returns a canonical form of a decimal number such as "012.50"
// or "-.5" ("12.5", "-0.5"), equal for numerically equal decimals, or false
// when s is not a plain decimal (an optional sign, digits and at most one
// point, with at least one digit).
func decimalKey(s string) (string, bool) {
	neg := false
	switch {
	case strings.HasPrefix(s, "-"):
		neg, s = true, s[1:]
	case strings.HasPrefix(s, "+"):
		s = s[1:]
	}
	whole, frac, _ := strings.Cut(s, ".")
	if (whole == "" && frac == "") || !allDigits(whole) || !allDigits(frac) {
		return "", false
	}
	whole, frac = strings.TrimLeft(whole, "0"), strings.TrimRight(frac, "0")
	if whole == "" && frac == "" {
		return "0", true
	}
	if whole == "" {
		whole = "0"
	}
	key := whole
	if frac != "" {
		key += "." + frac
	}
	if neg {
		key = "-" + key
	}
	return key, true
}

// allDigits reports whether s holds only ASCII digits ("" does).
func allDigits(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }) < 0
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
func (s source) gsm8k() ([]Task, error) {
	var tasks []Task
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
		tasks = append(tasks, Task{
			Task: state.Task{ID: "gsm8k-" + strconv.Itoa(index), Question: *rec.Question, Answer: gold.Answer},
			Gold: gold,
		})
		return nil
	})
	return tasks, err
}
