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

func TestJSONScannerSkipsStringsAndCountsDepth(t *testing.T) {
	text := `{"a": "x{[\"]", "b": [1, {}]}`
	var scan textutil.JSONScanner
	var outside []byte
	deepest := 0
	for i := 0; i < len(text); i++ {
		if scan.Step(text[i]) && text[i] != ' ' {
			outside = append(outside, text[i])
			deepest = max(deepest, scan.Depth)
		}
	}
	assert.Equal(t, "{:,:[1,{}]}", string(outside), "bytes inside strings, escaped quotes included, are not outside")
	assert.Equal(t, 3, deepest)
	assert.Equal(t, 0, scan.Depth, "every bracket and brace closed")
}
