// Package autopilot holds the `autopilot` node kind: it answers a task with
// one of several declared candidate pipelines (paradigms: a shipped config
// file, the user's, or an inline graph), trying the cheapest first and
// escalating to the next when an answer fails its check.
//
// # Policies
//
// "cascade" (the default) runs the candidates in their declared order (in
// the policy's cost order when a policy file is loaded), accepts the first
// answer whose check passes, and hands each next candidate what the failed
// attempts learned through its question (the escalation template). The
// last candidate's answer stands even when its check fails; the run is then
// marked incomplete (failure "wrong", or the nested run's own failure) with
// a reason naming the failed check.
//
// "learned" loads a fitted policy (package autopilot, written by `planner
// autopilot fit`) and runs first the candidate it picks for the task (best
// expected success minus cost_weight × cost over the most similar past
// tasks); if that answer fails its check, the cascade goes on over the
// remaining candidates in the policy's cost order.
//
// # Checks
//
// Every candidate's answer passes a check: the node's `check:` block, or
// the candidate's own, which replaces it as a whole. A check is the
// conjunction of what it enables, tried cheapest first: complete (on by
// default), agreement (k samples, a strict majority after normalisation),
// confidence (a reported confidence at or above a threshold), a verifier
// (a tool, a gold-free scorer or a Starlark program) and an LLM judge.
//
// # Visibility, state and replay
//
// The plan (order, and the policy's pick with its neighbours and
// estimates) and every check verdict are trace events of kind decision,
// whose Data["autopilot"] is "plan" or "check". The chosen candidate and
// the path tried are the vars autopilot.candidate and autopilot.path (a
// JSON list of names). Each choice is journaled as a call of the pseudo
// tool planner.autopilot (JournalTool), so that a resumed thread replays
// the plan and the verdicts even when the policy file changed meanwhile;
// the nested runs are labelled "candidate NAME" (and "candidate NAME
// sample I" for agreement samples), so their calls replay to the same
// place. Each candidate's model calls carry its pipeline's name as
// llm.CallMeta.Pipeline, so models that play recorded replies per config
// play each candidate its own.
package autopilot

import "github.com/planner-engine/planner/nodekind"

// Templates declares the templates of `autopilot`: the first candidate's
// question, the escalated candidates' question (with the failed attempts)
// and the judge's prompt (with the answer to check). The verifier tool's
// input (check.verifier.input) sees what the judge's prompt sees.
func Templates() []nodekind.TemplateSpec {
	return []nodekind.TemplateSpec{{Key: "question"}, escalationSpec(), judgeSpec()}
}
