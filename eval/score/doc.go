// Package score holds pluggable answer scorers for planner compare: each is
// an extra report column beside the built-in scorer of a suite. A Scorer
// judges one Input (task id, question, answer, reference) and returns a
// Verdict: a Score in [0, 1], a Pass verdict, a one-line Reason, the Usage
// judging cost (model calls, tokens, dollars; zero for scorers that call no
// model), whether it came from the judge cache, and whether the answer was
// Unscorable (a report leaves such verdicts out of its averages).
//
// # Specs
//
// Parse turns a command-line spec into a scorer; ParseAll parses one
// comparison's list and rejects two specs with the same column name
// (Scorer.Name). Bad specs fail with errors wrapping ErrBadSpec.
//
//	em, contains, numeric, numeric:TOL, choice:A|B|..., game24, sorting
//	    package verify's scorers (verify.ByName). Score is 1 for a correct
//	    answer and 0 otherwise (for em that is the exact match; token F1
//	    stays in the built-in column), Pass is verify's Correct, Reason its
//	    Detail; a task without a usable reference is Unscorable.
//	judge, judge:RUBRIC
//	    an LLM judge (Options.JudgeModel), with the built-in rubric or the
//	    rubric template in file RUBRIC. Column "judge" or "judge:NAME",
//	    NAME the file's base name without extension.
//	code:FILE.star
//	    a scorer written in Starlark. Column "code:NAME".
//	exec:COMMAND ARGS...
//	    an external command. Column "exec:NAME", NAME the base name of the
//	    command's program.
//
// # The judge
//
// A rubric is a Go text/template over the fields .Question, .Answer,
// .Reference (empty when the task has none) and .TaskID; it must show
// {{.Answer}}. DefaultRubric asks whether the answer agrees in substance
// with the reference. The judge renders the rubric, appends the verdict
// format, and sends the prompt as one user message at temperature 0. The
// reply must hold a JSON object
//
//	{"score": 0.0 to 1.0, "pass": true or false, "reason": "one sentence"}
//
// which is read tolerantly: inside a Markdown code fence or amid prose,
// score or pass written as strings, and either may be left out (a score
// alone passes from PassThreshold, 0.5; pass alone scores 1 or 0). A reply
// without such an object is answered once with feedback; a second bad
// reply fails with ErrJudgeReply. A failed model call fails with
// ErrJudgeCall. Usage counts every call, a retry included, with the tokens
// the provider reported (usage.FromResponse) priced by Options.Price.
//
// # The judge cache
//
// With Options.JudgeCache set, verdicts are kept in the SQLite table
// judge_verdicts of that file, apart from the comparison's results, keyed
// by a SHA-256 of the judge model's name (Options.JudgeModelName) and the
// rendered prompt: the same answer to the same task under the same rubric
// and model is judged once, across configs and runs. A cached verdict has
// Cached set and the Usage it cost when first made, so a report can say
// what the cache saved. Concurrent Score calls for one prompt make one
// model call; the cache may be shared by processes. Close the scorers
// (Close) to close the file.
//
// # Starlark scorers
//
// A code scorer is a Starlark file (the dialect of package tools/code:
// Python-like, with the math and json modules, no load, files, network or
// clock) that defines
//
//	def score(question, answer, reference):
//	    ...
//	    return {"score": 0.5, "pass": False, "reason": "half the items"}
//
// returning a number in [0, 1] (Pass from PassThreshold), a bool (Score 1
// or 0), or a dict with the keys "score", "pass", "reason" and
// "unscorable" (a dict needs score or pass, or unscorable true). Any other
// result, None included, fails with ErrBadVerdict. Each answer runs the
// whole file and then the call, in a fresh interpreter under the code
// tool's limits (Options.Code: steps, time, memory, ...). Parse runs the
// file once to report syntax errors as FILE:LINE and a missing score
// function; a runtime failure or a limit fails Score with ErrScorerFailed,
// naming the task, the file and line, and matching the code tool's
// sentinel (code.ErrRuntime, code.ErrStepLimit, ...).
//
// # Exec scorers
//
// An exec scorer's command line is split into words as a shell would
// (SplitWords: quotes and backslashes, no expansion) and run without a
// shell, once per answer, in the current directory and with the
// process's environment, with
//
//	{"task_id": "...", "question": "...", "answer": "...", "reference": "..."}
//
// on its standard input. It must exit 0 and print one JSON object, with
// the keys of a Starlark scorer's dict:
//
//	{"score": 1, "pass": true, "reason": "matches the reference"}
//
// Unknown keys, a score outside [0, 1] or text that is not JSON fail with
// ErrBadVerdict; a non-zero exit fails with ErrScorerFailed, showing the
// last lines of its standard error. A command running longer than
// Options.ExecTimeout (default 30s) is killed with its process group and
// fails with ErrExecTimeout.
package score
