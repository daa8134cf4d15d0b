package suite

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/verify"
)

// Game24Question is the task text of a Game of 24 puzzle, for example
// "Use 4 5 6 10 and + - * / to obtain 24, using each number exactly once."
// verify.PuzzleNumbers reads the numbers back from it.
func Game24Question(numbers []int) string {
	parts := make([]string, len(numbers))
	for i, n := range numbers {
		parts[i] = strconv.Itoa(n)
	}
	return "Use " + strings.Join(parts, " ") + " and + - * / to obtain 24, using each number exactly once."
}

// maxSolvedNumbers is the most numbers a Game of 24 puzzle may have for
// the loader to solve it. The exhaustive search grows faster than
// factorially with the count (seven numbers take minutes), so a one-line
// file could otherwise stall the load; larger puzzles are still posed, but
// without a Gold solution.
const maxSolvedNumbers = 4

// game24 reads the Tree of Thoughts CSV. Task ids are game24-<index>, the
// 0-based data row (so rows 900-999, the paper's test set, are
// game24-900 ... game24-999). A puzzle has no single reference answer; its
// Gold holds a Solve24 solution and its steps when the puzzle is solvable
// and has at most maxSolvedNumbers numbers. Answer stays empty:
// verify.Game24 accepts any expression that makes 24.
func (s source) game24() ([]Task, error) {
	r := csv.NewReader(bytes.NewReader(s.data))
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s:1: %w: no CSV header: %w", s.path, ErrBadRecord, err)
	}
	col := -1
	for i, h := range header {
		if strings.EqualFold(strings.TrimSpace(h), "puzzles") {
			col = i
		}
	}
	if col < 0 {
		return nil, fmt.Errorf("%s:1: %w: header %q has no \"Puzzles\" column", s.path, ErrBadRecord, strings.Join(header, ","))
	}
	var tasks []Task
	for index := 0; ; index++ {
		if index%256 == 0 {
			if err := s.ctx.Err(); err != nil {
				return nil, err
			}
		}
		row, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			// FieldPos panics after a failed Read; the parse error has
			// the line.
			var perr *csv.ParseError
			if errors.As(err, &perr) {
				return nil, fmt.Errorf("%s:%d: record %d: %w: %w", s.path, perr.StartLine, index, ErrBadRecord, err)
			}
			return nil, fmt.Errorf("%s: record %d: %w: %w", s.path, index, ErrBadRecord, err)
		}
		line, _ := r.FieldPos(0)
		if col >= len(row) {
			return nil, s.badRecord(line, index, "row has %d fields, no Puzzles column", len(row))
		}
		fields := strings.Fields(row[col])
		if len(fields) < 2 {
			return nil, s.badRecord(line, index, "puzzle %q: want at least two numbers such as \"4 5 6 10\"", row[col])
		}
		nums := make([]int, len(fields))
		for i, f := range fields {
			if nums[i], err = strconv.Atoi(f); err != nil || nums[i] < 0 {
				return nil, s.badRecord(line, index, "puzzle %q: %q is not a non-negative integer", row[col], f)
			}
		}
		t := Task{Task: state.Task{ID: "game24-" + strconv.Itoa(index), Question: Game24Question(nums)}}
		if len(nums) <= maxSolvedNumbers {
			if expr, steps, ok := verify.Solve24Steps(nums); ok {
				t.Gold = &Gold{Answer: expr, Reasoning: steps}
			}
		}
		tasks = append(tasks, t)
	}
	return tasks, nil
}
