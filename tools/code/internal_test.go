package code

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// eval runs src with Starlark's own interpreter, for comparisons.
func eval(t *testing.T, src string) starlark.Value {
	t.Helper()
	opts := &syntax.FileOptions{Set: true}
	v, err := starlark.EvalOptions(opts, &starlark.Thread{}, "test", src, nil)
	require.NoError(t, err)
	return v
}

func TestRendererMatchesStarlark(t *testing.T) {
	for _, src := range []string{
		`None`, `True`, `-12345678901234567890123`, `1.5`, `1e100`, `"a\"b\n\x01ü"`, `b"\x00ab"`,
		`[]`, `[1, [2, [3]]]`, `()`, `(1,)`, `(1, "a", None)`, `{}`, `{"a": [1, 2], 3: (4,)}`,
		`set([1, 2, 3])`, `range(3)`, `len`, `[x for x in range(3)]`,
	} {
		v := eval(t, src)
		w := &limitWriter{max: 1 << 20}
		(&renderer{w: w}).repr(v, 0)
		assert.Equal(t, v.String(), string(w.buf), src)
		n, deep := reprSize(v, 1<<20)
		assert.False(t, deep)
		assert.GreaterOrEqual(t, n, len(v.String())/4, src)
		assert.LessOrEqual(t, n, len(v.String())+32, src)
	}
}

func TestRendererHandlesCyclesDepthAndLimits(t *testing.T) {
	l := starlark.NewList([]starlark.Value{starlark.MakeInt(1)})
	require.NoError(t, l.Append(l))
	w := &limitWriter{max: 100}
	(&renderer{w: w}).repr(l, 0)
	assert.Equal(t, "[1, [...]]", string(w.buf))

	var nested starlark.Value = starlark.NewList(nil)
	for range 200 {
		nested = starlark.NewList([]starlark.Value{nested})
	}
	w = &limitWriter{max: 1 << 20}
	(&renderer{w: w}).repr(nested, 0)
	assert.Contains(t, string(w.buf), "...")
	_, deep := reprSize(nested, 1<<20)
	assert.True(t, deep)

	big := starlark.String(strings.Repeat("é", 1000))
	w = &limitWriter{max: 51}
	(&renderer{w: w}).repr(starlark.NewList([]starlark.Value{big, big}), 0)
	assert.True(t, w.full)
	assert.LessOrEqual(t, len(w.buf), 51)
	assert.True(t, strings.HasPrefix(string(w.buf), `["éé`))
	assert.True(t, utf8Valid(w.buf))
}

func utf8Valid(b []byte) bool { return strings.ToValidUTF8(string(b), "?") == string(b) }

func TestFormatFollowsPython(t *testing.T) {
	f := formatter{max: 1 << 20}
	specs := []struct {
		v    starlark.Value
		spec string
		want string
	}{
		{starlark.MakeInt(42), "", "42"},
		{starlark.MakeInt(42), "5", "   42"},
		{starlark.MakeInt(42), "<5", "42   "},
		{starlark.MakeInt(42), "^6", "  42  "},
		{starlark.MakeInt(-42), "=6", "-   42"},
		{starlark.MakeInt(-42), "06", "-00042"},
		{starlark.MakeInt(42), "+", "+42"},
		{starlark.MakeInt(42), " ", " 42"},
		{starlark.MakeInt(1234567), ",", "1,234,567"},
		{starlark.MakeInt(1234567), "_", "1_234_567"},
		{starlark.MakeInt(255), "x", "ff"},
		{starlark.MakeInt(255), "#X", "0XFF"},
		{starlark.MakeInt(5), "#010b", "0b00000101"},
		{starlark.MakeInt(65), "c", "A"},
		{starlark.MakeInt(3), ".2f", "3.00"},
		{starlark.MakeInt(1), "%", "100.000000%"},
		{starlark.True, "", "True"},
		{starlark.True, "d", "1"},
		{starlark.Float(3.14159), ".2f", "3.14"},
		{starlark.Float(3.14159), "8.3f", "   3.142"},
		{starlark.Float(-3.14159), "+.1f", "-3.1"},
		{starlark.Float(2.5), ".0f", "2"},
		{starlark.Float(1234.5), ",.1f", "1,234.5"},
		{starlark.Float(1234.5), ",", "1,234.5"},
		{starlark.Float(12345.678), "e", "1.234568e+04"},
		{starlark.Float(12345.678), ".2E", "1.23E+04"},
		{starlark.Float(0.0001), "g", "0.0001"},
		{starlark.Float(1e20), "g", "1e+20"},
		{starlark.Float(123456789), "g", "1.23457e+08"},
		{starlark.Float(3), ".3", "3.0"},
		{starlark.Float(0.256), ".1%", "25.6%"},
		{starlark.Float(1e20), "", "1e+20"},
		{starlark.Float(0.1), "", "0.1"},
		{starlark.Float(math.Copysign(0, -1)), ".1f", "-0.0"},
		{starlark.Float(math.Inf(-1)), "F", "-INF"},
		{starlark.String("mid"), "*^9", "***mid***"},
		{starlark.String("abc"), ".2", "ab"},
		{starlark.String("ab"), "5", "ab   "},
		{starlark.String("ab"), ">5", "   ab"},
		{starlark.String("é"), "3", "é  "},
		{starlark.None, "", "None"},
		{starlark.NewList([]starlark.Value{starlark.MakeInt(1)}), ">5", "  [1]"},
	}
	for _, tc := range specs {
		got, err := f.value(tc.v, tc.spec)
		require.NoError(t, err, "%v %q", tc.v, tc.spec)
		assert.Equal(t, tc.want, got, "format(%v, %q)", tc.v, tc.spec)
	}
	for _, bad := range []struct {
		v    starlark.Value
		spec string
	}{
		{starlark.Float(1.5), "d"},
		{starlark.String("a"), "d"},
		{starlark.MakeInt(1), "s"},
		{starlark.MakeInt(1), ".2"},
		{starlark.String("a"), "+"},
		{starlark.MakeInt(1), "5.q"},
		{starlark.MakeInt(1), ">99999999999"},
	} {
		_, err := f.value(bad.v, bad.spec)
		assert.Error(t, err, "format(%v, %q)", bad.v, bad.spec)
	}
}

func TestPrintfFollowsPython(t *testing.T) {
	f := formatter{max: 1 << 20}
	d := starlark.NewDict(1)
	require.NoError(t, d.SetKey(starlark.String("x"), starlark.Float(2.25)))
	tests := []struct {
		t    string
		arg  starlark.Value
		want string
	}{
		{"%5d|%-5d|%05d|%+d", starlark.Tuple{starlark.MakeInt(3), starlark.MakeInt(3), starlark.MakeInt(3), starlark.MakeInt(3)}, "    3|3    |00003|+3"},
		{"%.2f", starlark.Float(3.14159), "3.14"},
		{"%10.3f|", starlark.Float(2.5), "     2.500|"},
		{"%e", starlark.Float(12345.678), "1.234568e+04"},
		{"%g", starlark.Float(0.00001234), "1.234e-05"},
		{"%-5s|%5s|%.2s", starlark.Tuple{starlark.String("a"), starlark.String("b"), starlark.String("xyz")}, "a    |    b|xy"},
		{"%(x)06.2f", d, "002.25"},
		{"%.3d", starlark.MakeInt(5), "005"},
		{"%#x %#o", starlark.Tuple{starlark.MakeInt(255), starlark.MakeInt(8)}, "0xff 0o10"},
		{"%5.1f%%", starlark.Float(12.345), " 12.3%"},
		{"%5r", starlark.String("a"), `  "a"`},
		{"%3c", starlark.MakeInt(65), "  A"},
		{"%d", starlark.Float(3.7), "3"},
		{"%s %5s", starlark.Tuple{starlark.NewList(nil), starlark.None}, "[]  None"},
	}
	for _, tc := range tests {
		got, err := f.printf(tc.t, tc.arg)
		require.NoError(t, err, tc.t)
		assert.Equal(t, tc.want, got, tc.t)
	}
	for _, bad := range []struct {
		t   string
		arg starlark.Value
	}{
		{"%5d %5d", starlark.MakeInt(1)},
		{"%5d", starlark.Tuple{starlark.MakeInt(1), starlark.MakeInt(2)}},
		{"%5d", starlark.String("x")},
		{"%*d", starlark.MakeInt(1)},
		{"%5", starlark.MakeInt(1)},
		{"%(x)5d", starlark.MakeInt(1)},
		{"%999999999d", starlark.MakeInt(1)},
	} {
		_, err := f.printf(bad.t, bad.arg)
		assert.Error(t, err, bad.t)
	}
	assert.True(t, hasPrintfSpec("%5d"))
	assert.True(t, hasPrintfSpec("%(x).2f"))
	assert.False(t, hasPrintfSpec("%d%% of %s"))
	assert.False(t, hasPrintfSpec("%(x)s"))
	assert.True(t, hasFormatSpec("{:>5}"))
	assert.True(t, hasFormatSpec("{0[a]}"))
	assert.False(t, hasFormatSpec("{} {name} {{:x}}"))
}

func TestFormatFieldsFollowPython(t *testing.T) {
	f := formatter{max: 1 << 20}
	d := starlark.NewDict(1)
	require.NoError(t, d.SetKey(starlark.String("a"), starlark.MakeInt(1)))
	args := starlark.Tuple{d, starlark.NewList([]starlark.Value{starlark.MakeInt(5), starlark.MakeInt(6)})}
	got, err := f.format("{0[a]} {1[1]} {{x}} {0!r:>10}", args, nil)
	require.NoError(t, err)
	assert.Equal(t, `1 6 {x}   {"a": 1}`, got)
	got, err = f.format("{n:.1f}", nil, []starlark.Tuple{{starlark.String("n"), starlark.Float(2)}})
	require.NoError(t, err)
	assert.Equal(t, "2.0", got)
	for _, bad := range []string{"{} {0}", "{0} {}", "{", "}", "{x}", "{5}", "{:{w}}", "{!z}"} {
		_, err := f.format(bad, starlark.Tuple{starlark.MakeInt(1)}, nil)
		assert.Error(t, err, bad)
	}
}

func TestStuckBuiltinIsAbandonedAtTheTimeLimit(t *testing.T) {
	// Comparing two lists that repeat one long list is one long built-in
	// operation, which cannot be interrupted.
	tool := New(Config{Timeout: 20 * time.Millisecond})
	tool.grace = 5 * time.Millisecond
	start := time.Now()
	_, err := tool.Call(context.Background(), "a = [0] * 10000\nb = [a] * 1000\nc = [a] * 1000\nb == c")
	require.ErrorIs(t, err, ErrTimeLimit)
	assert.Less(t, time.Since(start), 5*time.Second)

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	tool = New(Config{Timeout: time.Minute})
	tool.grace = 5 * time.Millisecond
	_, err = tool.Call(ctx, "a = [0] * 10000\nb = [a] * 1000\nc = [a] * 1000\nb == c")
	require.ErrorIs(t, err, context.Canceled)
}

func TestRewriteKeepsImpureTargetsSingle(t *testing.T) {
	// d[next()] += 1 must evaluate next() once, so it is not rewritten.
	tool := New(Config{})
	out, err := tool.Call(context.Background(), "calls = []\ndef k():\n    calls.append(1)\n    return 'x'\nd = {'x': 1}\nd[k()] += 1\nd, len(calls)")
	require.NoError(t, err)
	assert.Equal(t, `({"x": 2}, 1)`, out)
}

func TestGuardsCostTheStepsOfTheOperatorsTheyReplace(t *testing.T) {
	src := "total = 0\ns = ''\nl = []\nfor i in range(100):\n    total += i * 2 + 1 << 1\n    s = s + 'x' % ()\n    l += [i]\n    s = 'ab'.replace('a', s[:1])\ntotal"
	res, err := New(Config{}).Run(context.Background(), src)
	require.NoError(t, err)
	thread := &starlark.Thread{}
	_, err = starlark.ExecFileOptions(dialect(), thread, "native", src, nil)
	require.NoError(t, err)
	assert.Equal(t, thread.Steps, res.Steps)
}

func TestGCWatchCountsCollections(t *testing.T) {
	w := watchGC()
	defer w.stop()
	before := w.cycles.Load()
	deadline := time.Now().Add(5 * time.Second)
	for w.cycles.Load() == before && time.Now().Before(deadline) {
		_ = make([]byte, 1<<20)
		time.Sleep(time.Millisecond)
	}
	assert.Greater(t, w.cycles.Load(), before)
}
