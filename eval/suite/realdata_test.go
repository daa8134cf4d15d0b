package suite

import (
	"context"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/verify"
)

// sharedData is where the public datasets live next to the repository; the
// tests that read them skip when it is absent.
const sharedData = "../../../shared/data"

func realFile(t *testing.T, rel string) string {
	t.Helper()
	path := filepath.Join(sharedData, rel)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("real dataset %s not available: %v", path, err)
	}
	return path
}

func TestLoadRealDatasets(t *testing.T) {
	tests := []struct {
		rel    string
		format Format
		count  int
		first  string
	}{
		{"gsm8k/test.jsonl", FormatGSM8K, 1319, "gsm8k-0"},
		{"game24/24.csv", FormatGame24, 1362, "game24-0"},
		{"hotpotqa/hotpot_dev_v1_simplified.json", FormatHotpotQA, 7405, "hotpotqa-0"},
		{"llmcompiler/parallelqa_dataset.json", FormatParallelQA, 113, "parallelqa-1"},
		{"llmcompiler/hotpotqa_comparison.json", FormatHotpotQA, 1487, "5a8b57f25542995d1e6f1371"},
	}
	for _, tt := range tests {
		t.Run(tt.rel, func(t *testing.T) {
			path := realFile(t, tt.rel)
			got, err := Detect(context.Background(), path)
			require.NoError(t, err)
			assert.Equal(t, tt.format, got)
			tasks, err := Load(context.Background(), path)
			require.NoError(t, err)
			assert.Len(t, tasks, tt.count)
			assert.Equal(t, tt.first, tasks[0].ID)
			for _, task := range tasks {
				require.NotEmpty(t, task.Question, task.ID)
				if tt.format != FormatGame24 {
					require.NotEmpty(t, task.Answer, task.ID)
				}
			}
		})
	}
}

// TestRealGame24TestRangeIsSolvable loads the Tree of Thoughts test rows
// 900-999 and checks every gold solution with the scorer.
func TestRealGame24TestRangeIsSolvable(t *testing.T) {
	path := realFile(t, "game24/24.csv")
	start, end, err := ParseSlice("900:1000")
	require.NoError(t, err)
	tasks, err := Load(context.Background(), path, WithSlice(start, end))
	require.NoError(t, err)
	require.Len(t, tasks, 100)
	assert.Equal(t, "game24-900", tasks[0].ID)
	assert.Equal(t, "game24-999", tasks[99].ID)
	assert.Contains(t, tasks[0].Question, "Use 4 5 6 10 ", "row 900 is the paper's first test puzzle")
	for _, task := range tasks {
		require.NotNil(t, task.Gold, task.ID)
		r := verify.Game24{}.Score("Answer: "+task.Gold.Answer, task.Reference())
		assert.True(t, r.Correct, "%s: %s", task.ID, r.Detail)
	}
}

// TestRealGSM8KGoldProgramsReproduceAnnotations evaluates every gold
// calculator step, with #E references replaced by the referenced outputs,
// and counts the records whose steps all give their annotated outputs.
func TestRealGSM8KGoldProgramsReproduceAnnotations(t *testing.T) {
	tasks, err := Load(context.Background(), realFile(t, "gsm8k/test.jsonl"))
	require.NoError(t, err)
	var consistent, withSteps, steps, linked, badSteps int
	var examples []string
	for _, task := range tasks {
		require.NoError(t, checkGold(task.Gold), task.ID)
		assert.True(t, verify.Numeric{}.Score(task.Gold.Answer, task.Reference()).Correct, task.ID)
		if len(task.Gold.Steps) > 0 {
			withSteps++
		}
		ok := true
		for _, st := range task.Gold.Steps {
			steps++
			if len(st.DependsOn) > 0 {
				linked++
			}
			if !stepReproduces(t, task.Gold, st) {
				ok = false
				badSteps++
				if len(examples) < 5 {
					examples = append(examples, fmt.Sprintf("%s step %s: %q = %q", task.ID, st.ID, st.Input, st.Output))
				}
			}
		}
		if ok {
			consistent++
		}
	}
	t.Logf("GSM8K: %d records, %d with steps, %d steps (%d with dependencies); %d records reproduce every annotation, %d steps do not: %v",
		len(tasks), withSteps, steps, linked, consistent, badSteps, examples)
	assert.Equal(t, len(tasks), consistent, "every record should reproduce its annotations")
}

// stepReproduces reports whether a gold step evaluates to its Output.
func stepReproduces(t *testing.T, g *Gold, st GoldStep) bool {
	t.Helper()
	got, err := evalGoldStep(g, st)
	if err != nil {
		return false
	}
	want, ok := new(big.Rat).SetString(strings.ReplaceAll(st.Output, ",", ""))
	return ok && got.Cmp(want) == 0
}

// evalGoldStep evaluates a calculator step with #E<id> replaced by the
// output of step id.
func evalGoldStep(g *Gold, st GoldStep) (*big.Rat, error) {
	outputs := map[string]string{}
	for _, s := range g.Steps {
		outputs[s.ID] = s.Output
	}
	var missing error
	expr := plan.ReplaceReferences(st.Input, func(id string) string {
		out, ok := outputs[id]
		if !ok {
			missing = fmt.Errorf("unknown reference #E%s", id)
		}
		return "(" + out + ")"
	})
	if missing != nil {
		return nil, missing
	}
	return evalRational(expr)
}

// evalRational is a tiny exact evaluator for the test: decimals, unary
// signs, + - * / and parentheses.
func evalRational(s string) (*big.Rat, error) {
	p := &ratParser{s: strings.ReplaceAll(s, " ", "")}
	v, err := p.sum()
	if err != nil {
		return nil, err
	}
	if p.i != len(p.s) {
		return nil, fmt.Errorf("unexpected %q at %d in %q", p.s[p.i:], p.i, s)
	}
	return v, nil
}

type ratParser struct {
	s string
	i int
}

func (p *ratParser) sum() (*big.Rat, error) {
	v, err := p.product()
	for err == nil && p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
		op := p.s[p.i]
		p.i++
		var w *big.Rat
		if w, err = p.product(); err == nil {
			if op == '+' {
				v.Add(v, w)
			} else {
				v.Sub(v, w)
			}
		}
	}
	return v, err
}

func (p *ratParser) product() (*big.Rat, error) {
	v, err := p.unary()
	for err == nil && p.i < len(p.s) && (p.s[p.i] == '*' || p.s[p.i] == '/') {
		op := p.s[p.i]
		p.i++
		var w *big.Rat
		if w, err = p.unary(); err == nil {
			if op == '*' {
				v.Mul(v, w)
			} else if w.Sign() == 0 {
				err = fmt.Errorf("division by zero in %q", p.s)
			} else {
				v.Quo(v, w)
			}
		}
	}
	return v, err
}

func (p *ratParser) unary() (*big.Rat, error) {
	if p.i < len(p.s) && (p.s[p.i] == '-' || p.s[p.i] == '+') {
		neg := p.s[p.i] == '-'
		p.i++
		v, err := p.unary()
		if err != nil || !neg {
			return v, err
		}
		return v.Neg(v), nil
	}
	if p.i < len(p.s) && p.s[p.i] == '(' {
		p.i++
		v, err := p.sum()
		if err != nil {
			return nil, err
		}
		if p.i >= len(p.s) || p.s[p.i] != ')' {
			return nil, fmt.Errorf("missing ) in %q", p.s)
		}
		p.i++
		return v, nil
	}
	j := p.i
	for j < len(p.s) && (p.s[j] >= '0' && p.s[j] <= '9' || p.s[j] == '.' || p.s[j] == ',') {
		j++
	}
	v, ok := new(big.Rat).SetString(strings.ReplaceAll(p.s[p.i:j], ",", ""))
	if !ok {
		return nil, fmt.Errorf("bad number at %d in %q", p.i, p.s)
	}
	p.i = j
	return v, nil
}
