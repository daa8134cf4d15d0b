package cassette

import (
	"fmt"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/tmc/langchaingo/llms"
)

// NewRequest returns the recorded form of a live call: its messages and the
// call options that affect the answer. Other stores of model exchanges
// (package journal) use it so that every record of a call has one shape.
func NewRequest(msgs []llms.MessageContent, opts []llms.CallOption) Request {
	return newRequest(msgs, opts)
}

// NewResponse returns the recorded form of resp.
func NewResponse(resp *llms.ContentResponse) *Response { return newResponse(resp) }

// LLM rebuilds a fresh llms.ContentResponse from a recorded one; token
// counts in GenerationInfo come back as int, as providers report them.
func (r *Response) LLM() *llms.ContentResponse { return r.toLLM() }

// Diff returns a unified diff, in YAML form (one prompt line per line),
// from the request named fromName to the one named toName.
func Diff(fromName string, from Request, toName string, to Request) string {
	render := func(r Request) string {
		tree, err := toTree(r)
		if err != nil {
			return fmt.Sprintf("(cannot render request: %v)\n", err)
		}
		return renderYAML(tree)
	}
	diff, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(render(from)), B: difflib.SplitLines(render(to)),
		FromFile: fromName, ToFile: toName, Context: 3,
	})
	if err != nil {
		return fmt.Sprintf("(diff unavailable: %v)", err)
	}
	return diff
}
