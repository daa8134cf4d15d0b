package planner

import (
	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/executor/steps"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/nodes"
	"github.com/planner-engine/planner/nodes/autopilot"
	"github.com/planner-engine/planner/nodes/compose"
	"github.com/planner-engine/planner/nodes/flow"
	"github.com/planner-engine/planner/nodes/general"
	"github.com/planner-engine/planner/nodes/join"
	plannernode "github.com/planner-engine/planner/planner"
	"github.com/planner-engine/planner/replanner"
)

// NodeKinds returns a new registry with every built-in node kind, each with
// the declarations of its prompt templates (nodekind.Kind.Templates). It is
// the Engine's default (WithRegistry); to add node kinds of your own,
// register them on the registry it returns and pass that to WithRegistry.
func NodeKinds() *nodekind.Registry {
	return nodekind.NewRegistry().MustRegister(
		nodekind.Kind{Name: "direct", Summary: "one model call; the reply is the answer", New: nodes.NewDirect, Templates: nodes.GenerateTemplates()},
		nodekind.Kind{Name: "cot", Summary: "zero-shot chain of thought with answer extraction", New: nodes.NewCoT, Templates: nodes.GenerateTemplates()},
		nodekind.Kind{Name: "self_consistency", Summary: "n chain-of-thought samples in parallel, majority vote", New: nodes.NewSelfConsistency, Templates: nodes.GenerateTemplates()},
		nodekind.Kind{Name: "plan_solve", Summary: "Plan-and-Solve (PS+) prompting in one call", New: nodes.NewPlanSolve, Templates: nodes.GenerateTemplates()},
		nodekind.Kind{Name: "least_to_most", Summary: "decompose into sub-questions, solve them in order", New: nodes.NewLeastToMost, Templates: nodes.LeastToMostTemplates()},
		nodekind.Kind{Name: "react", Summary: "ReAct Thought/Action/Observation loop with tools (text or native tool calls)", New: executor.NewReAct, Templates: executor.Templates()},
		nodekind.Kind{Name: "planner", Summary: "writes a validated plan of steps (JSON, tool call or numbered list)", New: plannernode.New, Templates: plannernode.Templates()},
		nodekind.Kind{Name: "execute", Summary: "runs plan steps: per-step ReAct, ReWOO tool calls, or LLMCompiler parallel", New: steps.NewExecute, Templates: nodekind.Nested("react", executor.Templates())},
		nodekind.Kind{Name: "replanner", Summary: "finish with an answer or revise the remaining steps (routes continue/finish)", New: replanner.New, Templates: replanner.Templates()},
		nodekind.Kind{Name: "joiner", Summary: "LLMCompiler joiner after a parallel wave (routes continue/finish)", New: replanner.NewJoiner, Templates: replanner.Templates()},
		nodekind.Kind{Name: "finalizer", Summary: "composes the final answer from the step results; marks budget-ended runs incomplete", New: nodes.NewFinalizer, Templates: nodes.FinalizerTemplates()},
		nodekind.Kind{Name: "solver", Summary: "ReWOO solver: answer from the plan and its evidence", New: nodes.NewSolver, Templates: nodes.SolverTemplates()},
		nodekind.Kind{Name: "evaluate", Summary: "Reflexion evaluator: exact match, LLM judge or heuristic (routes pass/retry)", New: nodes.NewEvaluate, Templates: nodes.EvaluateTemplates()},
		nodekind.Kind{Name: "reflect", Summary: "Reflexion self-reflection: writes a lesson into episodic memory", New: nodes.NewReflect, Templates: nodes.ReflectTemplates()},
		nodekind.Kind{Name: "tot", Summary: "Tree of Thoughts: BFS (beam) or DFS (threshold, backtracking) with concurrent proposal and valuation", New: nodes.NewToT, Templates: nodes.ToTTemplates()},
		nodekind.Kind{Name: "router", Summary: "follows one of its routes: the first expression over the run state that holds, or an LLM classification into its labels", New: flow.NewRouter, Templates: flow.RouterTemplates()},
		nodekind.Kind{Name: "set", Summary: "assigns vars from expressions over the run state", New: flow.NewSet},
		nodekind.Kind{Name: "human", Summary: "waits for a person: an approval (route rejected on a no) or free text into a var, as tool approvals wait (thread saved, exit 3, resume --approve/--deny/--input)", New: flow.NewHuman, Templates: flow.HumanTemplates()},
		nodekind.Kind{Name: "join", Summary: "where parallel branches (an edge to a list of nodes) meet: waits for all, the first, any or k of them and merges them (collect, vote, first, concat)", New: join.New},
		nodekind.Kind{Name: "llm", Summary: "one prompt, one model call; the reply as text or as JSON checked against a JSON Schema (retried with the errors), into the answer or vars", New: general.NewLLM, Templates: general.LLMTemplates()},
		nodekind.Kind{Name: "tool", Summary: "calls a named tool with a templated input; the output into a var (route failed on a failed call, if asked)", New: general.NewTool, Templates: general.ToolTemplates()},
		nodekind.Kind{Name: "subgraph", Summary: "runs another pipeline (a file or an inline graph) with a templated question and vars; its answer into the answer or a var", New: compose.NewSubgraph, Templates: compose.SubgraphTemplates()},
		nodekind.Kind{Name: "map", Summary: "runs a pipeline once per item of a list in state, with bounded concurrency; the answers, in item order, into a var", New: compose.NewMap, Templates: compose.MapTemplates()},
		nodekind.Kind{Name: "autopilot", Summary: "runs candidate pipelines cheapest first (or a learned policy's pick first), escalating when an answer fails its check (complete, agreement, confidence, verifier, judge)", New: autopilot.New, Templates: autopilot.Templates()},
		nodekind.Kind{Name: "lats", Summary: "LATS: Monte-Carlo tree search over ReAct trajectories with UCT, values, rollouts and reflections", New: nodes.NewLATS, Templates: nodes.LATSTemplates()},
	)
}
