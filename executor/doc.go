// Package executor runs the ReAct loop: the model reasons, calls one of the
// pipeline's tools, reads the observation, and repeats until it gives a
// final answer or a budget ends the run.
//
// The loop is exported (NewLoop, Loop.Run) so other paradigms can run it as
// a sub-agent, for example per plan step or as a Reflexion actor; NewReAct
// wraps it as the `react` node. A paradigm that searches over ReAct
// trajectories takes the loop one turn at a time: Loop.Begin starts a
// Branch and Branch.Next extends a copy of it by one turn, with every guard
// below, so several next steps can be sampled from one state (LATS does).
//
// Tools are called through node.CallTool, as every node calls them: usage,
// trace events, timeouts, panics and unknown tools are handled there, and
// the loop passes its localized messages and ObservationLimit.
//
// # Modes
//
// In text mode the model writes "Thought: / Action: / Action Input:" (or the
// ReAct paper's "Action: Tool[input]") and the reply is parsed by
// executor/parse. Stop words end the reply before an "Observation:", and
// since some providers ignore stop words the parser also cuts any
// observation the model invented. In tools mode the provider's native tool
// calling is used: the reply's text is the thought, tool calls are read from
// every choice (Anthropic returns them in a separate one), the calls of one
// turn run concurrently and are answered in order, and a reply without tool
// calls is the final answer.
//
// # Guards
//
// Each guard emits a trace event of kind guard (or parse_error):
//   - a reply that cannot be parsed is answered with the parser's format
//     error; MaxParseFailures in a row stop the run (failure "parse");
//   - an unknown tool is answered with the list of real tool names;
//   - a call that repeats an earlier (tool, input) and gets the same
//     observation again gets a warning appended to that observation; more
//     than MaxRepeats repeats of one (tool, input, observation) stop the
//     run (failure "loop"). A repeated call whose result changed, as
//     paging with the same Lookup[x] does, is progress, not a repeat;
//   - an empty reply is retried up to MaxEmptyRetries times;
//   - a tool error, panic or timeout becomes an "Error: ..." observation;
//   - observations longer than ObservationLimit are cut with a marker;
//   - only the last KeepSteps steps are shown in full: older long
//     observations are replaced by a line such as
//     "[observation of step 2 elided: 1,234 chars; it began "..."]"; the
//     system prompt, the tool list and the task are never dropped;
//   - after MaxIterations turns without an answer the run stops (failure
//     "budget").
//
// A stopped run asks the model once more, without tools, for its best answer
// from the work so far (role "finalize"); the outcome stays incomplete.
package executor
