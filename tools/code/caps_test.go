package code_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/tools/code"
)

func TestSplittingAHugeStringIsRefused(t *testing.T) {
	tool := code.New(code.Config{Timeout: time.Minute})
	for _, program := range []string{
		"x = 'a' * 16000000\nx.split('a')",
		"x = 'a' * 16000000\nx.rsplit('a')",
		"x = 'a ' * 8000000\nx.split()",
		"x = '\\n' * 16000000\nx.splitlines()",
	} {
		_, err := tool.Call(context.Background(), program)
		require.ErrorIs(t, err, code.ErrValueTooLarge, program)
		first, _, _ := strings.Cut(err.Error(), "\n")
		assert.Contains(t, first, "over the limit of 1,048,576 elements (the code tool's max_value_size / 16)", program)
		assert.Contains(t, first, "at line 2", program)
	}
	// Below the limit, and with a maxsplit, splitting works as before.
	out, err := tool.Call(context.Background(), "x = 'a' * 16000000\nlen(x.split('a', 3)), x.rsplit('a', 2)[1:], len(('b,' * 1000).split(','))")
	require.NoError(t, err)
	assert.Equal(t, `(4, ["", ""], 1001)`, out)
}

// TestEveryBuiltinRespectsTheCaps calls each built-in, method and
// operator that makes a collection or string from its arguments in one
// step with arguments that would make it larger than the limits, and
// checks that it refuses with ErrValueTooLarge, naming the limit.
func TestEveryBuiltinRespectsTheCaps(t *testing.T) {
	// tiny: values up to 64 KiB, collections up to 4,096 elements.
	tiny := code.New(code.Config{MaxValueSize: 64 << 10, Timeout: time.Minute})
	def := code.New(code.Config{Timeout: time.Minute})
	const big = "s = 'ab' * 5000\n"  // 10,000 code points, 10,000 bytes
	const wide = "w = 'ȿ' * 30000\n" // 60,000 bytes; 90,000 in upper case
	const d5k = "d = {i: i for i in range(5000)}\n"
	tests := []struct {
		name    string
		tool    *code.Tool
		program string
		msg     string // a substring of the error's first line
	}{
		{"str.split", tiny, big + "s.split('a')", "split: the list of pieces would have 5,001 elements, over the limit of 4,096 elements (the code tool's max_value_size / 16)"},
		{"str.rsplit", tiny, big + "s.rsplit('b')", "rsplit: the list of pieces would have 5,001 elements"},
		{"str.split on white space", tiny, "s = 'a ' * 5000\ns.split()", "split: the list of pieces would have 5,000 elements"},
		{"str.rsplit on white space with maxsplit", tiny, "s = 'a ' * 5000\ns.rsplit(None, 4500)", "rsplit: the list of pieces would have 4,501 elements"},
		{"str.splitlines", tiny, "s = 'a\\n' * 5000\ns.splitlines()", "splitlines: the list of pieces would have 5,000 elements"},
		{"str.upper", tiny, wide + "w.upper()", "upper: the string would be 90,000 bytes long, over the limit of 64 KiB (the code tool's max_value_size)"},
		{"str.title", tiny, wide + "w.title()", "title: the string would be 90,000 bytes long"},
		{"str.capitalize", tiny, wide + "w.capitalize()", "capitalize: the string would be 90,000 bytes long"},
		{"str.lower", tiny, "w = 'Ⱥ' * 30000\nw.lower()", "lower: the string would be 90,000 bytes long"},
		{"str.join of an iterable of unknown length", tiny, big + "'-'.join(s.codepoints())", "join: the argument has more than 4,096 elements"},
		{"list of codepoints", tiny, big + "list(s.codepoints())", "list: the argument has more than 4,096 elements"},
		{"tuple of codepoint_ords", tiny, big + "tuple(s.codepoint_ords())", "tuple: the argument has more than 4,096 elements"},
		{"sorted codepoints", tiny, big + "sorted(s.codepoints())", "sorted: the argument has more than 4,096 elements"},
		{"enumerate codepoints", tiny, big + "enumerate(s.codepoints())", "enumerate: the argument has more than 4,096 elements"},
		{"zip with codepoints", tiny, big + "zip(range(3), s.codepoints())", "zip: the argument has more than 4,096 elements"},
		{"max of codepoints", tiny, big + "max(s.codepoints())", "max: the argument has more than 4,096 elements"},
		{"list of elems", tiny, big + "list(s.elems())", "an argument has 10,000 elements, over the limit of 4,096 elements"},
		{"list of bytes elems", tiny, "b = b'ab' * 5000\nlist(b.elems())", "list: the argument has more than 4,096 elements"},
		{"list.extend with codepoints", tiny, big + "l = []\nl.extend(s.codepoints())", "extend: the argument has more than 4,096 elements"},
		{"bytes of a range", def, "bytes(range(pow(10, 9)))", "bytes: the bytes would be 1,000,000,000 bytes long, over the limit of 16 MiB"},
		{"dict.items", tiny, d5k + "d.items()", "items: the list of the dict's items would have 5,000 elements"},
		{"dict.keys", tiny, d5k + "d.keys()", "keys: the list of the dict's keys would have 5,000 elements"},
		{"dict.values", tiny, d5k + "d.values()", "values: the list of the dict's values would have 5,000 elements"},
		{"dict.update", tiny, "d = {i: i for i in range(3000)}\nd.update([(i, i) for i in range(3000, 6000)])", "update: the result would have 6,000 elements"},
		{"set.union", tiny, "a = set(range(3000))\na.union(range(3000, 6000))", "union: the result would have 6,000 elements"},
		{"set.update", tiny, "a = set(range(3000))\na.update(range(3000, 6000))", "update: the result would have 6,000 elements"},
		{"set | set", tiny, "a = set(range(3000))\nb = set(range(3000, 6000))\na | b", "the union would have 6,000 elements"},
		{"set |= set", tiny, "a = set(range(3000))\na |= set(range(3000, 6000))", "the union would have 6,000 elements"},
		{"dict | dict", tiny, "a = {i: 1 for i in range(3000)}\nb = {i: 1 for i in range(3000, 6000)}\na | b", "the union would have 6,000 elements"},
		{"*args from a huge range", def, "max(*range(pow(10, 9)))", "the arguments after * or **: the argument would have 1,000,000,000 elements"},
		{"*args from codepoints", tiny, big + "def f(*a):\n    return len(a)\nf(*s.codepoints())", "the argument has more than 4,096 elements"},
		{"**kwargs from a huge dict", tiny, "d = {str(i): i for i in range(5000)}\ndef f(**k):\n    return len(k)\nf(**d)", "the argument would have 5,000 elements"},
		{"json.decode of many values", tiny, "json.decode('[' + '0,' * 5000 + '0]')", "json.decode: the decoded value would have 5,002 elements"},
		{"json.decode of a huge number", def, "json.decode('9' * 400000)", "json.decode: the text has a number of 400,000 digits"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tc.tool.Call(context.Background(), tc.program)
			if tc.msg == "" {
				require.NoError(t, err, "within the limits: %s", tc.program)
				return
			}
			require.ErrorIs(t, err, code.ErrValueTooLarge, "output: %q", out)
			first, _, _ := strings.Cut(err.Error(), "\n")
			assert.Contains(t, first, tc.msg)
		})
	}
}

// TestCapsLeaveOrdinaryProgramsAlone runs what the guarded built-ins do
// within the limits, with the answers Starlark gives.
func TestCapsLeaveOrdinaryProgramsAlone(t *testing.T) {
	tool := code.New(code.Config{Timeout: time.Minute})
	tests := []struct{ program, want string }{
		{"'a,b,,c'.split(',')", `["a", "b", "", "c"]`},
		{"'a,b,,c'.rsplit(',', 1)", `["a,b,", "c"]`},
		{"'a,b,,c'.rsplit(',', 0)", `["a,b,,c"]`},
		{"'a,b'.rsplit(',', 5)", `["a", "b"]`},
		{"'  a  b c '.rsplit(None, 1)", `["  a  b", "c"]`},
		{"'x\\ny\\n'.splitlines()", `["x", "y"]`},
		{"'ȿx'.upper(), 'ÀB'.lower(), 'ab cd'.title(), 'ab'.capitalize()", `("ⱾX", "àb", "Ab Cd", "Ab")`},
		{"list('héllo'.codepoints())", `["h", "é", "l", "l", "o"]`},
		{"sorted('cab'.codepoints()), max('cab'.codepoints()), max(1, 3, 2)", `(["a", "b", "c"], "c", 3)`},
		{"'-'.join('abc'.codepoints())", `"a-b-c"`},
		{"bytes([104, 105]), bytes('hi'), bytes(b'x')", `(b"hi", b"hi", b"x")`},
		{"d = {1: 2}\nd.update({3: 4}, five=5)\nd.items()", `[(1, 2), (3, 4), ("five", 5)]`},
		{"set([1, 2]) | set([2, 3]), {1: 1} | {2: 2}, 6 | 3", `(set([1, 2, 3]), {1: 1, 2: 2}, 7)`},
		{"x = 6\nx |= 1\nx", "7"},
		{"def f(*a, **k):\n    return len(a), sorted(k.keys())\nf(*'ab'.codepoints(), **{'z': 1, 'y': 2})", `(2, ["y", "z"])`},
		{"json.decode('[1, [2, 3], {\"a\": 4}]')", `[1, [2, 3], {"a": 4}]`},
		{"l = [1]\nl.extend('ab'.codepoints())\nl", `[1, "a", "b"]`},
	}
	for _, tc := range tests {
		out, err := tool.Call(context.Background(), tc.program)
		require.NoError(t, err, tc.program)
		assert.Equal(t, tc.want, out, tc.program)
	}
}
