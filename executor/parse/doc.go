// Package parse turns one ReAct model completion into exactly one decision:
// a tool call (KindAction), a final answer (KindFinal), or a format error
// (KindInvalid) whose message tells the model how to repair its reply.
//
// It is tolerant of the ways real models deviate from the prompt, and strict
// about the two mistakes that corrupt a run: inventing tool results and
// answering before seeing them.
//
// # Accepted forms
//
// Two grammars are understood; Format selects one or both (FormatAuto, the
// default, accepts both).
//
// FormatReAct (LangChain MRKL style):
//
//	Thought: I should look this up.
//	Action: search
//	Action Input: Barack Obama
//
//	Thought: I now know the answer.
//	Final Answer: 1961
//
// FormatPaper (the ReAct paper's prompts):
//
//	Thought 1: I need to search Milhouse.
//	Action 1: Search[Milhouse]
//
//	Action 3: Finish[Richard Nixon]
//
// FormatReAct rejects Tool[input] after "Action:" and reads bare call lines
// as text; FormatPaper rejects "Final Answer:" and "Action: tool" without
// brackets. Error messages show the chosen format.
//
// Labels are matched at the start of a line, case-insensitively, with an
// optional step number ("Action Input 2:"), an ASCII or full-width colon,
// Markdown emphasis or heading marks around them ("**Action:**", "## Thought:")
// and the Chinese forms 思考 (Thought), 行动 (Action), 行动输入 (Action Input),
// 最终答案 (Final Answer), 观察 (Observation) and 问题 (Question). A label's
// value runs from the colon to the next label, so values may start on the
// following lines and may span several lines.
//
// In the paper grammar, the call Tool[input] may follow "Action:" (on the same
// line or further down) or stand alone on a line of its own; brackets nest, so
// "click[Pack [ 20 Towelettes ] + Bag]" has the input "Pack [ 20 Towelettes ]
// + Bag". An input whose brackets never balance runs to the last "]". Finish[x]
// is the final answer x. In either grammar an action whose tool is "Finish" or
// "Final Answer" is read as the final answer given by its input.
//
// # Cleaning
//
// Tool inputs are trimmed; one pair of matching quotes or backticks wrapping
// the whole input is removed only when the quote character does not occur
// inside, so `say "hi"` and `"a" or "b"` keep their quotes. A Markdown code
// fence (``` or ```json) around an input is removed. An input that starts with
// a JSON object is kept exactly as written (not re-encoded); text after the
// object's closing brace is dropped with a note. WithVerbatimCalls keeps the
// input of a Tool[input] call as written instead, only trimmed, as the ReAct
// paper's harness passed it. Final answers are trimmed but
// otherwise kept as written. Tool names are trimmed of surrounding quotes,
// backticks, asterisks, periods and colons; use NormalizeToolName to match
// them against registered tools. Line endings "\r\n" and "\r" count as "\n".
//
// An Action with no Action Input, or an empty one, is accepted with an empty
// input (and a note): whether a tool accepts empty input is for the tool to
// decide. An Action whose tool is "None", "N/A" or empty is ignored, unless it
// has a non-empty input, which makes it an error. An Action Input that
// directly precedes its Action is paired with it. Lines below a react-form
// "Action: tool" line are its input only when they are a code fence or a JSON
// object and no "Action Input:" follows.
//
// # Invented observations
//
// Observations are written by the engine, never by the model. Any line that
// starts with an Observation label ("Observation:", "Observation 2:", "观察：")
// marks the start of text the model invented; it and everything after it are
// removed before parsing (see CutObservation) and Result.Truncated is set.
// A returned Thought, Tool, Input or Answer never contains a line starting
// with an Observation label. Observation text written without its label
// cannot be told apart from a multi-line input and stays in it. A "Question:" label after the first action or
// answer starts an invented new episode and is ignored from there on.
//
// # Several decisions in one reply
//
// Only one decision is returned; the first one in the text is the candidate.
//
//   - Several actions: the first is taken and a note records how many were
//     ignored, including several calls on one line ("Search[A], Search[B]").
//   - An action before a final answer: the action wins. The answer was written
//     without the action's result, which is exactly how an invented
//     observation followed by an invented answer would hijack the run if the
//     answer won.
//   - A final answer before an action: the reply is rejected as ambiguous
//     (KindInvalid) and the model is asked to send one or the other. Neither
//     reading is safe: the answer may be a premature guess the model then
//     doubted, and the action may have side effects. A final answer followed
//     only by a "Question:" (an invented next episode), a "None" action or
//     another final answer is accepted.
//   - A malformed first action (no tool, unclosed bracket) is reported as an
//     error even when a valid decision follows, so the model repairs it rather
//     than the engine guessing.
//
// Notes on the Result record every such choice so traces show what was
// dropped.
package parse
