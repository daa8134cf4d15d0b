package suite

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/verify"
)

// fuzzPath is the file name the fuzz targets load from; the bytes are handed
// to loadData directly, so no file is written.
const fuzzPath = "fuzz/suite.data"

// addFixtures seeds f with every testdata file plus extra inputs.
func addFixtures(f *testing.F, extra ...string) {
	f.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*"))
	require.NoError(f, err)
	for _, name := range files {
		if info, err := os.Stat(name); err != nil || info.IsDir() {
			continue
		}
		data, err := os.ReadFile(name)
		require.NoError(f, err)
		f.Add(data)
	}
	for _, s := range extra {
		f.Add([]byte(s))
	}
}

// checkLoad loads data as format and checks Load's contract: an error wraps
// ErrBadRecord, ErrUnknownFormat or ErrEmptySuite and names the file; otherwise every task
// has a question and a non-empty id that no other task has, gold programs
// are well formed, and each format's own promises hold.
func checkLoad(t *testing.T, format Format, data []byte) {
	tasks, got, err := loadData(context.Background(), fuzzPath, data, format, options{format: format})
	if err != nil {
		require.Truef(t, errors.Is(err, ErrBadRecord) || errors.Is(err, ErrUnknownFormat) || errors.Is(err, ErrEmptySuite),
			"error wraps no sentinel: %v", err)
		require.Truef(t, strings.HasPrefix(err.Error(), fuzzPath+":"), "error does not name the file: %v", err)
		require.Nil(t, tasks)
		return
	}
	if format == FormatAuto {
		detected, derr := detect(fuzzPath, bytes.TrimPrefix(data, []byte("\ufeff")))
		require.NoError(t, derr)
		require.Equal(t, detected, got)
	} else {
		require.Equal(t, format, got)
	}
	seen := make(map[string]bool, len(tasks))
	for i, task := range tasks {
		require.NotEmpty(t, task.ID, "task %d has no id", i)
		require.Falsef(t, seen[task.ID], "task id %q used twice", task.ID)
		seen[task.ID] = true
		require.NotEmpty(t, strings.TrimSpace(task.Question), "task %q has no question", task.ID)
		if task.Gold != nil {
			require.NoError(t, checkGold(task.Gold), "task %q", task.ID)
		}
		switch got {
		case FormatGSM8K:
			checkGSM8KTask(t, i, task)
		case FormatGame24:
			checkGame24Task(t, i, task)
		case FormatHotpotQA:
			for _, tag := range task.Tags {
				require.NotEmpty(t, tag)
				require.Equal(t, strings.TrimSpace(tag), tag)
			}
		case FormatParallelQA:
			require.True(t, strings.HasPrefix(task.ID, "parallelqa-"), task.ID)
		}
	}
}

func checkGSM8KTask(t *testing.T, i int, task Task) {
	require.Equal(t, "gsm8k-"+strconv.Itoa(i), task.ID)
	require.NotNil(t, task.Gold)
	require.NotEmpty(t, task.Answer)
	require.Equal(t, task.Gold.Answer, task.Answer)
	for k, st := range task.Gold.Steps {
		require.Equal(t, strconv.Itoa(k+1), st.ID)
		require.Equal(t, "calculator", st.Tool)
	}
}

func checkGame24Task(t *testing.T, i int, task Task) {
	require.Equal(t, "game24-"+strconv.Itoa(i), task.ID)
	nums, err := verify.PuzzleNumbers(task.Question)
	require.NoError(t, err)
	require.Equal(t, task.Question, Game24Question(nums), "the question reads back as the same puzzle")
	if task.Gold != nil {
		require.LessOrEqual(t, len(nums), maxSolvedNumbers)
		res := verify.Game24{}.Score(task.Gold.Answer, task.Reference())
		require.Truef(t, res.Correct, "gold %q does not solve %v: %s", task.Gold.Answer, nums, res.Detail)
	}
}

func FuzzLoadJSONL(f *testing.F) {
	addFixtures(f,
		`{"id":"a","question":"q"}`+"\n"+`{"id":"a","question":"r"}`,
		`{"question":"q","gold":{"steps":[{"id":"1","tool":"calculator","input":"#E2"}],"answer":"1"}}`,
		`{"question":"q"}`+"\n"+`{"id":"suite-0","question":"r"}`,
		`{"question":"  "}`,
	)
	f.Fuzz(func(t *testing.T, data []byte) { checkLoad(t, FormatJSONL, data) })
}

func FuzzLoadGSM8K(f *testing.F) {
	addFixtures(f,
		`{"question":"q","answer":"<<2*3=6>> <<6+1=7>> <<6*7=42>>\n#### 42"}`,
		`{"question":"q","answer":"<<1=1e1000000>><<1=1e1000000>>\n#### 1"}`,
		`{"question":"q","answer":"<<5=-0.50>><<.5+0.5=1>>\n#### 1,000"}`,
		`{"question":"q","answer":"<<no equals>>\n#### 1"}`,
	)
	f.Fuzz(func(t *testing.T, data []byte) { checkLoad(t, FormatGSM8K, data) })
}

func FuzzLoadGame24(f *testing.F) {
	addFixtures(f,
		"Puzzles\n4 5 6 10\n1 1 1 1 1 1 1 1 1 1 1 1 1\n",
		"Rank,Puzzles\n1,\"4 5\n6 10\"\n2,-1 2\n",
		"Puzzles\n9223372036854775807 1 1 1\n",
	)
	f.Fuzz(func(t *testing.T, data []byte) { checkLoad(t, FormatGame24, data) })
}

func FuzzLoadHotpotQA(f *testing.F) {
	addFixtures(f,
		`[{"_id":"x","question":"q","answer":"a"},{"id":"x","question":"r","answer":"b"}]`,
		`[{"id":1e400,"question":"q","answer":"a"}]`,
		`[{"question":"q","answer":"a","type":" t ","level":""}`,
	)
	f.Fuzz(func(t *testing.T, data []byte) { checkLoad(t, FormatHotpotQA, data) })
}

func FuzzLoadParallelQA(f *testing.F) {
	addFixtures(f,
		`[{"id":"1","question":"q","answer":"a","branch":2},{"id":1,"question":"r","answer":"b"}]`,
		`[{"id":null,"question":"q","answer":"a","branch":99999999999999999999}]`,
	)
	f.Fuzz(func(t *testing.T, data []byte) { checkLoad(t, FormatParallelQA, data) })
}

// FuzzLoadAuto checks that a detected format loads as that format.
func FuzzLoadAuto(f *testing.F) {
	addFixtures(f, "", "\ufeff[]", "puzzles\n1 2\n", "\n\n{\n")
	f.Fuzz(func(t *testing.T, data []byte) { checkLoad(t, FormatAuto, data) })
}
