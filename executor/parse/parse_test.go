package parse

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fence = "```"

type parseCase struct {
	name   string
	text   string
	format Format // "" means the default (auto)

	kind      Kind
	thought   string
	tool      string
	input     string
	answer    string
	truncated bool
	// errHas and noteHas list substrings that Error and the joined Notes
	// must contain.
	errHas  []string
	noteHas []string
}

// parseCases covers every accepted form and every error the package
// documentation describes.
var parseCases = []parseCase{
	// The Thought / Action / Action Input / Final Answer form.
	{
		name: "react action",
		text: "Thought: I need the capital of France.\nAction: search\nAction Input: capital of France",
		kind: KindAction, thought: "I need the capital of France.", tool: "search", input: "capital of France",
	},
	{
		name: "react final answer",
		text: "Thought: The page says Paris.\nFinal Answer: Paris",
		kind: KindFinal, thought: "The page says Paris.", answer: "Paris",
	},
	{
		name: "labels in any case",
		text: "THOUGHT: check the date\naction: Clock\nACTION INPUT: UTC",
		kind: KindAction, thought: "check the date", tool: "Clock", input: "UTC",
	},
	{
		name: "numbered labels",
		text: "Thought 2: now the population\nAction 2: lookup\nAction Input 2: population",
		kind: KindAction, thought: "now the population", tool: "lookup", input: "population",
	},
	{
		name: "numbered final answer",
		text: "Thought 4: done\nFinal Answer 4: 1,800 to 7,000 ft",
		kind: KindFinal, thought: "done", answer: "1,800 to 7,000 ft",
	},
	{
		name: "full-width colons",
		text: "Thought：look it up\nAction：search\nAction Input：Kyoto",
		kind: KindAction, thought: "look it up", tool: "search", input: "Kyoto",
	},
	{
		name: "chinese labels",
		text: "思考：我需要搜索北京的人口。\n行动：search\n行动输入：北京 人口",
		kind: KindAction, thought: "我需要搜索北京的人口。", tool: "search", input: "北京 人口",
	},
	{
		name: "chinese numbered labels with ascii colons",
		text: "思考1: 查一下\n行动1: search\n行动输入1: 上海",
		kind: KindAction, thought: "查一下", tool: "search", input: "上海",
	},
	{
		name: "chinese final answer",
		text: "思考：已经知道了\n最终答案：两千一百万",
		kind: KindFinal, thought: "已经知道了", answer: "两千一百万",
	},
	{
		name: "markdown emphasis around labels",
		text: "**Thought:** compare both\n**Action**: `calculator`\n**Action Input:** 3*7",
		kind: KindAction, thought: "compare both", tool: "calculator", input: "3*7",
	},
	{
		name: "label separators underscore and none",
		text: "Thought: x\nAction: search\nAction_Input: y\n",
		kind: KindAction, thought: "x", tool: "search", input: "y",
	},
	{
		name: "trailing whitespace",
		text: "Thought: I need to search for NBA  \nAction: Search \t\nAction Input: NBA   \n\n",
		kind: KindAction, thought: "I need to search for NBA", tool: "Search", input: "NBA",
	},
	{
		name: "windows line endings",
		text: "Thought: x\r\nAction: search\r\nAction Input: y\r\n",
		kind: KindAction, thought: "x", tool: "search", input: "y",
	},
	{
		name: "newline after labels",
		text: "\n    I can list the directory.\n\n    Action:\n    Terminal\n\n    Action Input:\n    ls -l ~/.config/\n    ",
		kind: KindAction, thought: "I can list the directory.", tool: "Terminal", input: "ls -l ~/.config/",
	},
	{
		name: "final answer on the next line",
		text: "Thought: I can answer\nFinal Answer:\n1994",
		kind: KindFinal, thought: "I can answer", answer: "1994",
	},
	{
		name: "multiline final answer",
		text: "Thought: two years\nFinal Answer: 1994\n1993",
		kind: KindFinal, thought: "two years", answer: "1994\n1993",
	},
	{
		name: "unlabelled thought and indented labels",
		text: "I can use the `foo` tool to achieve the goal.\n    Action: foo\n    Action Input: bar",
		kind: KindAction, thought: "I can use the `foo` tool to achieve the goal.", tool: "foo", input: "bar",
	},
	{
		name: "multiline input runs to the next label",
		text: "Thought: query it\nAction: sql\nAction Input: SELECT name\nFROM users\nWHERE id = 7\nThought: then read the rows",
		kind: KindAction, thought: "query it", tool: "sql", input: "SELECT name\nFROM users\nWHERE id = 7",
	},
	{
		name: "fenced code input",
		text: "I need a unit test.\n\nAction: Python\nAction Input:\n" + fence + "\nimport unittest\n\nunittest.main()\n" + fence,
		kind: KindAction, thought: "I need a unit test.", tool: "Python", input: "import unittest\n\nunittest.main()",
	},
	{
		name: "fenced json input kept as written",
		text: "Thought: call the API\nAction: http_get\nAction Input: " + fence + "json\n{\n  \"url\": \"https://example.org\",\n  \"retries\": 2\n}\n" + fence,
		kind: KindAction, thought: "call the API", tool: "http_get", input: "{\n  \"url\": \"https://example.org\",\n  \"retries\": 2\n}",
	},
	{
		name: "labels inside a fenced input are not labels",
		text: "Action: write_file\nAction Input:\n" + fence + "\nThought: this is file content\n" + fence + "\nThought: saved",
		kind: KindAction, tool: "write_file", input: "Thought: this is file content",
	},
	{
		name: "bare json object input",
		text: "Thought: add them\nAction: calculator\nAction Input: {\"expression\": \"2 + 2\"}",
		kind: KindAction, thought: "add them", tool: "calculator", input: "{\"expression\": \"2 + 2\"}",
	},
	{
		name: "multiline json input",
		text: "Action: calendar\nAction Input: {\n  \"day\": \"monday\",\n  \"slots\": [1, 2]\n}\n",
		kind: KindAction, tool: "calendar", input: "{\n  \"day\": \"monday\",\n  \"slots\": [1, 2]\n}",
	},
	{
		name: "text after a json input is dropped",
		text: "Action: calculator\nAction Input: {\"expression\": \"6*7\"}\nI will wait for the result.",
		kind: KindAction, tool: "calculator", input: "{\"expression\": \"6*7\"}",
		noteHas: []string{"ignored text after the JSON input"},
	},
	{
		name: "fenced input under the action line without an input label",
		text: "Action: calendar\n" + fence + "json\n{\"day\": \"friday\"}\n" + fence,
		kind: KindAction, tool: "calendar", input: "{\"day\": \"friday\"}",
		noteHas: []string{`no "Action Input:"; took the input from the lines below "Action:"`},
	},
	{
		name: "surrounding quotes stripped",
		text: "Action: search\nAction Input: \"Barack Obama\"",
		kind: KindAction, tool: "search", input: "Barack Obama",
	},
	{
		name: "surrounding backticks and single quotes stripped",
		text: "Action: 'shell'\nAction Input: `ls -la`",
		kind: KindAction, tool: "shell", input: "ls -la",
	},
	{
		name: "trailing quote that belongs to the input is kept",
		text: "Action: speak\nAction Input: say \"hi\"",
		kind: KindAction, tool: "speak", input: "say \"hi\"",
	},
	{
		name: "quotes at both ends that belong to the input are kept",
		text: "Action: query_sql_db\nAction Input: \"UserName\", MAX(total) FROM shifts GROUP BY \"UserName\"",
		kind: KindAction, tool: "query_sql_db", input: "\"UserName\", MAX(total) FROM shifts GROUP BY \"UserName\"",
	},
	{
		name: "missing action input means empty input",
		text: "Thought: what time is it\nAction: clock",
		kind: KindAction, thought: "what time is it", tool: "clock", input: "",
		noteHas: []string{`no "Action Input:"; used an empty input`},
	},
	{
		name: "missing action input before another thought",
		text: "Thought: I need to search for NBA\nAction: Search\nThought: NBA",
		kind: KindAction, thought: "I need to search for NBA", tool: "Search", input: "",
		noteHas: []string{`no "Action Input:"`},
	},
	{
		name: "empty action input at the end means empty input",
		text: "Thought: what time is it\nAction: clock\nAction Input: ",
		kind: KindAction, thought: "what time is it", tool: "clock", input: "",
		noteHas: []string{`empty "Action Input:"`},
	},
	{
		name: "action input before its action is paired",
		text: "Thought: swap\nAction Input: Lisbon\nAction: weather",
		kind: KindAction, thought: "swap", tool: "weather", input: "Lisbon",
		noteHas: []string{`"Action Input:" came before "Action:"`},
	},
	{
		name: "whole reply in a code fence",
		text: fence + "\nThought: x\nAction: search\nAction Input: y\n" + fence,
		kind: KindAction, thought: "x", tool: "search", input: "y",
	},
	{
		name: "finish tool in react form is the final answer",
		text: "Thought: done\nAction: Final Answer\nAction Input: 42",
		kind: KindFinal, thought: "done", answer: "42",
		noteHas: []string{`read action "Final Answer" as the final answer`},
	},
	{
		name: "finish tool answer is kept as written",
		text: "Action: finish\nAction Input: \"Richard Nixon\"",
		kind: KindFinal, answer: "\"Richard Nixon\"",
	},
	{
		name: "finish tool without input is an empty answer",
		text: "Thought: done\nAction: Finish",
		kind: KindInvalid, thought: "done",
		errHas: []string{"the final answer is empty"},
	},
	{
		name: "question echoed before the thought is not thought",
		text: "Question: How tall is it?\nThought: search it\nAction: search\nAction Input: height",
		kind: KindAction, thought: "search it", tool: "search", input: "height",
	},
	{
		name: "label words inside a line are text",
		text: "Thought: I will write Action: later\nAction: search\nAction Input: q",
		kind: KindAction, thought: "I will write Action: later", tool: "search", input: "q",
	},

	// The ReAct paper's form.
	{
		name: "paper action",
		text: "Thought 1: I need to search Colorado orogeny.\nAction 1: Search[Colorado orogeny]",
		kind: KindAction, thought: "I need to search Colorado orogeny.", tool: "Search", input: "Colorado orogeny",
	},
	{
		name: "paper finish",
		text: "Thought 3: So the answer is Richard Nixon.\nAction 3: Finish[Richard Nixon]",
		kind: KindFinal, thought: "So the answer is Richard Nixon.", answer: "Richard Nixon",
	},
	{
		name: "paper lower-case tool",
		text: "Thought 2: look up the phrase\nAction 2: lookup[named after]",
		kind: KindAction, thought: "look up the phrase", tool: "lookup", input: "named after",
	},
	{
		name: "paper nested brackets",
		text: "Thought: buy it\nAction: click[Pack of 3 [ 20 Towelettes ] + Bag]",
		kind: KindAction, thought: "buy it", tool: "click", input: "Pack of 3 [ 20 Towelettes ] + Bag",
	},
	{
		name: "paper quotes inside the input",
		text: "Action 1: Search[\"The Simpsons\" character Milhouse]",
		kind: KindAction, tool: "Search", input: "\"The Simpsons\" character Milhouse",
	},
	{
		name: "paper quotes around the input",
		text: "Action 1: Search[\"Milhouse\"]",
		kind: KindAction, tool: "Search", input: "Milhouse",
	},
	{
		name: "paper blank line between thought and action",
		text: "Thought 1: I should search it.\n\nAction 1: Search[High Plains]",
		kind: KindAction, thought: "I should search it.", tool: "Search", input: "High Plains",
	},
	{
		name: "paper action two lines below its label",
		text: "Thought 1: I should search it.\nAction 1:\n\nSearch[High Plains (United States)]",
		kind: KindAction, thought: "I should search it.", tool: "Search", input: "High Plains (United States)",
	},
	{
		name: "paper action line without a label",
		text: "Thought 1: I should search it.\nSearch[Adam Clayton Powell]",
		kind: KindAction, thought: "I should search it.", tool: "Search", input: "Adam Clayton Powell",
	},
	{
		name: "paper finish line without a label",
		text: "Thought: that settles it\nFinish[yes]",
		kind: KindFinal, thought: "that settles it", answer: "yes",
	},
	{
		name: "paper two actions on one line",
		text: "Thought 1: both\nAction 1: Search[Arthur's Magazine], Search[First for Women]",
		kind: KindAction, thought: "both", tool: "Search", input: "Arthur's Magazine",
		noteHas: []string{"2 actions on one line; took the first"},
	},
	{
		name: "paper two bare actions on one line",
		text: "Search[A]; Lookup[B] Search[C]",
		kind: KindAction, tool: "Search", input: "A",
		noteHas: []string{"3 actions on one line; took the first"},
	},
	{
		name: "paper several action lines",
		text: "Thought 1: a\nAction 1: Search[A]\nThought 2: b\nAction 2: Search[B]",
		kind: KindAction, thought: "a", tool: "Search", input: "A",
		noteHas: []string{"ignored 1 later action(s)"},
	},
	{
		name: "paper unbalanced brackets run to the last one",
		text: "Action: Search[a [b]",
		kind: KindAction, tool: "Search", input: "a [b",
	},
	{
		name: "paper input spanning lines",
		text: "Action: write[line one\nline two]",
		kind: KindAction, tool: "write", input: "line one\nline two",
	},
	{
		name: "paper empty brackets",
		text: "Action: get_time[]",
		kind: KindAction, tool: "get_time", input: "",
	},
	{
		name: "paper bracket input wins over an action input",
		text: "Action: Search[Paris]\nAction Input: London",
		kind: KindAction, tool: "Search", input: "Paris",
		noteHas: []string{"the input in brackets wins"},
	},
	{
		name: "paper emphasis around the call",
		text: "Action 1: **Search[Kyoto]**",
		kind: KindAction, tool: "Search", input: "Kyoto",
	},
	{
		name: "paper bracket mentioned inside a thought is not an action",
		text: "Thought: maybe Search[x] would help, or Lookup[y].",
		kind: KindInvalid, thought: "maybe Search[x] would help, or Lookup[y].",
		errHas: []string{`no "Action:" or "Final Answer:" found`},
	},
	{
		name: "paper chinese tool name",
		text: "思考：搜一下\n行动：搜索[长城]",
		kind: KindAction, thought: "搜一下", tool: "搜索", input: "长城",
	},

	// Invented observations.
	{
		name: "invented observation then answer cannot hijack the action",
		text: "Thought: search first\nAction: search\nAction Input: NBA founding\nObservation: founded in 1946\nThought: I know it\nFinal Answer: 1946",
		kind: KindAction, thought: "search first", tool: "search", input: "NBA founding", truncated: true,
		noteHas: []string{"cut an invented Observation"},
	},
	{
		name: "numbered invented observation in paper form",
		text: "Thought 1: x\nAction 1: Search[A]\nObservation 1: A is a letter.\nThought 2: y\nAction 2: Finish[A]",
		kind: KindAction, thought: "x", tool: "Search", input: "A", truncated: true,
	},
	{
		name: "chinese invented observation",
		text: "思考：查\n行动：search\n行动输入：长城\n观察：长城很长\n最终答案：很长",
		kind: KindAction, thought: "查", tool: "search", input: "长城", truncated: true,
	},
	{
		name: "emphasised invented observation",
		text: "Action: search\nAction Input: q\n**Observation:** made up\nFinal Answer: made up",
		kind: KindAction, tool: "search", input: "q", truncated: true,
	},
	{
		name: "invented observation label at the start of an input",
		text: "Action: search\nAction Input: \"Observation: made up\"",
		kind: KindAction, tool: "search", input: "", truncated: true,
	},
	{
		name: "reply that is only an observation",
		text: "Observation: the tool said yes\nFinal Answer: yes",
		kind: KindInvalid, truncated: true,
		errHas: []string{`starts with "Observation:"`, `Do not write "Observation:" yourself`},
	},

	{
		name: "no tool and then an invented observation",
		text: "Thought: hmm\nAction: None\nObservation: nothing",
		kind: KindInvalid, thought: "hmm", truncated: true,
		errHas: []string{`"Action:" does not name a tool`, `Do not write "Observation:" yourself`},
	},
	// Several decisions in one reply.
	{
		name: "action before a final answer wins",
		text: "Thought: check\nAction: search\nAction Input: q\nThought: surely\nFinal Answer: guess",
		kind: KindAction, thought: "check", tool: "search", input: "q",
		noteHas: []string{"ignored a final answer written after the action"},
	},
	{
		name: "paper action before finish wins",
		text: "Action 1: Search[A]\nAction 2: Finish[B]",
		kind: KindAction, tool: "Search", input: "A",
		noteHas: []string{"ignored a final answer written after the action"},
	},
	{
		name: "final answer before an action is ambiguous",
		text: "Thought: I think it is 7\nFinal Answer: 7\nAction: calculator\nAction Input: 3+4",
		kind: KindInvalid, thought: "I think it is 7",
		errHas: []string{"final answer followed by an action", "not both"},
	},
	{
		name: "final answer then an invented new question",
		text: "Thought 3: so Nixon\nAction 3: Finish[Richard Nixon]\nQuestion: Which magazine was started first?\nThought 1: search both\nAction 1: Search[Arthur's Magazine]",
		kind: KindFinal, thought: "so Nixon", answer: "Richard Nixon",
		noteHas: []string{`ignored an invented new "Question:"`},
	},
	{
		name: "text after an invented question is not read",
		text: "Final Answer: 5\nQuestion: next?\nAction Input: x\nAction: search",
		kind: KindFinal, answer: "5",
		noteHas: []string{`ignored an invented new "Question:"`},
	},
	{
		name: "final answer followed by action none",
		text: "Thought: done\nFinal Answer: 12\nAction: None",
		kind: KindFinal, thought: "done", answer: "12",
		noteHas: []string{"ignored an action with no tool"},
	},
	{
		name: "action none then final answer",
		text: "Thought: done\nAction: N/A\nFinal Answer: 12",
		kind: KindFinal, thought: "done", answer: "12",
	},
	{
		name: "two final answers take the first",
		text: "Final Answer: 12\nFinal Answer: 13",
		kind: KindFinal, answer: "12",
		noteHas: []string{"ignored 1 later final answer(s)"},
	},
	{
		name:   "malformed first action is reported even before a valid one",
		text:   "Action: Search[Barack\nAction: Search[Barack Obama]",
		kind:   KindInvalid,
		errHas: []string{`"Search[" has no closing "]"`},
	},
	{
		name:   "empty finish is reported even before a valid action",
		text:   "Action: Finish[]\nAction: Search[x]",
		kind:   KindInvalid,
		errHas: []string{"the final answer is empty"},
	},

	// Format errors.
	{
		name:   "empty reply",
		text:   "",
		kind:   KindInvalid,
		errHas: []string{"the reply is empty", `"Action: <tool name>"`, `"Final Answer: <answer>"`},
	},
	{
		name:   "blank reply",
		text:   " \n\t\n",
		kind:   KindInvalid,
		errHas: []string{"the reply is empty"},
	},
	{
		name: "thought only",
		text: "Thought: I should think more about this.",
		kind: KindInvalid, thought: "I should think more about this.",
		errHas: []string{`Invalid format: no "Action:" or "Final Answer:" found.`, `"Action Input: <tool input>"`},
	},
	{
		name: "plain text without labels",
		text: "The answer is probably 42.",
		kind: KindInvalid, thought: "The answer is probably 42.",
		errHas: []string{`no "Action:" or "Final Answer:" found`},
	},
	{
		name: "action input without action",
		text: "Thought: I need to search for NBA\nThought: Search\nAction Input: NBA",
		kind: KindInvalid, thought: "I need to search for NBA\nSearch",
		errHas: []string{`"Action Input:" found without an "Action:"`},
	},
	{
		name: "truncated after the action label",
		text: "Thought: I will search\nAction:",
		kind: KindInvalid, thought: "I will search",
		errHas: []string{`"Action:" does not name a tool`, "cut off"},
	},
	{
		name:   "action input given but no tool",
		text:   "Action:\nAction Input: Paris",
		kind:   KindInvalid,
		errHas: []string{`"Action:" does not name a tool`},
	},
	{
		name: "truncated after the final answer label",
		text: "Thought: I know it\nFinal Answer:",
		kind: KindInvalid, thought: "I know it",
		errHas: []string{"the final answer is empty", "cut off"},
	},
	{
		name: "paper unclosed bracket",
		text: "Thought 1: search Obama\nAction 1: Search[Barack Ob",
		kind: KindInvalid, thought: "search Obama",
		errHas: []string{`"Search[" has no closing "]"`, "cut off"},
	},
	{
		name:   "paper empty finish",
		text:   "Action: Finish[ ]",
		kind:   KindInvalid,
		errHas: []string{"the final answer is empty"},
	},
	{
		name: "word that starts like a label is not one",
		text: "Actions: none yet\nThoughtful: yes",
		kind: KindInvalid, thought: "Actions: none yet\nThoughtful: yes",
		errHas: []string{"no \"Action:\""},
	},

	// Format selection.
	{
		name: "react format rejects a bracket call",
		text: "Thought: x\nAction: Search[Paris]", format: FormatReAct,
		kind: KindInvalid, thought: "x",
		errHas: []string{"write the tool name alone", `"Action Input: <tool input>"`},
	},
	{
		name: "react format ignores bare calls",
		text: "Thought: x\nFinish[Paris]", format: FormatReAct,
		kind: KindInvalid, thought: "x\nFinish[Paris]",
		errHas: []string{`no "Action:" or "Final Answer:" found`},
	},
	{
		name: "react format accepts the react form",
		text: "Thought: x\nAction: search\nAction Input: [1, 2]", format: FormatReAct,
		kind: KindAction, thought: "x", tool: "search", input: "[1, 2]",
	},
	{
		name: "paper format rejects final answer label",
		text: "Thought: x\nFinal Answer: Paris", format: FormatPaper,
		kind: KindInvalid, thought: "x",
		errHas: []string{`"Action: Finish[<answer>]"`},
	},
	{
		name: "paper format rejects a react action",
		text: "Thought: x\nAction: search\nAction Input: Paris", format: FormatPaper,
		kind: KindInvalid, thought: "x",
		errHas: []string{`write the action as "Tool[input]"`},
	},
	{
		name: "paper format error hint",
		text: "Thought: hmm", format: FormatPaper,
		kind: KindInvalid, thought: "hmm",
		errHas: []string{`no "Action: <Tool>[<input>]" or "Finish[<answer>]" found`, `"Action: Finish[<answer>]" when you are done`},
	},
	{
		name: "paper format accepts the paper form",
		text: "Thought 1: x\nAction 1: Finish[Paris]", format: FormatPaper,
		kind: KindFinal, thought: "x", answer: "Paris",
	},
}

func TestParse_Table(t *testing.T) {
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			var opts []Option
			if tc.format != "" {
				opts = append(opts, WithFormat(tc.format))
			}
			got := Parse(tc.text, opts...)
			assert.Equal(t, tc.kind, got.Kind, "kind (error %q)", got.Error)
			assert.Equal(t, tc.thought, got.Thought, "thought")
			assert.Equal(t, tc.tool, got.Tool, "tool")
			assert.Equal(t, tc.input, got.Input, "input")
			assert.Equal(t, tc.answer, got.Answer, "answer")
			assert.Equal(t, tc.truncated, got.Truncated, "truncated")
			if tc.kind == KindInvalid {
				assert.True(t, strings.HasPrefix(got.Error, "Invalid format: "), "error %q", got.Error)
			} else {
				assert.Empty(t, got.Error)
			}
			for _, s := range tc.errHas {
				assert.Contains(t, got.Error, s)
			}
			notes := strings.Join(got.Notes, "\n")
			for _, s := range tc.noteHas {
				assert.Contains(t, notes, s)
			}
		})
	}
}

func TestParse_AmbiguityDependsOnOrder(t *testing.T) {
	action := "Action: search\nAction Input: q"
	answer := "Final Answer: 7"

	first := Parse(action + "\n" + answer)
	assert.Equal(t, KindAction, first.Kind)
	assert.Equal(t, "search", first.Tool)

	second := Parse(answer + "\n" + action)
	assert.Equal(t, KindInvalid, second.Kind)
	assert.Empty(t, second.Answer)
	assert.Empty(t, second.Tool)
}

func TestParse_AutoAcceptsWhatEachFormatAccepts(t *testing.T) {
	for _, tc := range parseCases {
		if tc.format == "" || tc.kind == KindInvalid {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			strict := Parse(tc.text, WithFormat(tc.format))
			auto := Parse(tc.text)
			assert.Equal(t, strict.Kind, auto.Kind)
			assert.Equal(t, strict.Tool, auto.Tool)
			assert.Equal(t, strict.Input, auto.Input)
			assert.Equal(t, strict.Answer, auto.Answer)
		})
	}
}

func TestParse_UnknownFormatOptionMeansAuto(t *testing.T) {
	text := "Thought: x\nAction: Search[Paris]"
	assert.Equal(t, Parse(text), Parse(text, WithFormat("bogus")))
	assert.Equal(t, Parse(text), Parse(text, nil))
}

func TestParse_ResultJSONOmitsEmptyFields(t *testing.T) {
	b, err := json.Marshal(Parse("Final Answer: 3"))
	require.NoError(t, err)
	assert.JSONEq(t, `{"kind":"final","answer":"3"}`, string(b))
}

func TestResult_Err(t *testing.T) {
	require.NoError(t, Parse("Final Answer: 3").Err())
	require.NoError(t, Parse("Action: a\nAction Input: b").Err())

	bad := Parse("Thought: hmm")
	err := bad.Err()
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrFormat))
	assert.Contains(t, err.Error(), bad.Error)
}

func TestCutObservation(t *testing.T) {
	cases := []struct {
		name string
		text string
		kept string
		cut  bool
	}{
		{"no observation", "Action: a\nAction Input: b", "Action: a\nAction Input: b", false},
		{"plain label", "Action: a\nObservation: b\nThought: c", "Action: a", true},
		{"numbered label", "Action 1: Search[x]\nObservation 1: y", "Action 1: Search[x]", true},
		{"lower case and blanks", "A\n   observation   2 : y", "A", true},
		{"bold label", "A\n**Observation:** y", "A", true},
		{"bold label with outer colon", "A\n**Observation**: y", "A", true},
		{"full-width colon", "A\nObservation：y", "A", true},
		{"chinese label", "行动：搜索[长城]\n观察：长城很长", "行动：搜索[长城]", true},
		{"first line", "Observation: y\nA", "", true},
		{"first of several", "A\nObservation: 1\nB\nObservation: 2", "A", true},
		{"inside a line is kept", "Thought: the Observation: field", "Thought: the Observation: field", false},
		{"word without colon is kept", "Observations are useful\nObservation without colon", "Observations are useful\nObservation without colon", false},
		{"longer word is kept", "Observational: x", "Observational: x", false},
		{"empty", "", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kept, cut := CutObservation(tc.text)
			assert.Equal(t, tc.kept, kept)
			assert.Equal(t, tc.cut, cut)
		})
	}
}

func TestNormalizeToolName(t *testing.T) {
	cases := []struct{ in, want string }{
		{"search", "search"},
		{"Search", "search"},
		{"web_search", "websearch"},
		{"Web-Search", "websearch"},
		{" Web Search ", "websearch"},
		{"WEB_SEARCH_v2", "websearchv2"},
		{"搜索", "搜索"},
		{"", ""},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			assert.Equal(t, tc.want, NormalizeToolName(tc.in))
		})
	}
}

func TestParseFormat(t *testing.T) {
	cases := []struct {
		in      string
		want    Format
		wantErr bool
	}{
		{"", FormatAuto, false},
		{"auto", FormatAuto, false},
		{"react", FormatReAct, false},
		{" ReAct ", FormatReAct, false},
		{"react-paper", FormatPaper, false},
		{"mrkl", "", true},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseFormat(tc.in)
			if tc.wantErr {
				require.Error(t, err)
				assert.True(t, errors.Is(err, ErrUnknownFormat))
				assert.Contains(t, err.Error(), "react-paper")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParse_TextAfterInventedQuestionAddsNoNotes(t *testing.T) {
	got := Parse("Final Answer: 5\nQuestion: next?\nAction Input: x\nThought: y")
	require.Equal(t, KindFinal, got.Kind)
	assert.Equal(t, []string{`ignored an invented new "Question:" and everything after it`}, got.Notes)
}

func TestParse_VerbatimCallsKeepTheBracketText(t *testing.T) {
	cases := []struct{ text, input string }{
		{"Thought 1: t\nAction 1: Search[\"Love the Way You Lie\"]", `"Love the Way You Lie"`},
		{"Action: Search[ `x` ]", "`x`"},
		{"Action: lookup[{\"a\": 1} and more]", `{"a": 1} and more`},
		{"Search['quoted']", "'quoted'"},
		{"Action: Search[]\nAction Input: \"from the label\"", "from the label"},
	}
	for _, tc := range cases {
		res := Parse(tc.text, WithVerbatimCalls())
		require.Equal(t, KindAction, res.Kind, tc.text)
		assert.Equal(t, tc.input, res.Input, tc.text)
	}
	assert.Equal(t, "Love the Way You Lie", Parse(cases[0].text).Input, "without the option the quotes go")
	res := Parse("Action: search\nAction Input: \"q\"", WithVerbatimCalls())
	assert.Equal(t, "q", res.Input, "Action Input values are cleaned as usual")
	res = Parse("Action 2: Finish[ \"yes\" ]", WithVerbatimCalls())
	assert.Equal(t, KindFinal, res.Kind)
	assert.Equal(t, `"yes"`, res.Answer)
}
