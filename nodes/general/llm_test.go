package general_test

import (
	"testing"

	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/nodes/general"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// personSchema is an object schema with a required string and a
// required integer, as a YAML mapping decodes.
func personSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"name": map[string]any{"type": "string"},
			"age":  map[string]any{"type": "integer", "minimum": 0},
		},
		"required": []any{"name", "age"},
	}
}

func TestLLMTextReplyBecomesTheAnswer(t *testing.T) {
	rec := recorder(llmtest.Reply("  Paris \n"))
	route, st, tr, err := run(t, general.NewLLM, env(t, rec), map[string]any{
		"system": "You answer geography questions.",
		"prompt": "Q: {{.Question}}",
	}, "What is the capital of France?")
	require.NoError(t, err)
	assert.Empty(t, route)
	assert.Equal(t, "Paris", st.Answer)
	assert.True(t, st.Done)
	assert.True(t, st.Complete)
	reqs := rec.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "You answer geography questions.\nQ: What is the capital of France?\n", reqs[0].Text())
	assert.False(t, reqs[0].Options.JSONMode, "no JSON mode without a schema")
	require.Len(t, tr.OfKind(trace.KindAnswer), 1)
	assert.Equal(t, "Paris", tr.OfKind(trace.KindAnswer)[0].Text)
}

func TestLLMEmptyReplyLeavesTheRunIncomplete(t *testing.T) {
	_, st, _, err := run(t, general.NewLLM, env(t, llmtest.Reply(" ")), nil, "q")
	require.NoError(t, err)
	assert.True(t, st.Done)
	assert.False(t, st.Complete)
	assert.Equal(t, state.FailureParse, st.Failure)
}

func TestLLMTextReplyIntoAVarFeedsTheNextPrompt(t *testing.T) {
	rec := recorder(llmtest.Replies("Paris", "Yes"))
	e := env(t, rec)
	first, err := general.NewLLM(e, nodeSpec("draft", map[string]any{"output": "var:draft"}))
	require.NoError(t, err)
	second, err := general.NewLLM(e, nodeSpec("check", map[string]any{"prompt": "Is {{.Vars.draft}} right?"}))
	require.NoError(t, err)
	st := hookedState(state.Task{Question: "Capital of France?"})
	ctx, tr := traced()
	_, err = first.Node.Run(ctx, st)
	require.NoError(t, err)
	got, ok := st.Vars.Get("draft")
	require.True(t, ok)
	assert.Equal(t, "Paris", got)
	assert.Empty(t, st.Answer, "a var output leaves the answer alone")
	_, err = second.Node.Run(ctx, st)
	require.NoError(t, err)
	assert.Contains(t, rec.Requests()[1].Text(), "Is Paris right?")
	assert.Equal(t, "Yes", st.Answer)
	var info []string
	for _, ev := range tr.OfKind(trace.KindInfo) {
		info = append(info, ev.Text)
	}
	assert.Equal(t, []string{"var draft = Paris"}, info)
}

func TestLLMNoteOutputIsDeclared(t *testing.T) {
	built, err := general.NewLLM(env(t, nil), nodeSpec("n", map[string]any{"output": "note:draft"}))
	require.NoError(t, err)
	assert.Equal(t, []string{"draft"}, built.Notes)
	assert.Empty(t, built.Routes)
}

func TestLLMSchemaValidFirstTime(t *testing.T) {
	rec := recorder(llmtest.Reply("Here it is:\n```json\n{\"name\": \"Ada <L>\", \"age\": 36}\n```"))
	_, st, tr, err := run(t, general.NewLLM, env(t, rec), map[string]any{
		"prompt": "Extract the person: {{.Question}}",
		"schema": personSchema(),
		"output": "var:person",
	}, "Ada Lovelace, aged 36")
	require.NoError(t, err)
	got, ok := st.Vars.Get("person")
	require.True(t, ok)
	assert.Equal(t, `{"age":36,"name":"Ada <L>"}`, got, "canonical JSON: compact, keys sorted, no HTML escapes")
	reqs := rec.Requests()
	require.Len(t, reqs, 1)
	assert.True(t, reqs[0].Options.JSONMode, "JSON mode for an object schema")
	prompt := reqs[0].Text()
	assert.Contains(t, prompt, "Extract the person: Ada Lovelace, aged 36")
	assert.Contains(t, prompt, "--- added automatically:", "a custom prompt without the schema gets it appended")
	assert.Contains(t, prompt, `"required": [`)
	assert.Empty(t, tr.OfKind(trace.KindGuard))
}

func TestLLMSchemaAnswerIsTheCanonicalJSON(t *testing.T) {
	rec := recorder(llmtest.Reply(`{"age": 36, "name": "Ada"}`))
	_, st, _, err := run(t, general.NewLLM, env(t, rec), map[string]any{"schema": personSchema()}, "Ada, 36")
	require.NoError(t, err)
	assert.Equal(t, `{"age":36,"name":"Ada"}`, st.Answer)
	assert.True(t, st.Complete)
	prompt := rec.Requests()[0].Text()
	assert.Contains(t, prompt, "Reply with a JSON value only, matching this JSON Schema:", "the default prompt shows the schema")
	assert.NotContains(t, prompt, "added automatically")
}

func TestLLMSchemaInvalidThenFixedOnRetry(t *testing.T) {
	rec := recorder(llmtest.Replies(`{"name": "Ada", "age": "thirty-six"}`, `{"name": "Ada", "age": 36}`))
	_, st, tr, err := run(t, general.NewLLM, env(t, rec), map[string]any{"schema": personSchema(), "output": "var:person"}, "Ada, 36")
	require.NoError(t, err)
	got, _ := st.Vars.Get("person")
	assert.Equal(t, `{"age":36,"name":"Ada"}`, got)
	reqs := rec.Requests()
	require.Len(t, reqs, 2)
	retry := reqs[1].Messages
	require.Len(t, retry, 4, "system, prompt, the rejected reply, the feedback")
	assert.Equal(t, llms.ChatMessageTypeAI, retry[2].Role)
	assert.Equal(t, `{"name": "Ada", "age": "thirty-six"}`, llmtest.LastText(retry[:3]))
	feedback := llmtest.LastText(retry)
	assert.Contains(t, feedback, "does not match the JSON Schema")
	assert.Contains(t, feedback, "at /age: got string, want integer", "the validation error is fed back")
	guards := tr.OfKind(trace.KindGuard)
	require.Len(t, guards, 1)
	assert.Equal(t, general.GuardSchema, guards[0].Data["guard"])
	assert.Equal(t, 1, guards[0].Data["attempt"])
}

func TestLLMReplyWithoutJSONIsRetried(t *testing.T) {
	rec := recorder(llmtest.Replies("I cannot say.", `Sure: {"name": "Ada", "age": 36} as asked.`))
	_, st, _, err := run(t, general.NewLLM, env(t, rec), map[string]any{"schema": personSchema()}, "Ada, 36")
	require.NoError(t, err)
	assert.Equal(t, `{"age":36,"name":"Ada"}`, st.Answer, "a value embedded in prose is found")
	assert.Contains(t, llmtest.LastText(rec.Requests()[1].Messages), "the reply holds no JSON value")
}

func TestLLMSchemaFailsPastMaxRetries(t *testing.T) {
	rec := recorder(llmtest.Reply(`{"name": "Ada"}`))
	_, st, _, err := run(t, general.NewLLM, env(t, rec), map[string]any{"schema": personSchema(), "max_retries": 1}, "Ada")
	require.ErrorIs(t, err, general.ErrSchema)
	var se *general.SchemaError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 2, se.Attempts)
	assert.Equal(t, []string{"at the top level: missing property 'age'"}, se.Problems)
	assert.Contains(t, err.Error(), "missing property 'age'")
	assert.Equal(t, 2, rec.Calls(), "one call and one retry")
	assert.Empty(t, st.Answer)
}

func TestLLMSchemaDefaultRetries(t *testing.T) {
	rec := recorder(llmtest.Reply(`[]`))
	_, _, _, err := run(t, general.NewLLM, env(t, rec), map[string]any{"schema": personSchema()}, "Ada")
	require.ErrorIs(t, err, general.ErrSchema)
	assert.Equal(t, general.DefaultMaxRetries+1, rec.Calls())
}

func TestLLMSchemaFailureTakesTheFailedRoute(t *testing.T) {
	rec := recorder(llmtest.Reply(`{"name": 7, "age": 36}`))
	built, err := general.NewLLM(env(t, rec), nodeSpec("n", map[string]any{"schema": personSchema(), "max_retries": 0, "on_failure": "route"}))
	require.NoError(t, err)
	assert.Equal(t, []string{general.RouteFailed}, built.Routes)
	st := hookedState(state.Task{Question: "Ada"})
	ctx, tr := traced()
	route, err := built.Node.Run(ctx, st)
	require.NoError(t, err)
	assert.Equal(t, general.RouteFailed, route)
	assert.Equal(t, 1, rec.Calls())
	assert.Equal(t, []string{state.FailureParse}, st.Incidents)
	assert.False(t, st.Done, "the run goes on along the failed route")
	errs := tr.OfKind(trace.KindError)
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Text, "at /name: got number, want string")
	assert.Equal(t, general.RouteFailed, errs[0].Data["route"])
}

func TestLLMSpreadsObjectFieldsIntoVars(t *testing.T) {
	schema := `{"type": "object", "properties": {"cityName": {"type": "string"}, "population": {"type": "number"},
		"tags": {"type": "array"}}, "required": ["cityName"]}`
	rec := recorder(llmtest.Reply(`{"cityName": "Paris", "population": 2.1e6, "tags": ["capital", "fr"]}`))
	_, st, _, err := run(t, general.NewLLM, env(t, rec), map[string]any{"schema": schema, "output": "vars:city"}, "Paris")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"city.cityName": "Paris", "city.population": "2.1e6", "city.tags": `["capital","fr"]`}, st.Vars.All())
	assert.Empty(t, st.Answer)
}

func TestLLMJSONModeFollowsTheSchemaType(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings map[string]any
		want     bool
	}{
		{"array schema", map[string]any{"schema": map[string]any{"type": "array"}}, false},
		{"forced on", map[string]any{"schema": map[string]any{"type": "array"}, "json_mode": true}, true},
		{"forced off", map[string]any{"schema": personSchema(), "json_mode": false}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := recorder(llmtest.Reply(`[1]`))
			_, _, _, _ = run(t, general.NewLLM, env(t, rec), tc.settings, "q")
			require.NotEmpty(t, rec.Requests())
			assert.Equal(t, tc.want, rec.Requests()[0].Options.JSONMode)
		})
	}
}

func TestLLMBadSchemaIsAConstructionError(t *testing.T) {
	for _, tc := range []struct {
		name   string
		schema any
		want   string
	}{
		{"unknown type", map[string]any{"type": "strng"}, "at /type: value must be one of"},
		{"required not a list", map[string]any{"type": "object", "required": "name"}, "at /required: got string, want array"},
		{"bad pattern", map[string]any{"type": "string", "pattern": "(("}, "is not valid regex"},
		{"dangling $ref", map[string]any{"$ref": "#/$defs/missing"}, "missing"},
		{"other document", map[string]any{"$ref": "https://example.com/s.json"}, "cannot refer to another document"},
		{"not a mapping", []any{"a"}, "must be a mapping or JSON text"},
		{"bad text", "{not json", "does not parse"},
		{"lower-cased keys", map[string]any{"type": "object", "properties": map[string]any{"firstname": map[string]any{}}, "required": []any{"firstName"}}, "lower-cases mapping keys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := general.NewLLM(env(t, nil), nodeSpec("extract", map[string]any{"schema": tc.schema}))
			requireSettingError(t, err, "schema")
			assert.ErrorIs(t, err, general.ErrBadSchema)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

func TestLLMSettingErrors(t *testing.T) {
	for _, tc := range []struct {
		settings map[string]any
		key      string
	}{
		{map[string]any{"output": "var:9lives"}, "output"},
		{map[string]any{"output": "vars:p"}, "output"},
		{map[string]any{"output": "vars", "schema": map[string]any{"type": "array"}}, "output"},
		{map[string]any{"max_retries": 1}, "max_retries"},
		{map[string]any{"json_mode": true}, "json_mode"},
		{map[string]any{"schema": personSchema(), "max_retries": -1}, "max_retries"},
		{map[string]any{"on_failure": "retry"}, "on_failure"},
		{map[string]any{"prompt": "{{.Questoin}}"}, "prompt"},
		{map[string]any{"shema": personSchema()}, "shema"},
	} {
		_, err := general.NewLLM(env(t, nil), nodeSpec("n", tc.settings))
		requireSettingError(t, err, tc.key)
	}
}

func TestLLMModelErrorEndsTheNode(t *testing.T) {
	_, _, _, err := run(t, general.NewLLM, env(t, llmtest.Fail(assert.AnError)), map[string]any{"schema": personSchema(), "on_failure": "route"}, "q")
	require.ErrorIs(t, err, assert.AnError, "a model error is not a schema failure")
	assert.NotErrorIs(t, err, general.ErrSchema)
}
