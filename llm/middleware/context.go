package middleware

import "context"

// callValues is the one value this package keeps in a context: what the
// layers of one model call share across the fixed signatures between them
// (llms.Model.GenerateContent, http.RoundTripper), namely the call's
// attempt counter (WithAttemptCounter), the current attempt's
// Observation (WithObservation) and whether a partly streamed attempt may
// be retried (WithRestartableStream), and the reply limit of
// NewReplyLimit, which LongLineTransport cuts streamed strings to. Each
// With function returns a child context whose value copies the parent's
// and changes one field.
type callValues struct {
	counter     *AttemptCounter
	obs         *Observation
	restartable bool
	replyLimit  int
}

type callKey struct{}

// valuesOf returns the call values of ctx; the zero value when it has none.
func valuesOf(ctx context.Context) callValues {
	if v, ok := ctx.Value(callKey{}).(*callValues); ok {
		return *v
	}
	return callValues{}
}

// withValues returns a child of ctx carrying its call values with set
// applied.
func withValues(ctx context.Context, set func(*callValues)) context.Context {
	v := valuesOf(ctx)
	set(&v)
	return context.WithValue(ctx, callKey{}, &v)
}
