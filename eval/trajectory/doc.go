// Package trajectory scores a run's tool calls and plan against its task's
// gold solution (suite.Gold), for the trajectory columns of comparison
// reports. A Collector, added to a run as a trace.Sink, records the
// run's Trajectory (Collect does the same for a slice of events, and
// ReadJSONL for each run of a JSONL trace file); Score compares it with
// the gold steps; Summarize averages runs' Metrics.
//
// # What counts as a tool call
//
// A Call is read from these events, whichever node emits them: the
// nodes of a subgraph or of a map's items count like any other (their
// graph events carry a path such as "item 2/act" as Node; the events of
// their calls carry the inner node's id, "act"; Call.Node is whatever the
// event says):
//
//   - action (trace.KindAction): emitted before every call of a known
//     tool by nodekind.ToolCall, for text ReAct actions and native tool
//     calls alike; Data "tool" is the tool's registered name and Data
//     "input" the input (for a native call, the raw JSON arguments). A
//     call that then fails (a tool error, a timeout, a denied approval) is
//     still a call.
//   - guard unknown_tool (nodekind.GuardUnknownTool): emitted instead of
//     an action when the model names a tool that does not exist (Data
//     "tool"); the call counts, with no input.
//   - guard invalid_action (executor.GuardInvalidAction) of a
//     completion-style ReAct loop, when its Data "action" reads as
//     Tool[input]: an unknown tool in that grammar. An action that does
//     not read so is a format error, like a text loop's parse_error, and
//     no call.
//   - step (trace.KindStep) of an execute node whose Data "strategy" is
//     rewoo or parallel, when Data "status" is done or failed: those
//     strategies run each plan step as one direct tool call that emits no
//     action event. Skipped steps never ran; the react strategy's steps
//     are ReAct sub-runs whose own action events are the calls; a step of
//     the execute node's model worker (Options.WorkerTools, "llm" by
//     default) is a model call.
//
// Calls are kept in the order their events arrive (the tracer's order).
// Other guard events (tool_error, repeat) follow an action and add no call.
//
// # What counts as a plan
//
// A plan event (trace.KindPlan) with Data "steps" (the planner's plan, a
// re-planner's whole new plan, LLMCompiler's streamed plan) is a Plan;
// the steps are []plan.Step as emitted, or the same decoded from a JSONL
// trace. A step's dependencies are its depends_on and the ids its input
// references as #E<id> (plan.Dependencies). A plan event without steps
// (a least-to-most decomposition's sub-questions) is no plan. The plan
// metrics score the final plan, the last one made: a re-plan holds the
// finished steps and the new ones, so the last plan is what the run
// carried out.
//
// # Matching rules
//
// Tool names are compared after tools.NormalizeName (lower case; spaces,
// "_", "-" and "." dropped), so "Calculator" matches "calculator". An
// empty name matches nothing.
//
// Inputs are compared after normalisation: a JSON string, or a JSON
// object with exactly one field holding a string ({"query": "x"}, a
// native call's arguments), stands for that string; then the text is
// lower-cased, every run of white space becomes one space, and
// surrounding spaces and quotes are trimmed. A gold input without #E
// references must then equal the call's input. In a gold input with
// references, each #E<id> stands for any non-empty text, so "#E2 - #E1"
// matches the call "1930 - 1906" (the values the references took are not
// known) and "#E1 born" matches "Giuseppe Piazzi born". A plan step's
// input keeps its references, which the same rule lets match: "#E2_v -
// #E1_v" matches the gold "#E2 - #E1".
//
// # Metrics
//
// Let G be the gold steps (GoldSteps = |G|) and C the calls (Calls = |C|).
// A task with no gold steps is not scored (Scored false, every other
// field 0 but Calls, which still counts the calls).
// A ratio with a zero denominator is 0.
//
//   - ToolRecall = m / |G| and ToolPrecision = m / |C|, where m counts the
//     tool names G and C share as multisets: the sum over names of the
//     smaller of the two counts. A repeated call beyond the gold count of
//     its tool lowers precision; a failed call counts like any other.
//   - InputRecall = k / |G| and InputPrecision = k / |C|, where k is the
//     size of a maximum one-to-one matching of gold steps with calls of
//     the same tool whose inputs match (the input rule above).
//   - OrderLCS = the length of the longest common subsequence of the
//     tool-name sequences of G (in gold order) and C (in call order),
//     divided by |G|. Gold steps that may run in either order but use the
//     same tool do not lower it.
//   - StepsRatio = |C| / |G|: 1 is the gold length; it is the one metric
//     not bounded by 1.
//   - HasPlan: the run made at least one plan. PlanSteps counts the final
//     plan's steps other than model-worker steps (PlanStep.Worker), P.
//   - PlanRecall = p / |G| and PlanPrecision = p / |P|, where p counts the
//     tool names G and P share as multisets (steps without a tool match
//     nothing).
//   - DepRecall = e / GoldEdges. The gold edges are the pairs (d, g) where
//     gold step g depends on gold step d (depends_on or an #E<d>
//     reference in its input). Gold steps are mapped to plan steps one to
//     one: first a maximum matching of equal tools with matching inputs,
//     then each unmapped gold step takes the first unmapped plan step of
//     its tool, in plan order. An edge (d, g) is recovered, counting in e,
//     when both are mapped and g's plan step depends directly on d's. A
//     plan step depends on a model-worker step's dependencies, not on the
//     worker step itself: ReWOO's "3 = calculator(#E2_v - #E1_v)" with
//     "2_v = llm(#E2)" depends on step 2. Dependencies further away are
//     not followed: a step that waits for d only through another tool
//     step does not receive d's result.
//
// Summarize averages the first six over the scored runs, PlanRecall and
// PlanPrecision over the scored runs with a plan, and DepRecall over
// those whose gold has at least one edge; each mean comes with its count.
package trajectory
