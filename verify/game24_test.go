package verify

import (
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVerify24AcceptsCorrectAnswers(t *testing.T) {
	tests := []struct {
		name    string
		numbers []int
		expr    string
	}{
		{"plain", []int{4, 5, 6, 10}, "(5 * (10 - 4)) - 6"},
		{"no spaces", []int{4, 5, 6, 10}, "(10-6)*5+4"},
		{"fraction needed", []int{3, 3, 8, 8}, "8 / (3 - 8 / 3)"},
		{"unicode operators", []int{1, 2, 3, 4}, "1 × 2 × 3 × 4"},
		{"division sign", []int{1, 3, 4, 6}, "6 ÷ (1 - 3 ÷ 4)"},
		{"latex operators", []int{1, 2, 3, 4}, `(1 + 2 + 3) \times 4`},
		{"unicode minus", []int{2, 3, 4, 10}, "10 × 3 − 4 − 2"},
		{"answer prefix and equals suffix", []int{1, 1, 4, 6}, "Answer: 6 * 4 * 1 * 1 = 24"},
		{"final answer prefix and period", []int{1, 1, 4, 6}, "Final Answer: 6 * 4 / (1 * 1) = 24."},
		{"repeated numbers", []int{1, 1, 11, 11}, "(11 + 11 + 1 + 1)"},
		{"redundant parentheses", []int{1, 2, 3, 4}, "((((1 + 2) + 3)) * (4))"},
		{"leading zeros read as values", []int{1, 2, 3, 4}, "01 * 02 * 03 * 04"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.NoError(t, Verify24(tt.numbers, tt.expr))
		})
	}
}

func TestVerify24RejectsWrongAnswers(t *testing.T) {
	tests := []struct {
		name    string
		numbers []int
		expr    string
		want    error
	}{
		{"wrong value", []int{4, 5, 6, 10}, "4 + 5 + 6 + 10", ErrNot24},
		{"claims another value", []int{4, 5, 6, 10}, "(10 - 4) * (5 - 6 + 5) = 25", ErrNot24},
		{"number missing", []int{4, 5, 6, 10}, "(10 - 6) * 6", ErrWrongNumbers},
		{"number reused", []int{4, 5, 6, 10}, "4 * 6 * (10 - 5) / 5", ErrWrongNumbers},
		{"foreign number", []int{4, 5, 6, 10}, "4 * 6 + 10 - 5 - 5 + 0", ErrWrongNumbers},
		{"number split into digits", []int{1, 2, 3, 12}, "1 * 2 * 12", ErrWrongNumbers},
		{"decimal", []int{1, 2, 3, 4}, "1.0 * 2 * 3 * 4", ErrBadExpression},
		{"unary minus", []int{1, 2, 3, 4}, "-1 + 1 + 24", ErrBadExpression},
		{"unary minus after paren", []int{2, 3, 4, 24}, "(-2 + 2) + 24", ErrBadExpression},
		{"division by zero", []int{1, 1, 4, 6}, "6 * 4 / (1 - 1)", ErrBadExpression},
		{"unbalanced open", []int{1, 2, 3, 4}, "(1 + 2 + 3 * 4", ErrBadExpression},
		{"unbalanced close", []int{1, 2, 3, 4}, "1 + 2 + 3) * 4", ErrBadExpression},
		{"dangling operator", []int{1, 2, 3, 4}, "1 * 2 * 3 * 4 *", ErrBadExpression},
		{"adjacent numbers", []int{1, 2, 3, 4}, "1 2 * 3 * 4", ErrBadExpression},
		{"power", []int{2, 3, 4, 4}, "2 ^ 3 * 4 - 4 - 4", ErrBadExpression},
		{"letters", []int{1, 2, 3, 4}, "one * 2 * 3 * 4", ErrBadExpression},
		{"empty", []int{1, 2, 3, 4}, "Answer:", ErrBadExpression},
		{"equals non-number", []int{1, 2, 3, 4}, "1 * 2 * 3 * 4 = twenty-four", ErrBadExpression},
		{"two equals", []int{1, 2, 3, 4}, "1 * 2 * 3 * 4 = 24 = 24", ErrBadExpression},
		{"too long", []int{1, 2, 3, 4}, strings.Repeat("(", 600) + "1*2*3*4" + strings.Repeat(")", 600), ErrBadExpression},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Verify24(tt.numbers, tt.expr)
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.want)
			for _, other := range []error{ErrNot24, ErrWrongNumbers, ErrBadExpression} {
				if other != tt.want {
					assert.NotErrorIs(t, err, other)
				}
			}
		})
	}
}

func TestVerify24ErrorsSayWhatIsWrong(t *testing.T) {
	err := Verify24([]int{4, 5, 6, 10}, "(10 - 6) * 6")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "uses [6 6 10], puzzle has [4 5 6 10]")
	err = Verify24([]int{4, 5, 6, 10}, "4 + 5 + 6 + 10")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "evaluates to 25")
	err = Verify24([]int{1, 2, 3, 4}, "1 + 2 + x")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unexpected 'x' at offset 8`)
}

func TestSolve24FindsVerifiedSolutions(t *testing.T) {
	tests := []struct {
		numbers []int
		want    string
	}{
		{[]int{4, 5, 6, 10}, ""},
		{[]int{3, 3, 8, 8}, "8 / (3 - 8 / 3)"},
		{[]int{1, 1, 4, 6}, ""},
		{[]int{1, 3, 4, 6}, "6 / (1 - 3 / 4)"},
		{[]int{24}, "24"},
		{[]int{2, 12}, "2 * 12"},
		{[]int{1, 1, 11, 11}, ""},
		{[]int{0, 4, 6, 1}, ""},
		{[]int{1, 2, 3, 4, 5}, ""},
	}
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(fmtInts(tt.numbers), " ", "_"), func(t *testing.T) {
			expr, ok := Solve24(tt.numbers)
			require.True(t, ok)
			assert.NoError(t, Verify24(tt.numbers, expr), expr)
			if tt.want != "" {
				assert.Equal(t, tt.want, expr)
			}
		})
	}
}

func TestSolve24ReportsUnsolvable(t *testing.T) {
	for _, nums := range [][]int{{1, 1, 1, 1}, {1, 1, 2, 2}, {13, 13, 13, 13}, {}, {23}, {5, 5}} {
		expr, ok := Solve24(nums)
		assert.False(t, ok, "%v gave %q", nums, expr)
		assert.Empty(t, expr)
	}
}

func TestSolve24IsDeterministicAndOrderIndependent(t *testing.T) {
	first, ok := Solve24([]int{10, 6, 5, 4})
	require.True(t, ok)
	for range 3 {
		again, _ := Solve24([]int{4, 5, 6, 10})
		assert.Equal(t, first, again)
	}
}

// TestSolve24AgreesWithVerify24OnAllSmallPuzzles checks every puzzle of four
// cards 1..13: each solution verifies, and the number of solvable puzzles is
// the known figure of 1,362 (the size of the ToT puzzle list).
func TestSolve24AgreesWithVerify24OnAllSmallPuzzles(t *testing.T) {
	if testing.Short() {
		t.Skip("enumerates 1,820 puzzles")
	}
	solvable := 0
	for a := 1; a <= 13; a++ {
		for b := a; b <= 13; b++ {
			for c := b; c <= 13; c++ {
				for d := c; d <= 13; d++ {
					nums := []int{a, b, c, d}
					expr, ok := Solve24(nums)
					if !ok {
						continue
					}
					solvable++
					require.NoError(t, Verify24(nums, expr), "%v: %s", nums, expr)
				}
			}
		}
	}
	assert.Equal(t, 1362, solvable)
}

func TestSolve24StepsFollowToTFormat(t *testing.T) {
	expr, steps, ok := Solve24Steps([]int{4, 5, 6, 10})
	require.True(t, ok)
	require.Len(t, steps, 3)
	stepRe := regexp.MustCompile(`^(-?[\d/]+) ([-+*/]) (-?[\d/]+) = (-?[\d/]+) \(left: ([-\d/ ]+)\)$`)
	left := []string{"4", "5", "6", "10"}
	for _, s := range steps {
		m := stepRe.FindStringSubmatch(s)
		require.NotNil(t, m, s)
		// The operands must be available and the result must be right.
		for _, operand := range []string{m[1], m[3]} {
			i := slices.Index(left, operand)
			require.GreaterOrEqual(t, i, 0, "%s uses %s, left %v", s, operand, left)
			left = slices.Delete(left, i, i+1)
		}
		x, _ := new(big.Rat).SetString(m[1])
		y, _ := new(big.Rat).SetString(m[3])
		assert.Equal(t, m[4], applyOp(m[2], x, y).RatString(), s)
		left = append(left, m[4])
		assert.ElementsMatch(t, left, strings.Fields(m[5]), s)
	}
	assert.Equal(t, []string{"24"}, left)
	assert.NoError(t, Verify24([]int{4, 5, 6, 10}, expr))
}

func TestPuzzleNumbersReadsQuestionForms(t *testing.T) {
	tests := []struct {
		q    string
		want []int
	}{
		{"Use 4 5 6 10 and + - * / to obtain 24.", []int{4, 5, 6, 10}},
		{"Input: 1 1 4 6", []int{1, 1, 4, 6}},
		{"numbers 3, 3, 8, 8 make 24", []int{3, 3, 8, 8}},
		{"3,3,8,8", []int{3, 3, 8, 8}},
	}
	for _, tt := range tests {
		got, err := PuzzleNumbers(tt.q)
		require.NoError(t, err, tt.q)
		assert.Equal(t, tt.want, got, tt.q)
	}
	_, err := PuzzleNumbers("Make 24 from nothing")
	assert.Error(t, err)
}

// FuzzVerify24 checks Verify24 never panics and that whatever it accepts is
// confirmed by an independent evaluator: the numbers in the text are the
// puzzle's and the value is exactly 24.
func FuzzVerify24(f *testing.F) {
	seeds := []struct {
		a, b, c, d uint8
		expr       string
	}{
		{4, 5, 6, 10, "(5 * (10 - 4)) - 6"},
		{3, 3, 8, 8, "8 / (3 - 8 / 3)"},
		{1, 3, 4, 6, "Answer: 6 ÷ (1 - 3 ÷ 4) = 24"},
		{1, 2, 3, 4, `1 \times 2 \times 3 \times 4.`},
		{1, 1, 4, 6, "((1 + 1) * 6) + 4 * 3"},
		{1, 1, 4, 6, "6 * 4 / (1 - 1)"},
		{2, 2, 2, 3, "(2 + 2) * (2 * 3) = 24"},
		{0, 0, 0, 0, "-(0)"},
		{9, 9, 9, 9, "((9"},
	}
	for _, s := range seeds {
		f.Add(s.a, s.b, s.c, s.d, s.expr)
	}
	f.Fuzz(func(t *testing.T, a, b, c, d uint8, expr string) {
		nums := []int{int(a), int(b), int(c), int(d)}
		err := Verify24(nums, expr)
		if err != nil {
			return
		}
		body := independentStrip(expr)
		used := regexp.MustCompile(`\d+`).FindAllString(body, -1)
		want := make([]string, len(nums))
		for i, n := range nums {
			want[i] = strconv.Itoa(n)
		}
		for i, u := range used {
			v, ok := new(big.Int).SetString(u, 10)
			require.True(t, ok)
			used[i] = v.String()
		}
		slices.Sort(used)
		slices.Sort(want)
		require.Equal(t, want, used, "accepted %q for %v", expr, nums)
		v, ok := shuntingYard(body)
		require.True(t, ok, "accepted %q but the independent evaluator cannot read %q", expr, body)
		require.Zero(t, v.Cmp(big.NewRat(24, 1)), "accepted %q = %s", expr, v.RatString())
	})
}

// independentStrip removes the decorations Verify24 documents, written
// separately from its implementation.
func independentStrip(s string) string {
	for _, r := range [][2]string{{`\times`, "*"}, {`\cdot`, "*"}, {`\div`, "/"}, {"×", "*"}, {"·", "*"}, {"÷", "/"}, {"−", "-"}, {"–", "-"}} {
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	s = regexp.MustCompile(`(?i)^\s*(final\s+)?answer\s*[:：]`).ReplaceAllString(s, "")
	s = strings.TrimSuffix(strings.TrimSpace(s), ".")
	if i := strings.Index(s, "="); i >= 0 {
		s = s[:i]
	}
	return s
}

// shuntingYard evaluates an expression of non-negative integers, + - * /
// and parentheses with Dijkstra's algorithm, as a check on the recursive
// descent parser. ok is false for malformed input or division by zero.
func shuntingYard(s string) (*big.Rat, bool) {
	prec := map[string]int{"+": 1, "-": 1, "*": 2, "/": 2}
	var out []*big.Rat
	var ops []string
	apply := func() bool {
		op := ops[len(ops)-1]
		ops = ops[:len(ops)-1]
		if len(out) < 2 || op == "(" {
			return false
		}
		x, y := out[len(out)-2], out[len(out)-1]
		out = out[:len(out)-2]
		if op == "/" && y.Sign() == 0 {
			return false
		}
		out = append(out, applyOp(op, x, y))
		return true
	}
	expectOperand := true
	for _, tok := range regexp.MustCompile(`\d+|\S`).FindAllString(s, -1) {
		switch {
		case tok[0] >= '0' && tok[0] <= '9':
			if !expectOperand {
				return nil, false
			}
			v, _ := new(big.Rat).SetString(tok)
			out = append(out, v)
			expectOperand = false
		case tok == "(":
			if !expectOperand {
				return nil, false
			}
			ops = append(ops, tok)
		case tok == ")":
			if expectOperand {
				return nil, false
			}
			for len(ops) > 0 && ops[len(ops)-1] != "(" {
				if !apply() {
					return nil, false
				}
			}
			if len(ops) == 0 {
				return nil, false
			}
			ops = ops[:len(ops)-1]
		case prec[tok] > 0:
			if expectOperand {
				return nil, false
			}
			for len(ops) > 0 && ops[len(ops)-1] != "(" && prec[ops[len(ops)-1]] >= prec[tok] {
				if !apply() {
					return nil, false
				}
			}
			ops = append(ops, tok)
			expectOperand = true
		default:
			return nil, false
		}
	}
	if expectOperand {
		return nil, false
	}
	for len(ops) > 0 {
		if !apply() {
			return nil, false
		}
	}
	if len(out) != 1 {
		return nil, false
	}
	return out[0], true
}

func applyOp(op string, x, y *big.Rat) *big.Rat {
	r := new(big.Rat)
	switch op {
	case "+":
		return r.Add(x, y)
	case "-":
		return r.Sub(x, y)
	case "*":
		return r.Mul(x, y)
	default:
		return r.Quo(x, y)
	}
}

func fmtInts(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, " ")
}

func BenchmarkSolve24Unsolvable(b *testing.B) {
	for b.Loop() {
		Solve24([]int{1, 1, 1, 1})
	}
}

func BenchmarkSolve24Solvable(b *testing.B) {
	for b.Loop() {
		Solve24([]int{4, 5, 6, 10})
	}
}

func TestSolve24BigAndSmallArithmeticAgree(t *testing.T) {
	for _, nums := range [][]int{{4, 5, 6, 10}, {3, 3, 8, 8}, {1, 3, 4, 6}, {1, 1, 1, 1}, {2, 3, 5, 12}, {1, 2, 3, 4, 5}} {
		require.True(t, fitsInt64(nums), "%v", nums)
		expr, steps, ok := Solve24Steps(nums)
		bigExpr, bigSteps, bigOK := solveWith(nums, func(n int) bigFrac { return bigFrac{big.NewRat(int64(n), 1)} })
		assert.Equal(t, bigOK, ok, "%v", nums)
		assert.Equal(t, bigExpr, expr, "%v", nums)
		assert.Equal(t, bigSteps, steps, "%v", nums)
	}
}

func TestSolve24HandlesLargeNumbersExactly(t *testing.T) {
	nums := []int{1000003, 1000003, 24, 7}
	require.False(t, fitsInt64(nums))
	expr, ok := Solve24(nums)
	require.True(t, ok)
	assert.NoError(t, Verify24(nums, expr), expr)
	_, ok = Solve24([]int{1 << 40, 3, 5, 7})
	assert.False(t, ok)
}

func BenchmarkVerify24(b *testing.B) {
	for b.Loop() {
		_ = Verify24([]int{3, 3, 8, 8}, "Answer: 8 / (3 - 8 / 3) = 24")
	}
}
