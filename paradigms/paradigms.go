// Package paradigms composes the built-in node kinds into the default
// registry that maps a pipeline's node `type:` to its constructor. It is the
// one place that imports every paradigm package; the pipeline compiler takes
// the registry through the small pipeline.Constructors interface.
package paradigms

import (
	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/executor/steps"
	"github.com/planner-engine/planner/node"
	"github.com/planner-engine/planner/nodes"
	"github.com/planner-engine/planner/planner"
	"github.com/planner-engine/planner/replanner"
)

// Default returns a registry with every built-in node kind, each with the
// declarations of its prompt templates (node.Kind.Templates).
func Default() *node.Registry {
	return node.NewRegistry().MustRegister(
		node.Kind{Name: "direct", Summary: "one model call; the reply is the answer", New: nodes.NewDirect, Templates: nodes.GenerateTemplates()},
		node.Kind{Name: "cot", Summary: "zero-shot chain of thought with answer extraction", New: nodes.NewCoT, Templates: nodes.GenerateTemplates()},
		node.Kind{Name: "self_consistency", Summary: "n chain-of-thought samples in parallel, majority vote", New: nodes.NewSelfConsistency, Templates: nodes.GenerateTemplates()},
		node.Kind{Name: "plan_solve", Summary: "Plan-and-Solve (PS+) prompting in one call", New: nodes.NewPlanSolve, Templates: nodes.GenerateTemplates()},
		node.Kind{Name: "least_to_most", Summary: "decompose into sub-questions, solve them in order", New: nodes.NewLeastToMost, Templates: nodes.LeastToMostTemplates()},
		node.Kind{Name: "react", Summary: "ReAct Thought/Action/Observation loop with tools (text or native tool calls)", New: executor.NewReAct, Templates: executor.Templates()},
		node.Kind{Name: "planner", Summary: "writes a validated plan of steps (JSON, tool call or numbered list)", New: planner.New, Templates: planner.Templates()},
		node.Kind{Name: "execute", Summary: "runs plan steps: per-step ReAct, ReWOO tool calls, or LLMCompiler parallel", New: steps.NewExecute, Templates: node.Nested("react", executor.Templates())},
		node.Kind{Name: "replanner", Summary: "finish with an answer or revise the remaining steps (routes continue/finish)", New: replanner.New, Templates: replanner.Templates()},
		node.Kind{Name: "joiner", Summary: "LLMCompiler joiner after a parallel wave (routes continue/finish)", New: replanner.NewJoiner, Templates: replanner.Templates()},
		node.Kind{Name: "finalizer", Summary: "composes the final answer from the step results; marks budget-ended runs incomplete", New: nodes.NewFinalizer, Templates: nodes.FinalizerTemplates()},
		node.Kind{Name: "solver", Summary: "ReWOO solver: answer from the plan and its evidence", New: nodes.NewSolver, Templates: nodes.SolverTemplates()},
		node.Kind{Name: "evaluate", Summary: "Reflexion evaluator: exact match, LLM judge or heuristic (routes pass/retry)", New: nodes.NewEvaluate, Templates: nodes.EvaluateTemplates()},
		node.Kind{Name: "reflect", Summary: "Reflexion self-reflection: writes a lesson into episodic memory", New: nodes.NewReflect, Templates: nodes.ReflectTemplates()},
		node.Kind{Name: "tot", Summary: "Tree of Thoughts: BFS (beam) or DFS (threshold, backtracking) with concurrent proposal and valuation", New: nodes.NewToT, Templates: nodes.ToTTemplates()},
		node.Kind{Name: "lats", Summary: "LATS: Monte-Carlo tree search over ReAct trajectories with UCT, values, rollouts and reflections", New: nodes.NewLATS, Templates: nodes.LATSTemplates()},
	)
}
