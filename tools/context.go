package tools

import "context"

// callEnv is the one value this package keeps in a context: what a run
// gives the tools it calls across the fixed signature of Tool.Call,
// namely the run's state for stateful tools (WithRunState) and its vars
// (WithVars). A child context gets a copy with one field changed, so
// what a parent context carries never changes.
type callEnv struct {
	run  *RunState
	vars VarStore
}

type callEnvKey struct{}

// envOf returns the call environment of ctx; nil when it has none.
func envOf(ctx context.Context) *callEnv {
	e, _ := ctx.Value(callEnvKey{}).(*callEnv)
	return e
}

// withEnv returns a child of ctx whose call environment is ctx's with
// change applied.
func withEnv(ctx context.Context, change func(*callEnv)) context.Context {
	var e callEnv
	if parent := envOf(ctx); parent != nil {
		e = *parent
	}
	change(&e)
	return context.WithValue(ctx, callEnvKey{}, &e)
}
