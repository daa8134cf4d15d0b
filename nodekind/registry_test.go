package nodekind_test

import (
	"context"
	"testing"

	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type nopNode struct{}

func (nopNode) Run(context.Context, *state.State) (string, error) { return "", nil }

func newNop(nodekind.Env, nodekind.Spec) (nodekind.Built, error) {
	return nodekind.Built{Node: nopNode{}}, nil
}

func TestRegistryLooksUpKindsAndNamesTheKnownOnesWhenUnknown(t *testing.T) {
	reg := nodekind.NewRegistry().MustRegister(nodekind.Kind{Name: "b", New: newNop}, nodekind.Kind{Name: "a", New: newNop})
	assert.Equal(t, []string{"a", "b"}, reg.Names())
	ctor, err := reg.Constructor("a")
	require.NoError(t, err)
	built, err := ctor(nodekind.Env{}, nodekind.Spec{ID: "x", Type: "a"})
	require.NoError(t, err)
	assert.Equal(t, nopNode{}, built.Node)

	_, err = reg.Constructor("c")
	require.ErrorIs(t, err, nodekind.ErrUnknownType)
	assert.Contains(t, err.Error(), `"c" (known types: a, b)`)
}

func TestRegistrySuggestsTheNearestTypeFirst(t *testing.T) {
	reg := nodekind.NewRegistry().MustRegister(nodekind.Kind{Name: "react", New: newNop}, nodekind.Kind{Name: "cot", New: newNop})
	_, err := reg.Lookup("reactt")
	require.ErrorIs(t, err, nodekind.ErrUnknownType)
	assert.EqualError(t, err, `unknown node type "reactt" (did you mean "react"? known types: cot, react)`)
}

func TestRegistryRejectsDuplicatesAndIncompleteKinds(t *testing.T) {
	reg := nodekind.NewRegistry()
	require.NoError(t, reg.Register(nodekind.Kind{Name: "a", New: newNop}))
	assert.ErrorIs(t, reg.Register(nodekind.Kind{Name: "a", New: newNop}), nodekind.ErrBadKind)
	assert.ErrorIs(t, reg.Register(nodekind.Kind{Name: "b"}), nodekind.ErrBadKind)
	assert.ErrorIs(t, reg.Register(nodekind.Kind{New: newNop}), nodekind.ErrBadKind)
	assert.Panics(t, func() { reg.MustRegister(nodekind.Kind{Name: "a", New: newNop}) })
}
