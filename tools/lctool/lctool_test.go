package lctool_test

import (
	"context"
	"errors"
	"testing"

	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/lctool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type failing struct{ err error }

func (failing) Name() string                                   { return "Failing Tool" }
func (failing) Description() string                            { return "\t\"fails\"\n" }
func (f failing) Call(context.Context, string) (string, error) { return "", f.err }

func TestWrapNamesErrorsAndKeepsCancellation(t *testing.T) {
	boom := errors.New("boom")
	w := lctool.Wrap(failing{boom}, lctool.WithName("fail"))
	_, err := w.Call(context.Background(), "x")
	require.ErrorIs(t, err, boom)
	assert.EqualError(t, err, "fail: boom")
	assert.Equal(t, "fails", w.Description())
	assert.Equal(t, tools.StringSchema("input", "the tool input"), tools.SchemaOf(w))

	_, err = lctool.Wrap(failing{context.Canceled}).Call(context.Background(), "x")
	assert.Equal(t, context.Canceled, err, "a cancellation is returned unwrapped")
}

func TestWrapOptions(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}
	w := lctool.Wrap(failing{}, lctool.WithDescription("custom"), lctool.WithSchema(schema), lctool.WithMeta(tools.Meta{Network: true}))
	assert.Equal(t, "Failing Tool", w.Name())
	assert.Equal(t, "custom", w.Description())
	assert.Equal(t, schema, tools.SchemaOf(w))
	assert.True(t, tools.MetaOf(w).Network)
	assert.Equal(t, failing{}, w.Unwrap())
}
