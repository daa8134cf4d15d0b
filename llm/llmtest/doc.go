// Package llmtest holds test models: small, composable implementations of
// langchaingo's llms.Model for the module's tests, in place of a
// hand-written fake in each package.
//
// Models that answer:
//
//   - Func: a function is the model.
//   - Fixed: the same reply (Reply, ToolReply, Respond) or the same error
//     (Fail) for every call.
//   - Sequence: call i goes to the i-th model, the last one again once they
//     run out (Seq, Replies, FailTimes).
//   - Echo: the text of the last message, after a prefix.
//   - Stream: chunks written through the call's llms.WithStreamingFunc,
//     paced or held before each, and optionally breaking mid-stream.
//
// Models that wrap another (a nil Model gives every call an empty reply):
//
//   - Recorder: keeps each request (messages, call options, what Meta
//     takes from the context) and the most calls in flight at once.
//   - Gate: holds each call until the test releases it (or opens the gate)
//     or the call's context ends; Gate.Wrap puts more models behind it.
//   - Latency: answers after a delay, or with the context's error.
//
// They compose: a recorded, delayed sequence of replies is
//
//	rec := &llmtest.Recorder{Model: &llmtest.Latency{Delay: time.Millisecond, Model: llmtest.Replies("a", "b")}}
//
// Every model is safe for concurrent use (a Func when its function is), and
// its Call goes through GenerateContent with llms.GenerateFromSinglePrompt.
// Models that wait (Gate, Latency, Stream) stop with the call's context;
// the others answer whatever the context, as the fakes they replace did.
//
// The package imports only langchaingo's llms and the standard library, so
// the tests of any package of the module can use it.
package llmtest
