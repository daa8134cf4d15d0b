package redact_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/planner-engine/planner/redact"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testKey = "sk-proj-abcdefghijklmnopqrstuvwxyz012345"

func TestStringReplacesEnvironmentSecretsWithTheirName(t *testing.T) {
	s := redact.New(redact.WithEnviron([]string{
		"OPENAI_API_KEY=" + testKey, "DB_PASSWORD=hunter2hunter2", "GH_TOKEN=ghp_0123456789abcdef",
		"MY_SECRET=correct-horse", "SHORT_TOKEN=abc", "PATH=/usr/local/bin:/usr/bin", "NOEQUALS",
	}))
	assert.Equal(t, 4, s.Len())
	got := s.String("key " + testKey + ", pw hunter2hunter2, gh ghp_0123456789abcdef, s correct-horse, abc and /usr/bin")
	assert.Equal(t, "key [REDACTED:OPENAI_API_KEY], pw [REDACTED:DB_PASSWORD], gh [REDACTED:GH_TOKEN], s [REDACTED:MY_SECRET], abc and /usr/bin", got)
}

func TestStringReadsTheProcessEnvironmentByDefault(t *testing.T) {
	t.Setenv("PLANNER_TEST_API_KEY", "plain-value-without-a-key-shape")
	s := redact.New()
	assert.Equal(t, "echo [REDACTED:PLANNER_TEST_API_KEY]", s.String("echo plain-value-without-a-key-shape"))
}

func TestStringScrubsKeyShapesAndBearerTokens(t *testing.T) {
	s := redact.New(redact.WithEnviron(nil))
	tests := []struct{ in, want string }{
		{"key " + testKey, "key [REDACTED]"},
		{"anthropic sk-ant-api03-abcdefghijklmnop", "anthropic [REDACTED]"},
		{"google AIzaSyA-1234567890abcdefghijklmnopqrstu end", "google [REDACTED] end"},
		{"Authorization: Bearer abc.def-ghi_jkl", "Authorization: Bearer [REDACTED]"},
		{"authorization: BEARER    abcdefghij", "authorization: BEARER [REDACTED]"},
		{"bearer short", "bearer short"},
		{"sk-short and task-abcdefghijklmnopqrstuvwxyz", "sk-short and task-abcdefghijklmnopqrstuvwxyz"},
		{"the bearer of news", "the bearer of news"},
		{"", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, s.String(tt.in), tt.in)
	}
}

func TestLongerSecretsWinAndExtraSecretsAreRedacted(t *testing.T) {
	s := redact.New(
		redact.WithEnviron([]string{"A_KEY=abcdefgh", "B_KEY=abcdefghijkl", "C_SECRET_NAME=zzzzzzzzzz", "DUP_TOKEN=abcdefgh"}),
		redact.WithSecrets("custom-value-1", "", "abcdefgh"),
		redact.WithSecrets("x1"),
	)
	assert.Equal(t, "[REDACTED:B_KEY] [REDACTED:A_KEY] zzzzzzzzzz [REDACTED] [REDACTED]",
		s.String("abcdefghijkl abcdefgh zzzzzzzzzz custom-value-1 x1"))

	s = redact.New(redact.WithEnviron([]string{"C_SECRET_NAME=zzzzzzzzzz", "A_KEY=abcdefgh"}), redact.WithSecretSuffixes("_name"))
	assert.Equal(t, "[REDACTED:C_SECRET_NAME] abcdefgh", s.String("zzzzzzzzzz abcdefgh"))

	s = redact.New(redact.WithEnviron([]string{"PIN_KEY=1234"}), redact.WithMinLength(4))
	assert.Equal(t, "pin [REDACTED:PIN_KEY]", s.String("pin 1234"))
}

func TestNilAndZeroScrubbers(t *testing.T) {
	var nilScrubber *redact.Scrubber
	assert.Equal(t, "key "+testKey, nilScrubber.String("key "+testKey))
	assert.Equal(t, map[string]any{"k": testKey}, redact.Walk(map[string]any{"k": testKey}, nilScrubber))
	assert.Zero(t, nilScrubber.Len())
	var zero redact.Scrubber
	assert.Equal(t, "key [REDACTED]", zero.String("key "+testKey), "the zero value still scrubs key shapes")
}

func TestStringReturnsCleanTextWithoutAllocating(t *testing.T) {
	s := manySecrets()
	text := cleanText(4096)
	allocs := testing.AllocsPerRun(100, func() {
		if out := s.String(text); out != text {
			t.Fatal("clean text changed")
		}
	})
	assert.Zero(t, allocs)
}

func TestScrubberIsSafeForConcurrentUse(t *testing.T) {
	s := redact.New(redact.WithEnviron([]string{"X_API_KEY=" + testKey}))
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 200 {
				in := fmt.Sprintf("%d/%d %s Bearer abcdefghijk", i, j, testKey)
				assert.Equal(t, fmt.Sprintf("%d/%d [REDACTED:X_API_KEY] Bearer [REDACTED]", i, j), s.String(in))
			}
		}()
	}
	wg.Wait()
}

func TestTreeScrubsDecodedJSONAndCredentialFields(t *testing.T) {
	s := redact.New(redact.WithEnviron([]string{"OPENAI_API_KEY=" + testKey}))
	var tree any
	require.NoError(t, json.Unmarshal([]byte(`{
		"headers": {"Authorization": "Basic dXNlcjpwYXNz", "X-Api-Key": "anything", "Accept": "json"},
		"password": {"type": "string"}, "max_tokens": 5, "PromptTokens": "12",
		"list": ["echo `+testKey+`", 3, null, true]}`), &tree))
	got := s.Tree(tree)
	b, err := json.Marshal(got)
	require.NoError(t, err)
	assert.JSONEq(t, `{
		"headers": {"Authorization": "[REDACTED]", "X-Api-Key": "[REDACTED]", "Accept": "json"},
		"password": {"type": "string"}, "max_tokens": 5, "PromptTokens": "12",
		"list": ["echo [REDACTED:OPENAI_API_KEY]", 3, null, true]}`, string(b))
}

func TestIsCredentialKey(t *testing.T) {
	for _, k := range []string{"Authorization", "proxy-authorization", "Cookie", "Set-Cookie", "api_key", "X-Api-Key",
		"access_token", "refresh-token", "client_secret", "password", "passwd", "secret", "token", "Private Key"} {
		assert.True(t, redact.IsCredentialKey(k), k)
	}
	for _, k := range []string{"max_tokens", "PromptTokens", "CompletionTokens", "key", "user", "tokenizer", "monkey"} {
		assert.False(t, redact.IsCredentialKey(k), k)
	}
}

// manySecrets is a scrubber with ten environment secrets of varied shapes.
func manySecrets() *redact.Scrubber {
	env := []string{"PATH=/usr/bin", "HOME=/root"}
	for i := range 10 {
		env = append(env, fmt.Sprintf("SERVICE%d_API_KEY=%c%c-secret-value-%02d-%s", i, 'a'+i, 'q'-i, i, strings.Repeat("x", i+4)))
	}
	return redact.New(redact.WithEnviron(env))
}

// cleanText is n bytes of prose, with words that come close to the
// patterns (bearer, sk-, AIza, task-), and no secret.
func cleanText(n int) string {
	const para = "The bearer of the message asked the agent to look up the capital of France. " +
		"Thought: I should use the search tool. Action: search[Paris] Observation: Paris is the capital " +
		"and largest city of France; see task-list and risk-free notes. AIzb is not a key. "
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(para)
	}
	return b.String()[:n]
}

func BenchmarkScrubNoSecret(b *testing.B) {
	s := manySecrets()
	text := cleanText(4096)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if s.String(text) != text {
			b.Fatal("clean text changed")
		}
	}
}

func BenchmarkScrubOneSecret(b *testing.B) {
	s := manySecrets()
	text := cleanText(2048) + "echo em-secret-value-04-xxxxxxxx " + cleanText(2000)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if s.String(text) == text {
			b.Fatal("secret not scrubbed")
		}
	}
}
