package node_test

import (
	"context"
	"testing"

	"github.com/planner-engine/planner/agent"
	"github.com/planner-engine/planner/node"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type nopNode struct{}

func (nopNode) Run(context.Context, *agent.State) (string, error) { return "", nil }

func newNop(node.Env, node.Spec) (node.Built, error) { return node.Built{Node: nopNode{}}, nil }

func TestRegistryLooksUpKindsAndNamesTheKnownOnesWhenUnknown(t *testing.T) {
	reg := node.NewRegistry().MustRegister(node.Kind{Name: "b", New: newNop}, node.Kind{Name: "a", New: newNop})
	assert.Equal(t, []string{"a", "b"}, reg.Names())
	ctor, err := reg.Constructor("a")
	require.NoError(t, err)
	built, err := ctor(node.Env{}, node.Spec{ID: "x", Type: "a"})
	require.NoError(t, err)
	assert.Equal(t, nopNode{}, built.Node)

	_, err = reg.Constructor("c")
	require.ErrorIs(t, err, node.ErrUnknownType)
	assert.Contains(t, err.Error(), `"c" (known types: [a b])`)
}

func TestRegistryRejectsDuplicatesAndIncompleteKinds(t *testing.T) {
	reg := node.NewRegistry()
	require.NoError(t, reg.Register(node.Kind{Name: "a", New: newNop}))
	assert.ErrorIs(t, reg.Register(node.Kind{Name: "a", New: newNop}), node.ErrBadKind)
	assert.ErrorIs(t, reg.Register(node.Kind{Name: "b"}), node.ErrBadKind)
	assert.ErrorIs(t, reg.Register(node.Kind{New: newNop}), node.ErrBadKind)
	assert.Panics(t, func() { reg.MustRegister(node.Kind{Name: "a", New: newNop}) })
}
