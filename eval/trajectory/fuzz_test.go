package trajectory_test

import (
	"math"
	"strconv"
	"testing"

	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/eval/trajectory"
	"github.com/stretchr/testify/assert"
)

// assertInRange checks the invariants every Metrics keeps: each ratio a
// number in [0, 1] (StepsRatio a finite number ≥ 0), and the orderings
// the definitions imply.
func assertInRange(t *testing.T, m trajectory.Metrics) {
	t.Helper()
	for name, v := range map[string]float64{
		"ToolRecall": m.ToolRecall, "ToolPrecision": m.ToolPrecision, "InputRecall": m.InputRecall,
		"InputPrecision": m.InputPrecision, "OrderLCS": m.OrderLCS, "PlanRecall": m.PlanRecall,
		"PlanPrecision": m.PlanPrecision, "DepRecall": m.DepRecall,
	} {
		assert.False(t, math.IsNaN(v), "%s is NaN", name)
		assert.GreaterOrEqual(t, v, 0.0, name)
		assert.LessOrEqual(t, v, 1.0, name)
	}
	assert.False(t, math.IsNaN(m.StepsRatio) || math.IsInf(m.StepsRatio, 0), "StepsRatio %v", m.StepsRatio)
	assert.GreaterOrEqual(t, m.StepsRatio, 0.0)
	// A matching input needs a matching tool; an ordered match is a match.
	assert.LessOrEqual(t, m.InputRecall, m.ToolRecall+1e-12)
	assert.LessOrEqual(t, m.InputPrecision, m.ToolPrecision+1e-12)
	assert.LessOrEqual(t, m.OrderLCS, m.ToolRecall+1e-12)
	if !m.Scored {
		assert.Zero(t, m.ToolRecall+m.ToolPrecision+m.OrderLCS+m.StepsRatio+m.PlanRecall+m.DepRecall)
	}
}

// fromBytes builds gold steps, calls and a plan from fuzz bytes: each
// byte picks a tool from a small set (so names repeat), an input with or
// without #E references, and dependencies on earlier steps.
func fromBytes(goldB, callB, planB []byte) ([]suite.GoldStep, trajectory.Trajectory) {
	names := []string{"search", "Search", "calculator", "", "lookup"}
	inputs := []string{"a", "A ", "#E1 - #E2", "b #E1", `{"query":"a"}`, "", "#E9", "x\x00y"}
	var gold []suite.GoldStep
	for i, b := range goldB {
		s := suite.GoldStep{ID: strconv.Itoa(i + 1), Tool: names[int(b)%len(names)], Input: inputs[int(b>>3)%len(inputs)]}
		if i > 0 && b&0x80 != 0 {
			s.DependsOn = []string{strconv.Itoa(int(b)%i + 1), s.ID} // an earlier step, and itself
		}
		gold = append(gold, s)
	}
	var tr trajectory.Trajectory
	for _, b := range callB {
		tr.Tools = append(tr.Tools, trajectory.Call{Tool: names[int(b)%len(names)], Input: inputs[int(b>>3)%len(inputs)], Via: trajectory.ViaAction})
	}
	if len(planB) > 0 {
		var p trajectory.Plan
		for i, b := range planB[1:] {
			s := trajectory.PlanStep{ID: strconv.Itoa(i + 1), Tool: names[int(b)%len(names)], Input: inputs[int(b>>3)%len(inputs)], Worker: b&0x40 != 0}
			if i > 0 {
				s.DependsOn = []string{strconv.Itoa(int(b)%i + 1), strconv.Itoa(int(b) % (i + 3))} // may name itself or a missing id
			}
			p.Steps = append(p.Steps, s)
		}
		tr.Plans = append(tr.Plans, p)
	}
	return gold, tr
}

func FuzzScoreStaysInRange(f *testing.F) {
	f.Add([]byte{}, []byte{}, []byte{})
	f.Add([]byte{0, 0, 2}, []byte{0, 0, 2}, []byte{1, 0, 0x40, 0, 0x40, 0x82})
	f.Add([]byte{0x90, 0x91}, []byte{}, []byte{0})
	f.Add([]byte{3, 3}, []byte{3, 3, 3}, []byte{9, 3, 3})
	f.Add([]byte{0xff, 0x13, 0x88}, []byte{0x13, 0x88, 0xff, 0xff}, []byte{2, 0xff, 0xc1, 0x13})
	f.Fuzz(func(t *testing.T, goldB, callB, planB []byte) {
		if len(goldB) > 40 || len(callB) > 40 || len(planB) > 40 {
			t.Skip("long inputs add nothing the short ones do not")
		}
		gold, tr := fromBytes(goldB, callB, planB)
		m := trajectory.Score(tr, gold)
		assertInRange(t, m)
		assert.Equal(t, len(gold) > 0, m.Scored)
		assert.Equal(t, len(tr.Tools), m.Calls)
		s := trajectory.Summarize([]trajectory.Metrics{m, m})
		for _, v := range []float64{s.ToolRecall, s.ToolPrecision, s.OrderLCS, s.PlanRecall, s.DepRecall} {
			assert.False(t, math.IsNaN(v))
		}
	})
}
