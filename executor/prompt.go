package executor

import (
	"embed"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dustin/go-humanize"
	"github.com/planner-engine/planner/internal/textutil"
	"github.com/planner-engine/planner/nodekind"
	"github.com/tmc/langchaingo/llms"
)

// prompts holds the embedded default templates and few-shot examples.
//
//go:embed prompts/*.tmpl prompts/*.txt
var prompts embed.FS

// embedded returns an embedded prompt file. The names are fixed in this
// package and covered by tests, so a missing file is a programming error.
func embedded(name string) string {
	b, err := prompts.ReadFile("prompts/" + name)
	if err != nil {
		panic(fmt.Sprintf("executor: embedded prompt %q: %v", name, err))
	}
	return string(b)
}

// Templates declares the loop's templates, system, prompt,
// finalize_prompt and summarize_prompt, with the .Extra values each sees (nodekind.Kind.Templates of
// `react`; `execute` and `lats` take them under react.). A custom system
// template in text mode must list the tools: one that uses neither
// {{.Extra.Tools}} nor {{.Extra.ToolNames}} gets the list appended.
func Templates() []nodekind.TemplateSpec {
	system, task, finalize := templateSpecs(ModeText, StyleChat)
	return []nodekind.TemplateSpec{system, task, finalize, summarizeSpec()}
}

// templateSpecs returns the declarations of the loop's templates for a
// mode and style: in tools mode the provider gets the tools natively, and
// in completion style the instruction is the pipeline's to write (the
// paper's FEVER prompt lists no tools), so a custom system template need
// not list them.
func templateSpecs(mode, style string) (system, task, finalize nodekind.TemplateSpec) {
	tools := []promptTool{{Name: "calculator", Description: "Evaluates an arithmetic expression exactly.", Schema: `{"type":"string"}`}}
	lessons := []string{"Check the arithmetic with the calculator."}
	system = nodekind.TemplateSpec{
		Key: "system",
		Extra: []nodekind.Field{
			{Name: "Tools", Doc: "the tools, a list; each has `.Name`, `.Description` and `.Schema` (the input JSON schema as compact JSON)", Sample: tools},
			{Name: "ToolNames", Doc: "the tool names, comma-separated", Sample: "calculator"},
			{Name: "Examples", Doc: "the few-shot examples (`examples`)", Sample: "Thought: ...\nAction: calculator\nAction Input: 2+2"},
			{Name: "Format", Doc: "`format`: react or react-paper", Sample: FormatReAct},
			{Name: "Mode", Doc: "`mode`: text or tools", Sample: ModeText},
		},
		Required: []nodekind.Requirement{{Fields: []string{"Tools", "ToolNames"}, When: "in text mode",
			Append: "Tools:\n{{range .Extra.Tools}}- {{.Name}}: {{.Description}} Input schema: {{.Schema}}\n{{end}}"}},
	}
	if mode == ModeTools || style == StyleCompletion {
		system = system.Without("Tools")
	}
	task = nodekind.TemplateSpec{
		Key: "prompt",
		Extra: []nodekind.Field{
			{Name: "Task", Doc: "the task: the question, or the plan step an `execute` node runs", Sample: "Compute 17 * 23 + 4"},
			{Name: "Context", Doc: "results of earlier steps (`execute`), or empty", Sample: "#E1 = 391"},
			{Name: "Lessons", Doc: "lessons of earlier attempts, a list", Sample: lessons},
		},
	}
	finalize = nodekind.TemplateSpec{
		Key: "finalize_prompt",
		Extra: []nodekind.Field{
			{Name: "Task", Doc: "as in `prompt`", Sample: "Compute 17 * 23 + 4"},
			{Name: "Context", Doc: "as in `prompt`", Sample: "#E1 = 391"},
			{Name: "Lessons", Doc: "as in `prompt`", Sample: lessons},
			{Name: "Why", Doc: "why the loop stopped without an answer", Sample: "you used all 8 steps you were allowed"},
			{Name: "Scratchpad", Doc: "the steps so far, as text", Sample: "Thought: ...\nAction: calculator\nAction Input: 17*23\nObservation: 391"},
		},
	}
	return system, task, finalize
}

// defaultSystem returns the embedded system template for the settings.
func defaultSystem(s settings) string {
	switch {
	case s.completion():
		return embedded("completion_" + s.language + ".tmpl")
	case s.mode == ModeTools:
		return embedded("system_tools_" + s.language + ".tmpl")
	}
	return embedded("system_" + s.language + ".tmpl")
}

// defaultTask returns the embedded template of the first user message
// (chat style) or of the question line (completion style).
func defaultTask(s settings) string {
	if s.completion() {
		return embedded("completion_task_" + s.language + ".tmpl")
	}
	return embedded("task_" + s.language + ".tmpl")
}

// defaultExamples returns the embedded few-shot examples for text mode; tools
// mode has none by default (the provider describes the tools). Completion
// style shows the demo-qa examples, as written (they begin with a blank
// line, as the paper's do).
func defaultExamples(s settings) string {
	switch {
	case s.mode == ModeTools:
		return ""
	case s.completion():
		text, _ := FallbackExamples(ExamplesDemoQA)
		return text
	}
	name := "examples_react_"
	if s.format == FormatPaper {
		name = "examples_paper_"
	}
	return strings.TrimSpace(embedded(name + s.language + ".txt"))
}

// labels are the words the loop writes into the conversation, per language.
type labels struct {
	// thought, action, actionInput, observation and final are the labels
	// with their separator ("Thought: ", "思考：").
	thought, action, actionInput, observation, final string
	// stops are the stop words of text mode (at most four: OpenAI's limit).
	stops []string
	// tool are the texts of tool calls: the prefix of a failed call's
	// observation, the stand-in for an empty result, the answer to an
	// unknown tool (name, names) and the marker after a cut observation
	// (chars dropped).
	tool nodekind.ToolMessages
	// elided formats the line that replaces an old observation (step,
	// chars, first words).
	elided string
	// repeated formats the warning for a repeated call (tool, step).
	repeated string
	// emptyReply is the feedback after empty replies in tools mode;
	// emptyText the nudge after an empty reply in text mode.
	emptyReply, emptyText string
	// nothingYet is the transcript when no step was completed.
	nothingYet string
	// why* complete "You were solving the task..., but ..." in the
	// finalizer prompt.
	whyBudget, whyParse, whyLoop string
	// whyRunBudget says the run's model budget (limits) ran out.
	whyRunBudget string
	// summary heads the summary of older steps (the last step it
	// covers); summaryRecall points at the recall tool.
	summary, summaryRecall string
	// vars heads the state block (ShowVars).
	vars string
}

func labelsFor(lang string) labels {
	if lang == LanguageChinese {
		return labels{
			thought: "思考：", action: "行动：", actionInput: "行动输入：", observation: "观察：", final: "最终答案：",
			stops: []string{"\nObservation:", "Observation:", "\n观察：", "\n观察:"},
			tool: nodekind.ToolMessages{Error: "错误：", NoOutput: "[工具没有输出]",
				UnknownTool: "错误：没有名为 %q 的工具。可用的工具：%s。", Truncated: "…[已截断 %s 字符]"},
			elided:        "[第 %d 步的观察结果已省略：%s 字符；开头为“%s”]",
			repeated:      "（你在第 %[2]d 步已经用同样的输入调用过 %[1]s，并得到了同样的结果。请利用这个结果、换一个输入或工具，或者给出最终答案。）",
			emptyReply:    "你的回复是空的。请调用一个工具，或者不调用工具、直接给出最终答案。",
			emptyText:     "你的回复是空的。请按上面的格式回复：写出思考和一个行动，或者给出最终答案。",
			nothingYet:    "（还没有完成任何步骤）",
			whyBudget:     "你已经用完了允许的 %d 步",
			whyRunBudget:  "这次运行的调用、token 或费用预算已经用完",
			whyParse:      "你最近的回复都不符合要求的格式",
			whyLoop:       "你一直在重复同一个工具调用",
			summary:       "第 1 到第 %d 步的摘要（这些步骤已不再完整显示）：",
			summaryRecall: "需要其中的细节时，用 recall 工具按步骤编号取回完整的观察结果。",
			vars:          "工作记忆（变量）：",
		}
	}
	return labels{
		thought: "Thought: ", action: "Action: ", actionInput: "Action Input: ", observation: "Observation: ", final: "Final Answer: ",
		stops: []string{"\nObservation:", "Observation:"},
		tool: nodekind.ToolMessages{Error: nodekind.DefaultToolError, NoOutput: nodekind.DefaultNoOutput,
			UnknownTool: nodekind.DefaultUnknownTool, Truncated: nodekind.DefaultTruncated},
		elided:        "[observation of step %d elided: %s chars; it began %q]",
		repeated:      "(You already called %s with this input in step %d and got this same result. Use it, call a tool with a different input, or give your final answer.)",
		emptyReply:    "Your reply was empty. Call a tool, or reply without a tool call to give your final answer.",
		emptyText:     "Your reply was empty. Reply in the format above: a Thought and one Action, or your Final Answer.",
		nothingYet:    "(no step was completed)",
		whyBudget:     "you used all %d steps you were allowed",
		whyRunBudget:  "the run's budget of model calls, tokens or cost is spent",
		whyParse:      "your last replies did not follow the required format",
		whyLoop:       "you kept repeating the same tool call",
		summary:       "Summary of steps 1-%d (no longer shown in full):",
		summaryRecall: "Use the recall tool with a step number to fetch back any of their observations in full.",
		vars:          "Working memory (vars):",
	}
}

// elideMin is the shortest observation (in runes) that compaction elides:
// shorter ones cost less than the elision line and stay.
const elideMin = 160

// headLen is how many runes of an elided observation the elision line keeps.
const headLen = 60

// promptTool is one tool as the system template sees it.
type promptTool struct {
	// Name is the tool name the model must write.
	Name string
	// Description says what the tool does.
	Description string
	// Schema is the tool's input JSON schema as compact JSON.
	Schema string
}

// elision is the line that replaces an old observation in the prompt.
func elision(step int, obs string, lb labels) string {
	head := textutil.Clip(textutil.OneLine(obs), headLen)
	return fmt.Sprintf(lb.elided, step, humanize.Comma(int64(utf8.RuneCountInString(obs))), head)
}

// elidable reports whether compaction replaces c's observation in old steps.
func (c *call) elidable() bool {
	return c.fromTool && utf8.RuneCountInString(c.obs) > elideMin
}

// old reports whether step index i (0-based) of n is outside the window of
// steps shown in full.
func (l *Loop) old(i, n int) bool {
	return l.s.keepSteps > 0 && i < n-l.s.keepSteps
}

// old reports whether step index i (0-based) of the run's steps is
// compacted in the chat-style prompt: outside the window with compaction
// "window", before the last block's end with "block".
func (r *run) old(i int) bool {
	if r.l.s.compaction == CompactionWindow {
		return r.l.old(i, len(r.steps))
	}
	return i < r.compacted
}

// size is about how many characters s takes in the prompt in full: its
// thought, text and format feedback, and each call's name, input and
// observation (labels and message framing not counted).
func (s *step) size() int {
	n := utf8.RuneCountInString(s.thought) + utf8.RuneCountInString(s.text) + utf8.RuneCountInString(s.feedback)
	for _, c := range s.calls {
		n += utf8.RuneCountInString(c.name) + utf8.RuneCountInString(c.input) + utf8.RuneCountInString(c.obs)
	}
	return n
}

// content is what the model is shown for c's result.
func (l *Loop) content(s *step, c *call, old, tagged bool) string {
	obs := c.obs
	if old && c.elidable() {
		obs = elision(s.n, c.obs, l.lb)
	}
	if tagged && c.fromTool {
		return "[" + c.toolName() + "] " + obs
	}
	return obs
}

// assistantText is the text-mode assistant message of an action step in
// canonical form, so the model sees its own steps well formed (and never an
// observation it invented).
func (l *Loop) assistantText(thought string, c *call) string {
	var b strings.Builder
	if thought != "" {
		b.WriteString(l.lb.thought + thought + "\n")
	}
	if l.s.format == FormatPaper {
		b.WriteString(l.lb.action + c.toolName() + "[" + c.input + "]")
	} else {
		b.WriteString(l.lb.action + c.toolName() + "\n" + l.lb.actionInput + c.input)
	}
	return b.String()
}

// messages renders the conversation for the next model call: the system
// prompt and the task (never dropped), then the steps, older ones compacted
// (run.old). With compaction "block" it extends the previous call's
// messages unchanged until compact moves the block's end.
func (r *run) messages() []llms.MessageContent {
	l := r.l
	msgs := append([]llms.MessageContent(nil), r.head...)
	for i, s := range r.steps {
		if i < r.summarized {
			continue // in the summary after the task
		}
		old := r.old(i)
		switch {
		case s.kind == stepInvalid:
			if old {
				continue
			}
			text := s.text
			if strings.TrimSpace(text) == "" {
				text = "(empty reply)"
			}
			feedback := s.feedback
			if l.s.mode == ModeText {
				feedback = l.lb.observation + feedback
			}
			msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeAI, text),
				llms.TextParts(llms.ChatMessageTypeHuman, feedback))
		case l.s.mode == ModeTools:
			ai := llms.MessageContent{Role: llms.ChatMessageTypeAI}
			// Tool calls come first: some adapters read only the first part.
			for _, c := range s.calls {
				ai.Parts = append(ai.Parts, llms.ToolCall{ID: c.id, Type: "function",
					FunctionCall: &llms.FunctionCall{Name: c.name, Arguments: c.args}})
			}
			if s.thought != "" {
				ai.Parts = append(ai.Parts, llms.TextContent{Text: s.thought})
			}
			msgs = append(msgs, ai)
			for k, c := range s.calls {
				content := l.content(s, c, old, false)
				if k == len(s.calls)-1 {
					content += r.stateNote(s)
				}
				msgs = append(msgs, llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{
					llms.ToolCallResponse{ToolCallID: c.id, Name: c.name, Content: content}}})
			}
		default:
			c := s.calls[0]
			msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeAI, l.assistantText(s.thought, c)),
				llms.TextParts(llms.ChatMessageTypeHuman, l.lb.observation+l.content(s, c, old, true)+r.stateNote(s)))
		}
	}
	return msgs
}

// finalText is the final answer of a run that gave one, in the text
// format: its thought and the answer line.
func (r *run) finalText() string {
	l := r.l
	if l.s.completion() && r.final != nil {
		return fmt.Sprintf("Thought %d: %s\nAction %d: %s", r.final.n, r.final.thought, r.final.n, r.final.action)
	}
	var b strings.Builder
	if e := r.out.Entries; len(e) > 0 && e[len(e)-1].Thought != "" && e[len(e)-1].Final != "" {
		b.WriteString(l.lb.thought + e[len(e)-1].Thought + "\n")
	}
	if l.s.format == FormatPaper {
		b.WriteString(l.lb.action + "Finish[" + r.out.Answer + "]")
	} else {
		b.WriteString(l.lb.final + r.out.Answer)
	}
	return b.String()
}

// transcript renders the steps as text, for the finalizer compacted like
// the prompt (compact); format errors are left out.
func (r *run) transcript(compact bool) string {
	l := r.l
	if l.s.completion() {
		if len(r.steps) == 0 {
			return l.lb.nothingYet
		}
		return strings.TrimRight(r.completionSteps(compact), "\n")
	}
	var b strings.Builder
	if compact && r.summarized > 0 {
		b.WriteString(r.summaryBlock() + "\n\n")
	}
	for i, s := range r.steps {
		if s.kind != stepAction || compact && i < r.summarized {
			continue
		}
		old := compact && r.old(i)
		for k, c := range s.calls {
			thought := s.thought
			if k > 0 {
				thought = ""
			}
			b.WriteString(l.assistantText(thought, c))
			b.WriteString("\n" + l.lb.observation + l.content(s, c, old, true) + "\n")
		}
		if note := r.stateNote(s); note != "" {
			b.WriteString(strings.TrimPrefix(note, "\n") + "\n")
		}
	}
	if b.Len() == 0 {
		return l.lb.nothingYet
	}
	return strings.TrimRight(b.String(), "\n")
}
