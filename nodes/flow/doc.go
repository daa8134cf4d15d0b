// Package flow holds general-purpose node kinds that steer a pipeline by
// the run state rather than by a paradigm of their own:
//
//   - router (NewRouter) follows one of its declared routes, chosen by
//     the first of an ordered list of boolean expressions over the run
//     state that holds, or by one model call that classifies the task
//     into the declared labels;
//   - set (NewSet) assigns the run's vars (state.State.Vars) from
//     expressions over the run state.
//
// Expressions are written in the language of github.com/expr-lang/expr.
// They see the run state as an ExprEnv (question, answer, complete, done,
// failure, reason, steps, replans, trials, candidates, usage and vars) and
// are compiled and type-checked when the node is built, so a misspelt
// field or a router condition that is not a boolean is an error of the
// pipeline file, at the setting's line, before anything runs.
package flow
