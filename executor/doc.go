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
// # Completion style
//
// With style "completion" the loop runs as the ReAct paper's harness did
// (hotpotqa.ipynb and FEVER.ipynb in github.com/ysymyth/ReAct). The prompt
// is one text, sent as one user message: the system template's output as
// written (the instruction and the few-shot examples), the prompt
// template's (the question line, "Question: ..." or "Claim: ..."), a line
// break, then the steps so far, each rendered as the harness appended it,
//
//	Thought {i}: {thought}\nAction {i}: {action}\nObservation {i}: {observation}\n
//
// and finally "Thought {i}:" for the model to continue, with the stop word
// "\nObservation {i}:". The reply (with or without a leading "Thought {i}:")
// is stripped and must split at "\nAction {i}: " into exactly two parts,
// the thought and the action; otherwise its first line is the thought and
// a second call, the prompt followed by "Thought {i}: {thought}\nAction
// {i}:" with the stop word "\n", gives the action. The action is read as
// WikiEnv read it: Name[input] with the input running to the action's
// final "]". Finish[answer] ends the run with the answer (possibly empty);
// a known tool gets the input verbatim (trimmed); anything else gets the
// observation "Invalid action: " and the action with its first letter
// lower-cased. Observations lose their literal backslash-n sequences, as
// the harness removed them. MaxIterations counts steps (the action-only
// call is part of its step); after the last one the answer is the
// finalizer's, or empty with finalize off, as the harness's finish[] gave.
// The parse-failure, empty-reply and repeat guards do not apply: the
// harness had none. Examples can be read from the paper's JSON prompt
// files by key (examples_file, examples_key), with built-in examples in
// the paper's format over the demo corpus as a fallback
// (examples_fallback).
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
//   - an empty reply is retried up to MaxEmptyRetries times, with a
//     nudge appended (llm.Model.Call does it; MaxEmptyRetries replaces
//     the llm block's empty_retries for the loop's turns);
//   - a tool error, panic or timeout becomes an "Error: ..." observation;
//   - observations longer than ObservationLimit are cut with a marker
//     (-1 lifts the limit);
//   - older steps are compacted: their long observations are replaced by
//     a line such as
//     "[observation of step 2 elided: 1,234 chars; it began "..."]" and
//     their format errors dropped; the system prompt, the tool list and
//     the task are never dropped. With compaction "block" (the default)
//     nothing shown is rewritten until the steps shown in full pass
//     CompactionBudget characters; then all but the last KeepSteps are
//     compacted at once, so between compactions each call's prompt
//     extends the previous one and provider prompt caches (which hit
//     only on an exact prefix) hit. With "window" (and always in
//     completion style) only the last KeepSteps steps are shown in full
//     and each call compacts the step that left them. With "summarize"
//     a block is compacted when "block" would compact it, but the model
//     writes a summary of it (role "summarize"), shown after the task in
//     place of the block's steps; the recall tool (ReActConfig.Recall)
//     fetches back any earlier tool output in full;
//   - after MaxIterations turns without an answer the run stops (failure
//     "budget").
//
// A stopped run asks the model once more, without tools, for its best answer
// from the work so far (role "finalize"); the outcome stays incomplete.
package executor
