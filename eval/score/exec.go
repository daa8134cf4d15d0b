package score

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/planner-engine/planner/internal/textutil"
)

// execWaitDelay is how long Score waits, once the command has exited or
// been killed, for its output pipes to close (a grandchild that inherited
// them may hold them open).
const execWaitDelay = 2 * time.Second

// maxExecOutput caps the bytes kept of a command's standard output; a
// verdict is a short JSON object.
const maxExecOutput = 1 << 20

// stderrTail is how many of the last lines of a failed command's standard
// error its error shows.
const stderrTail = 5

// execScorer runs an external command per answer.
type execScorer struct {
	name    string
	argv    []string
	timeout time.Duration
}

// newExec splits command into words and finds its program.
func newExec(command string, opts Options) (*execScorer, error) {
	argv, err := SplitWords(command)
	if err != nil {
		return nil, fmt.Errorf("%w: exec:%s: %w", ErrBadSpec, command, err)
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("%w: exec:%s: give the command to run, e.g. exec:./grade.sh", ErrBadSpec, command)
	}
	if _, err := exec.LookPath(argv[0]); err != nil {
		return nil, fmt.Errorf("%w: exec:%s: %w (give a path such as ./%s, or a program on PATH)", ErrBadSpec, command, err, filepath.Base(argv[0]))
	}
	timeout := opts.ExecTimeout
	if timeout <= 0 {
		timeout = DefaultExecTimeout
	}
	return &execScorer{name: "exec:" + filepath.Base(argv[0]), argv: argv, timeout: timeout}, nil
}

// Name returns "exec:" and the base name of the command's program.
func (e *execScorer) Name() string { return e.name }

// execInput is the JSON an exec scorer reads on its standard input.
type execInput struct {
	TaskID    string `json:"task_id"`
	Question  string `json:"question"`
	Answer    string `json:"answer"`
	Reference string `json:"reference"`
}

// Score runs the command with in as JSON on its standard input and reads
// the verdict from its standard output.
func (e *execScorer) Score(ctx context.Context, in Input) (Verdict, error) {
	stdin, err := json.Marshal(execInput(in))
	if err != nil {
		return Verdict{}, fmt.Errorf("%s: task %q: %w", e.name, in.TaskID, err)
	}
	runCtx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, e.argv[0], e.argv[1:]...)
	cmd.Stdin = bytes.NewReader(stdin)
	stdout := &capped{max: maxExecOutput}
	stderr := &capped{max: 64 << 10, keepTail: true}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = execWaitDelay
	ownProcessGroup(cmd)
	err = cmd.Run()
	switch {
	case ctx.Err() != nil:
		return Verdict{}, fmt.Errorf("%s: task %q: %w", e.name, in.TaskID, context.Cause(ctx))
	case errors.Is(runCtx.Err(), context.DeadlineExceeded):
		return Verdict{}, fmt.Errorf("%w: %s: task %q: no verdict within %s, the command was killed%s; raise the limit (Options.ExecTimeout) or speed up the scorer",
			ErrExecTimeout, e.name, in.TaskID, e.timeout, stderr.tailNote())
	case err != nil:
		return Verdict{}, fmt.Errorf("%w: %s: task %q: %w%s", ErrScorerFailed, e.name, in.TaskID, err, stderr.tailNote())
	case stdout.dropped:
		return Verdict{}, fmt.Errorf("%w: %s: task %q: the command printed more than %d bytes; print one JSON verdict", ErrBadVerdict, e.name, in.TaskID, maxExecOutput)
	}
	out := bytes.TrimSpace(stdout.buf.Bytes())
	if len(out) == 0 {
		return Verdict{}, fmt.Errorf(`%w: %s: task %q: the command printed nothing; print a JSON verdict such as {"score": 1, "pass": true, "reason": "..."}%s`,
			ErrBadVerdict, e.name, in.TaskID, stderr.tailNote())
	}
	v, err := decodeVerdict(out)
	if err != nil {
		return Verdict{}, fmt.Errorf("%w: %s: task %q: the command printed %w: %q", ErrBadVerdict, e.name, in.TaskID, err, textutil.Clip(string(out), 200))
	}
	return v, nil
}

// capped is an io.Writer that keeps at most max bytes: the first ones, or
// with keepTail the last ones.
type capped struct {
	buf      bytes.Buffer
	max      int
	keepTail bool
	dropped  bool
}

func (c *capped) Write(p []byte) (int, error) {
	n := len(p)
	if c.keepTail {
		c.buf.Write(p)
		if over := c.buf.Len() - c.max; over > 0 {
			c.buf.Next(over)
			c.dropped = true
		}
		return n, nil
	}
	if room := c.max - c.buf.Len(); len(p) > room {
		p = p[:max(room, 0)]
		c.dropped = true
	}
	c.buf.Write(p)
	return n, nil
}

// tailNote renders the last lines written, for an error message: "" when
// nothing was.
func (c *capped) tailNote() string {
	text := strings.TrimSpace(strings.ToValidUTF8(c.buf.String(), "\uFFFD"))
	if text == "" {
		return ""
	}
	lines := strings.Split(text, "\n")
	if len(lines) > stderrTail {
		lines = lines[len(lines)-stderrTail:]
	}
	for i, l := range lines {
		lines[i] = textutil.Clip(strings.TrimRight(l, "\r"), 300)
	}
	return "; its standard error ends: " + strings.Join(lines, " | ")
}

// SplitWords splits a command line into words as a POSIX shell would,
// without expanding anything: words are separated by unquoted blanks;
// single quotes keep everything up to the next single quote; double quotes
// keep everything up to the next unescaped double quote, where a backslash
// escapes only $, `, ", \ and a newline; outside quotes a backslash keeps
// the next character. An unterminated quote or a trailing backslash is an
// error.
func SplitWords(s string) ([]string, error) {
	var (
		words   []string
		cur     strings.Builder
		inWord  bool
		runes   = []rune(s)
		quoteAt = -1
	)
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		switch {
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case r == '\\':
			if i+1 >= len(runes) {
				return nil, errors.New("the command ends with a lone backslash")
			}
			i++
			if runes[i] != '\n' {
				cur.WriteRune(runes[i])
			}
			inWord = true
		case r == '\'':
			quoteAt, inWord = i, true
			j := i + 1
			for j < len(runes) && runes[j] != '\'' {
				cur.WriteRune(runes[j])
				j++
			}
			if j >= len(runes) {
				return nil, fmt.Errorf("the single quote at character %d is never closed", quoteAt+1)
			}
			i = j
		case r == '"':
			quoteAt, inWord = i, true
			j := i + 1
			for ; j < len(runes) && runes[j] != '"'; j++ {
				if runes[j] == '\\' && j+1 < len(runes) && strings.ContainsRune("$`\"\\\n", runes[j+1]) {
					j++
					if runes[j] == '\n' {
						continue
					}
				}
				cur.WriteRune(runes[j])
			}
			if j >= len(runes) {
				return nil, fmt.Errorf("the double quote at character %d is never closed", quoteAt+1)
			}
			i = j
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
