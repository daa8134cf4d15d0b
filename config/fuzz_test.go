package config

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fuzzEnv is the environment of the fuzz targets. Every value is wrapped in
// NUL bytes, which the targets drop from their input, so a value can be told
// apart from source text in the output; some values look like references,
// to show that values are never expanded again.
var fuzzEnv = map[string]string{
	"MODEL": "\x00MODEL:gpt-4o-mini\x00",
	"EMPTY": "\x00EMPTY:\x00",
	"REF":   "\x00REF:${MODEL}\x00",
	"DEF":   "\x00DEF:${UNSET:-${MODEL}}\x00",
	"BRACE": "\x00BRACE:}\x00",
	"N":     "\x00N:3\x00",
}

// plainEnv is fuzzEnv without the markers ("MODEL" is "gpt-4o-mini"), for
// whole pipelines.
func plainEnv(name string) (string, bool) {
	v, ok := fuzzEnv[name]
	_, v, _ = strings.Cut(strings.Trim(v, "\x00"), ":")
	return v, ok
}

func markedEnv(name string) (string, bool) {
	v, ok := fuzzEnv[name]
	return v, ok
}

// maxFuzzValue is the length of fuzzEnv's longest value.
func maxFuzzValue() int {
	n := 0
	for _, v := range fuzzEnv {
		n = max(n, len(v))
	}
	return n
}

// oldEnvRef is the regular expression expandEnv used before defaults could
// nest; on sources without nesting both must agree.
var oldEnvRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`)

// oldExpandEnv is the former regular-expression expansion. nested reports
// a default containing "${", where the two differ by design.
func oldExpandEnv(src []byte, lookup func(string) (string, bool)) (out []byte, missing []string, nested bool) {
	out = oldEnvRef.ReplaceAllFunc(src, func(m []byte) []byte {
		sub := oldEnvRef.FindSubmatch(m)
		if bytes.Contains(sub[2], []byte("${")) {
			nested = true
		}
		if v, ok := lookup(string(sub[1])); ok {
			return []byte(v)
		}
		if bytes.Contains(m, []byte(":-")) {
			return sub[2]
		}
		missing = append(missing, string(sub[1]))
		return nil
	})
	return out, missing, nested
}

// FuzzExpandEnv checks expandEnv's contract: text without "${" is unchanged;
// values are inserted verbatim, never expanded again; only unset variables
// are reported missing, at their reference; only nesting beyond
// maxEnvNesting fails; the output grows by at most one value per
// reference; and without nested defaults the result is what the former
// regular-expression expansion gave.
func FuzzExpandEnv(f *testing.F) {
	for _, s := range []string{
		"", "plain $5 and $HOME", "${MODEL}", "${UNSET}", "${UNSET:-fallback}", "${MODEL:-fallback}",
		"${REF} ${DEF}", "${UNSET:-${MODEL}}", "${UNSET:-a${N}b}c}", "${A:-${B:-${C:-${D:-${E:-${F:-${G:-${H:-${I}}}}}}}}}",
		"${", "${}", "${1A}", "${MODEL", "${MODEL:-", "${MODEL:-x", "$${MODEL}", "${UNSET:-$}{MODEL}",
		"${EMPTY:-default}", "${BRACE}}", "model: ${MODEL:-gpt-4o}\nkey: ${N}\n",
	} {
		f.Add([]byte(s))
	}
	limit := maxFuzzValue()
	f.Fuzz(func(t *testing.T, src []byte) {
		src = bytes.ReplaceAll(src, []byte{0}, nil)
		out, missing, err := expandEnv(src, markedEnv)
		refs := bytes.Count(src, []byte("${"))
		if err != nil {
			var nest *envNestingError
			require.ErrorAs(t, err, &nest)
			require.Greater(t, refs, maxEnvNesting, "only deep nesting fails")
			require.True(t, bytes.HasPrefix(src[nest.Offset:], []byte("${")))
			return
		}
		if refs == 0 {
			require.Equal(t, string(src), string(out))
			require.Empty(t, missing)
			return
		}
		require.LessOrEqual(t, len(out), len(src)+refs*limit)

		// Values are whole and verbatim: NUL bytes come only from them.
		parts := bytes.Split(out, []byte{0})
		require.Equal(t, 1, len(parts)%2, "values are NUL-wrapped")
		for i := 1; i < len(parts); i += 2 {
			name, _, _ := strings.Cut(string(parts[i]), ":")
			want, ok := fuzzEnv[name]
			require.Truef(t, ok, "segment %q is not a value", parts[i])
			require.Equal(t, want, "\x00"+string(parts[i])+"\x00")
		}
		for _, m := range missing {
			_, set := fuzzEnv[m.Name]
			require.Falsef(t, set, "set variable %s reported missing", m.Name)
			require.Truef(t, bytes.HasPrefix(src[m.Offset:], []byte("${"+m.Name)), "offset %d of %s", m.Offset, m.Name)
		}

		oldOut, oldMissing, nested := oldExpandEnv(src, markedEnv)
		if !nested {
			require.Equal(t, string(oldOut), string(out))
			var names []string
			for _, m := range missing {
				names = append(names, m.Name)
			}
			require.Equal(t, oldMissing, names)
		}
	})
}

func TestExpandEnvNestsDefaultsWithoutRecursing(t *testing.T) {
	cases := []struct {
		name, src, want string
		missing         []string
	}{
		{"set", "m: ${MODEL}", "m: gpt-4o-mini", nil},
		{"set but empty wins over the default", "m: ${EMPTY:-x}", "m: ", nil},
		{"default", "m: ${UNSET:-x y}", "m: x y", nil},
		{"nested default used", "m: ${UNSET:-${MODEL}}", "m: gpt-4o-mini", nil},
		{"nested default not used", "m: ${N:-${MISSING}}", "m: 3", nil},
		{"text around a nested reference", "m: ${UNSET:-a${N}b}c", "m: a3bc", nil},
		{"missing inside a used default", "m: ${UNSET:-${MISSING}}", "m: ", []string{"MISSING"}},
		{"values are not expanded again", "m: ${REF} ${DEF}", "m: ${MODEL} ${UNSET:-${MODEL}}", nil},
		{"a value's brace does not end anything", "m: ${BRACE}}", "m: }}", nil},
		{"bare and malformed references stay", "$MODEL ${ ${} ${1A} ${MODEL", "$MODEL ${ ${} ${1A} ${MODEL", nil},
		{"unterminated default leaves later references working", "${UNSET:-x ${N}", "${UNSET:-x 3", nil},
		{"missing in source order", "${B_MISSING} ${A_MISSING}", " ", []string{"B_MISSING", "A_MISSING"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, missing, err := expandEnv([]byte(tc.src), plainEnv)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(out))
			var names []string
			for _, m := range missing {
				names = append(names, m.Name)
			}
			assert.Equal(t, tc.missing, names)
		})
	}

	deep := strings.Repeat("${UNSET:-", maxEnvNesting) + "x" + strings.Repeat("}", maxEnvNesting)
	out, _, err := expandEnv([]byte(deep), plainEnv)
	require.NoError(t, err)
	assert.Equal(t, "x", string(out))
	_, _, err = expandEnv([]byte("a\n"+strings.Repeat("${UNSET:-", maxEnvNesting+1)+"x"), plainEnv)
	var nest *envNestingError
	require.ErrorAs(t, err, &nest)
	assert.Equal(t, 2, nest.Offset)
}

// FuzzParse checks Parse's contract: it fails with an *Error for the file
// that wraps ErrInvalid and points at a line of it, or returns a pipeline
// that passes its own checks again.
func FuzzParse(f *testing.F) {
	shipped, err := filepath.Glob(filepath.Join("..", "configs", "*.yaml"))
	require.NoError(f, err)
	require.NotEmpty(f, shipped)
	for _, name := range shipped {
		data, err := os.ReadFile(name)
		require.NoError(f, err)
		f.Add(data)
	}
	for _, s := range []string{
		"name: x\nllm: {provider: openai, model: ${MODEL}}\nnodes: [{id: a, type: direct}]\n",
		"name: ${UNSET:-x}\nllm: {model: \"${UNSET:-${MODEL}}\", max_tokens: ${N}}\nnodes: [{id: a, type: direct}]\n",
		"name: x\nnodes: [{id: a, type: direct, prompt: '${REF} $5 ${MISSING}'}]\n",
		"a: &a [*a]\nname: x\nnodes: [{id: a, type: direct}]\n",
		"a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\nd: [*c, *c]\nname: x\nnodes: [{id: a, type: direct}]\n",
		"base: &n {id: a, type: direct}\nname: x\nnodes: [*n, {<<: *n, id: b}]\nedges: [{from: START, to: {x: a, y: b}}]\n",
		"name: x\nlimits: {max_steps: -1, timeout: 1h}\nnodes: [{id: START, type: t}]\ntools: [calculator, {name: calculator}]\n",
		"name: x\nNODES: [{ID: a, TYPE: b}]\nedges: [{from: a}]\n",
		"\t", "[]", "name: [x]\n", "%YAML 1.1\n---\nname: x\n",
	} {
		f.Add([]byte(s))
	}
	const path = "fuzz/pipeline.yaml"
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := Parse(path, raw, plainEnv)
		lines := bytes.Count(raw, []byte("\n")) + 1
		if err != nil {
			require.ErrorIs(t, err, ErrInvalid)
			var cerr *Error
			require.True(t, errors.As(err, &cerr), "%T: %v", err, err)
			require.Equal(t, path, cerr.File)
			require.True(t, strings.HasPrefix(err.Error(), path+":"), err.Error())
			require.GreaterOrEqual(t, cerr.Line, 0)
			require.LessOrEqual(t, cerr.Line, lines+1, err.Error())
			return
		}
		require.Equal(t, path, p.File)
		require.NotEmpty(t, strings.TrimSpace(p.Name))
		require.NotEmpty(t, p.Nodes)
		require.Positive(t, p.Limits.MaxSteps)
		require.NoError(t, p.check(), "a loaded pipeline passes its checks again")
		for i := range p.Nodes {
			line := p.NodeLine(i, "type")
			require.GreaterOrEqual(t, line, 0)
			require.LessOrEqual(t, line, lines+1)
		}
		for _, e := range p.Edges {
			targets, err := e.Targets()
			require.NoError(t, err)
			if ids, fan, err := e.FanOut(); fan {
				require.NoError(t, err)
				require.NotEmpty(t, ids, "a fan-out names its branches")
				continue
			}
			require.NotEmpty(t, targets)
		}
	})
}

func TestParseExpandsInsideFlowCollectionsAndSurvivesHostileAliases(t *testing.T) {
	p, err := Parse("p.yaml", []byte("name: x\nllm: {provider: openai, model: ${MODEL}}\ntools: [${UNSET:-calculator}]\nnodes: [{id: a, type: direct}]\n"), plainEnv)
	require.NoError(t, err)
	assert.Equal(t, "gpt-4o-mini", p.LLM.Model)
	assert.Equal(t, "calculator", p.Tools[0].Name)
	assert.Equal(t, 4, p.Line("nodes[0]"))

	_, err = Parse("p.yaml", []byte("name: x\nllm: {model: ${MISSING}}\nnodes: [{id: a, type: direct}]\n"), plainEnv)
	require.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "p.yaml:2: environment variable MISSING is not set")

	_, err = Parse("p.yaml", []byte("name: x\n-: /elsewhere/q.yaml\nnodes: [{id: a, type: direct}]\n"), plainEnv)
	require.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), `p.yaml:2: unknown key "-" at top level`, "a key \"-\" must not replace the file name")

	laughs := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for c := 'b'; c <= 'j'; c++ {
		prev := string(c - 1)
		laughs += string(c) + ": &" + string(c) + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
	}
	for _, src := range []string{
		"a: &a [*a]\nname: x\nnodes: [{id: a, type: direct}]\n",
		"a: &a {b: *a}\nname: x\nnodes: [{id: a, type: direct}]\n",
		laughs + "name: x\nnodes: [{id: a, type: direct}]\n",
	} {
		start := time.Now()
		_, err := Parse("p.yaml", []byte(src), plainEnv)
		require.ErrorIs(t, err, ErrInvalid)
		assert.Less(t, time.Since(start), 5*time.Second)
	}
}
