package nodes

import (
	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/executor/steps"
	"github.com/planner-engine/planner/planner"
	"github.com/planner-engine/planner/replanner"
)

// Default returns a registry with every built-in node kind.
func Default() *Registry {
	return NewRegistry().MustRegister(
		Kind{Name: "direct", Summary: "one model call; the reply is the answer", New: NewDirect},
		Kind{Name: "cot", Summary: "zero-shot chain of thought with answer extraction", New: NewCoT},
		Kind{Name: "self_consistency", Summary: "n chain-of-thought samples in parallel, majority vote", New: NewSelfConsistency},
		Kind{Name: "plan_solve", Summary: "Plan-and-Solve (PS+) prompting in one call", New: NewPlanSolve},
		Kind{Name: "least_to_most", Summary: "decompose into sub-questions, solve them in order", New: NewLeastToMost},
		Kind{Name: "react", Summary: "ReAct Thought/Action/Observation loop with tools (text or native tool calls)", New: executor.NewReAct},
		Kind{Name: "planner", Summary: "writes a validated plan of steps (JSON, tool call or numbered list)", New: planner.New},
		Kind{Name: "execute", Summary: "runs plan steps: per-step ReAct, ReWOO tool calls, or LLMCompiler parallel", New: steps.NewExecute},
		Kind{Name: "replanner", Summary: "finish with an answer or revise the remaining steps (routes continue/finish)", New: replanner.New},
		Kind{Name: "joiner", Summary: "LLMCompiler joiner after a parallel wave (routes continue/finish)", New: replanner.NewJoiner},
		Kind{Name: "finalizer", Summary: "composes the final answer from the step results; marks budget-ended runs incomplete", New: NewFinalizer},
		Kind{Name: "solver", Summary: "ReWOO solver: answer from the plan and its evidence", New: NewSolver},
		Kind{Name: "evaluate", Summary: "Reflexion evaluator: exact match, LLM judge or heuristic (routes pass/retry)", New: NewEvaluate},
		Kind{Name: "reflect", Summary: "Reflexion self-reflection: writes a lesson into episodic memory", New: NewReflect},
		Kind{Name: "tot", Summary: "Tree of Thoughts: BFS (beam) or DFS (threshold, backtracking) with concurrent proposal and valuation", New: NewToT},
		Kind{Name: "lats", Summary: "LATS: Monte-Carlo tree search over ReAct trajectories with UCT, values, rollouts and reflections", New: NewLATS},
	)
}
