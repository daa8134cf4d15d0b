package viewer_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planner-engine/planner/eval/viewer"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runFolder writes a run folder whose trace file holds two runs as
// trace.JSONL writes them: run a on lines 1-3, run b on lines 4-5.
func runFolder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "traces", "sim"), 0o755))
	f, err := os.Create(filepath.Join(dir, "traces", "sim", "react.jsonl"))
	require.NoError(t, err)
	sink := trace.NewJSONL(f)
	for _, e := range []trace.Event{
		{RunID: "a", Seq: 1, Kind: trace.KindRunStart}, {RunID: "a", Seq: 2, Kind: trace.KindThought, Node: "act", Text: "think"},
		{RunID: "a", Seq: 3, Kind: trace.KindRunEnd},
		{RunID: "b", Seq: 1, Kind: trace.KindLLMCall, Node: "act", Usage: &trace.Usage{PromptTokens: 7}, ElapsedMS: 12},
		{RunID: "b", Seq: 2, Kind: trace.KindAnswer, Text: "24"},
	} {
		sink.Emit(e)
	}
	require.NoError(t, sink.Close())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "results.db"), []byte("not a trace"), 0o644))
	return dir
}

func TestReadTrace(t *testing.T) {
	dir := runFolder(t)
	evs, err := viewer.ReadTrace(dir, "traces/sim/react.jsonl:4-5")
	require.NoError(t, err)
	require.Len(t, evs, 2)
	assert.Equal(t, "b", evs[0].RunID)
	assert.Equal(t, 7, evs[0].Usage.PromptTokens)
	assert.InDelta(t, 12, evs[0].ElapsedMS, 0)
	assert.Equal(t, "24", evs[1].Text)

	evs, err = viewer.ReadTrace(dir, "traces/sim/react.jsonl:2-2")
	require.NoError(t, err)
	require.Len(t, evs, 1)
	assert.Equal(t, "think", evs[0].Text)
}

// References that are malformed, leave the traces folder or ask for
// lines the file lacks are refused, each with ErrBadRef and the cause.
func TestReadTraceRefusesBadRefs(t *testing.T) {
	dir := runFolder(t)
	outside := filepath.Join(t.TempDir(), "secret.jsonl")
	require.NoError(t, os.WriteFile(outside, []byte(`{"kind":"answer","text":"secret"}`+"\n"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "traces", "sim", "link.jsonl")))
	require.NoError(t, os.Symlink(filepath.Dir(outside), filepath.Join(dir, "traces", "out")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "traces", "bad.jsonl"), []byte("{not json\n"), 0o644))
	for _, c := range []struct{ ref, why string }{
		{"", "has no line range"},
		{"traces/sim/react.jsonl", "has no line range"},
		{"traces/sim/react.jsonl:", "is not <first>-<last>"},
		{"traces/sim/react.jsonl:0-2", "is not <first>-<last>"},
		{"traces/sim/react.jsonl:3-2", "is not <first>-<last>"},
		{"traces/sim/react.jsonl:a-b", "is not <first>-<last>"},
		{"traces/sim/react.jsonl:-1-2", "is not <first>-<last>"},
		{"/etc/passwd:1-1", "relative to the run folder"},
		{outside + ":1-1", "relative to the run folder"},
		{`traces\sim\react.jsonl:1-1`, "with '/' only"},
		{"../traces/sim/react.jsonl:1-1", "may not contain '..'"},
		{"traces/../results.db:1-1", "may not contain '..'"},
		{"traces/sim/../../results.db:1-1", "may not contain '..'"},
		{"results.db:1-1", "under traces/"},
		{"traces/sim/react.txt:1-1", "under traces/"},
		{"traces//sim/react.jsonl:1-1", "clean path"},
		{"traces/./sim/react.jsonl:1-1", "clean path"},
		{"traces/sim/nosuch.jsonl:1-1", "no such trace file"},
		{"traces/sim/react.jsonl:4-9", "has 5 lines"},
		{"traces/sim/react.jsonl:6-6", "has 5 lines"},
		{"traces/bad.jsonl:1-1", "line 1 is not a trace event"},
		{"traces/sim/link.jsonl:1-1", "link.jsonl"},
		{"traces/out/secret.jsonl:1-1", "secret.jsonl"},
	} {
		evs, err := viewer.ReadTrace(dir, c.ref)
		require.ErrorIs(t, err, viewer.ErrBadRef, "%q", c.ref)
		assert.Contains(t, err.Error(), c.why, "%q", c.ref)
		assert.Nil(t, evs, c.ref)
	}
}

// A reference over the bounds is refused before anything is read, or as
// soon as the lines read pass MaxTraceBytes.
func TestReadTraceBounds(t *testing.T) {
	dir := runFolder(t)
	_, err := viewer.ReadTrace(dir, fmt.Sprintf("traces/sim/react.jsonl:1-%d", viewer.MaxTraceLines+1))
	require.ErrorIs(t, err, viewer.ErrTooLarge)
	assert.Contains(t, err.Error(), "over the limit of 5000")

	big := `{"kind":"thought","text":"` + strings.Repeat("x", viewer.MaxTraceBytes) + `"}` + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "traces", "big.jsonl"), []byte(`{"kind":"run_start"}`+"\n"+big), 0o644))
	_, err = viewer.ReadTrace(dir, "traces/big.jsonl:1-2")
	require.ErrorIs(t, err, viewer.ErrTooLarge)
	assert.Contains(t, err.Error(), "hold more than")
	evs, err := viewer.ReadTrace(dir, "traces/big.jsonl:1-1")
	require.NoError(t, err, "a long line outside the range is skipped, not read into memory")
	assert.Len(t, evs, 1)

	_, err = viewer.ReadTrace(filepath.Join(dir, "nosuch"), "traces/sim/react.jsonl:1-1")
	assert.ErrorContains(t, err, "opening the run folder")
}

// ReadTraces reads many runs at once, each trace file once: every good
// reference gets what ReadTrace gives it, overlapping ranges included,
// and each bad one is left out with its cause in the error.
func TestReadTracesReadsEachRunAsReadTraceDoes(t *testing.T) {
	dir := runFolder(t)
	good := []string{"traces/sim/react.jsonl:4-5", "traces/sim/react.jsonl:1-3", "traces/sim/react.jsonl:2-4"}
	bad := []string{"traces/sim/react.jsonl:5-9", "traces/sim/other.jsonl:1-1", "../react.jsonl:1-1"}
	got, err := viewer.ReadTraces(dir, append(append([]string{}, good...), bad...))
	require.ErrorIs(t, err, viewer.ErrBadRef)
	for _, b := range bad {
		assert.NotContains(t, got, b)
		assert.Contains(t, err.Error(), strings.TrimPrefix(strings.Split(b, ":")[0], "../"))
	}
	require.Len(t, got, len(good))
	for _, ref := range good {
		want, err := viewer.ReadTrace(dir, ref)
		require.NoError(t, err)
		assert.Equal(t, want, got[ref], ref)
	}

	none, err := viewer.ReadTraces(dir, nil)
	require.NoError(t, err)
	assert.Empty(t, none)
}
