package textutil_test

import (
	"testing"

	"github.com/planner-engine/planner/internal/textutil"
	"github.com/stretchr/testify/assert"
)

func TestClipCutsAtRunesAndMarksTheCut(t *testing.T) {
	assert.Equal(t, "short", textutil.Clip("short", 5))
	assert.Equal(t, "shor…", textutil.Clip("shorter", 4))
	assert.Equal(t, "日本…", textutil.Clip("日本語です", 2), "runes, not bytes")
	assert.Equal(t, "", textutil.Clip("", 0))
	assert.Equal(t, "…", textutil.Clip("x", 0))
}

func TestOneLineFoldsWhiteSpace(t *testing.T) {
	assert.Equal(t, "a b c", textutil.OneLine("  a\n\tb   c \n"))
	assert.Equal(t, "", textutil.OneLine(" \n "))
}

func TestCountAgreesWithItsNumber(t *testing.T) {
	assert.Equal(t, "1 node", textutil.Count(1, "node", "nodes"))
	assert.Equal(t, "0 nodes", textutil.Count(0, "node", "nodes"))
	assert.Equal(t, "4 replies", textutil.Count(4, "reply", "replies"))
}
