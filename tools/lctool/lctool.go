// Package lctool plugs any langchaingo tool (github.com/tmc/langchaingo/tools.Tool)
// into planner's tool registry. The two interfaces share their method set,
// so a langchaingo tool already is a tools.Tool; Wrap adds what planner
// knows about a tool and langchaingo does not say: a model-friendly name,
// metadata (read-only, network, timeout, approval), an input schema for
// native tool calling, a description without the quotes and tabs
// langchaingo's tools write into theirs, and errors that name the tool.
package lctool

import (
	"context"
	"errors"
	"fmt"

	"github.com/planner-engine/planner/tools"
	lctools "github.com/tmc/langchaingo/tools"
)

// Option configures Wrap.
type Option func(*Tool)

// WithName sets the name the model calls the tool by. Default: the
// langchaingo tool's own Name.
func WithName(name string) Option { return func(t *Tool) { t.name = name } }

// WithDescription replaces the tool's description. Default: the
// langchaingo tool's Description, tidied by tools.CleanDescription.
func WithDescription(d string) Option { return func(t *Tool) { t.desc = d } }

// WithMeta sets the tool's metadata (read-only, network, timeout, needs
// approval). Default: the zero tools.Meta, which claims nothing: not
// read-only, no network, the registry's default timeout.
func WithMeta(m tools.Meta) Option { return func(t *Tool) { t.meta = m } }

// WithSchema sets the JSON schema of the tool's input for native tool
// calling. Default: none, so the tool is offered as taking one string
// argument "input", which is what langchaingo tools take.
func WithSchema(s map[string]any) Option { return func(t *Tool) { t.schema = s } }

// Tool is a langchaingo tool with planner's name, description, metadata
// and schema. It implements tools.Tool, tools.MetaProvider and
// tools.Schemer.
type Tool struct {
	inner  lctools.Tool
	name   string
	desc   string
	meta   tools.Meta
	schema map[string]any
}

// Wrap returns t as a planner tool configured by opts.
func Wrap(t lctools.Tool, opts ...Option) *Tool {
	w := &Tool{inner: t, name: t.Name()}
	for _, o := range opts {
		o(w)
	}
	return w
}

// Name implements tools.Tool.
func (t *Tool) Name() string { return t.name }

// Description implements tools.Tool.
func (t *Tool) Description() string {
	if t.desc != "" {
		return t.desc
	}
	return tools.CleanDescription(t.inner.Description())
}

// Meta implements tools.MetaProvider.
func (t *Tool) Meta() tools.Meta { return t.meta }

// Schema implements tools.Schemer: the schema given with WithSchema, or
// one string argument "input".
func (t *Tool) Schema() map[string]any {
	if t.schema != nil {
		return t.schema
	}
	return tools.StringSchema("input", "the tool input")
}

// Call runs the langchaingo tool. An error names the tool, except a
// cancellation, which is returned as it is.
func (t *Tool) Call(ctx context.Context, input string) (string, error) {
	out, err := t.inner.Call(ctx, input)
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return out, fmt.Errorf("%s: %w", t.name, err)
	}
	return out, err
}

// Unwrap returns the langchaingo tool.
func (t *Tool) Unwrap() lctools.Tool { return t.inner }
