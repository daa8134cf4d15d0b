package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFilesAndBuffersAreNoTerminals(t *testing.T) {
	file, err := os.Create(filepath.Join(t.TempDir(), "out.log"))
	require.NoError(t, err)
	defer file.Close()
	for name, w := range map[string]io.Writer{"file": file, "buffer": &bytes.Buffer{}} {
		assert.False(t, isTerminal(w), name)
		assert.Zero(t, terminalWidth(w), name)
	}
}

func TestCompareDrawsNoProgressBarIntoALogAndPrintsTheWholeTable(t *testing.T) {
	t.Parallel()
	// Without --quiet, output that is not a terminal gets no progress bar
	// and the table whole, however wide.
	res := cli(t, "compare", "--suite", "demo", "--config", configPath("react.yaml"), "--config", configPath("cot.yaml"),
		"--llm", "sim", "--limit", "3", "--out", t.TempDir())
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	assert.NotContains(t, res.stderr, "\r", "no progress-bar frames in stderr")
	assert.NotRegexp(t, `\d+% \|`, res.stderr, "no progress bar at all")
	head := regexp.MustCompile(`(?m)^config .*$`).FindString(res.stdout)
	assert.Regexp(t, `^config +success +EM +F1 +failures +recovered +calls/task +tools/task +prompt tok/task +compl tok/task +cost \$/task +p50 ms +p95 ms +success 95% CI +frontier +vs baseline W/T/L +McNemar p +Δsuccess 95% CI +Δcost \$/task 95% CI +tasks to detect +tool R/P +order +steps/gold +plan R/dep R$`, head)
	assert.Equal(t, 1, strings.Count(res.stdout, "\nconfig "), "one table")
}
