package executor

import (
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/nodekind"
)

// Modes of the loop (ReActConfig.Mode).
const (
	// ModeText asks for Thought / Action / Action Input text and parses it.
	ModeText = "text"
	// ModeTools uses the provider's native tool calling (llms.WithTools).
	ModeTools = "tools"
)

// Prompt languages (ReActConfig.Language).
const (
	// LanguageEnglish selects the English prompts and labels.
	LanguageEnglish = "en"
	// LanguageChinese selects the Chinese prompts and labels (思考/行动/行动输入/最终答案/观察).
	LanguageChinese = "zh"
)

// Text-mode output formats (ReActConfig.Format).
const (
	// FormatReAct is "Thought: / Action: / Action Input: / Final Answer:".
	FormatReAct = "react"
	// FormatPaper is the ReAct paper's "Action: Tool[input]" and "Finish[answer]".
	FormatPaper = "react-paper"
)

// Prompt styles (ReActConfig.Style).
const (
	// StyleChat is the chat conversation: a system message, the task, and
	// one assistant message and one observation message per step.
	StyleChat = "chat"
	// StyleCompletion is the ReAct paper's harness: one prompt that grows
	// by numbered steps ("Thought 3:", "Action 3:", "Observation 3:"),
	// which the model continues; see the package documentation.
	StyleCompletion = "completion"
)

// Built-in few-shot examples that ReActConfig.ExamplesFallback names. They
// are written in the ReAct paper's format over the demo corpus (the
// docstore's wikienv observations of `source: demo`); they are not the
// paper's own examples.
const (
	// ExamplesDemoQA are question-answering trajectories (Question:,
	// Search, Lookup, Finish[answer]), in the layout of the paper's
	// HotpotQA prompt.
	ExamplesDemoQA = "demo-qa"
	// ExamplesDemoFEVER are fact-checking trajectories (Claim:, Search,
	// Lookup, Finish[SUPPORTS|REFUTES|NOT ENOUGH INFO]) with their own
	// first instruction line, in the layout of the paper's FEVER prompt.
	ExamplesDemoFEVER = "demo-fever"
)

// Compaction modes (ReActConfig.Compaction).
const (
	// CompactionBlock keeps the prompt append-only between compactions:
	// nothing shown is rewritten until the steps shown in full pass
	// CompactionBudget, then every step but the last KeepSteps is
	// compacted at once. Provider prompt caches, which hit only on an
	// exact prefix of an earlier prompt, then hit on every call but the
	// ones that compact.
	CompactionBlock = "block"
	// CompactionWindow shows the last KeepSteps steps in full and
	// compacts the step that leaves that window on every call, which
	// rewrites the prompt's middle each time.
	CompactionWindow = "window"
	// CompactionSummarize compacts in blocks as CompactionBlock does, but
	// replaces each compacted block of steps with a summary the model
	// writes (one call, role "summarize", journaled like any model call),
	// shown after the task; the prompt stays append-only between
	// compactions. The run's full observations stay reachable through
	// the recall tool (ReActConfig.Recall). A summary call that fails or
	// comes back empty falls back to eliding the block, as "block" does.
	CompactionSummarize = "summarize"
)

// Unlimited is the value of ObservationLimit that lifts the limit.
const Unlimited = -1

// Defaults of ReActConfig.
const (
	DefaultMaxIterations    = 8
	DefaultMaxParseFailures = 3
	DefaultMaxRepeats       = 2
	DefaultObservationLimit = 2000
	DefaultKeepSteps        = 3
	// DefaultCompactionBudget is CompactionBudget's default, in
	// characters: with KeepSteps 3 and 1,500-character observations, a
	// block of three steps is compacted every third step.
	DefaultCompactionBudget = 9000
	// DefaultSummaryMaxTokens caps the completion of a summary call
	// (compaction "summarize").
	DefaultSummaryMaxTokens = 512
)

// ReActConfig configures a ReAct loop. It is also the settings block of the
// `react` node, so every field has a YAML key. The zero value is valid and
// means every default.
//
// Templates are Go text/template text compiled by nodekind.Env.Template and
// rendered with nodekind.PromptData; the loop's values are under .Extra, as
// Templates declares them:
//
//   - system: .Extra.Tools (each with .Name, .Description and .Schema, the
//     input JSON schema as compact JSON), .Extra.ToolNames (comma-separated),
//     .Extra.Examples, .Extra.Format, .Extra.Mode; in text mode a custom
//     system template that uses neither .Extra.Tools nor .Extra.ToolNames
//     gets the tool list appended;
//   - prompt (the first user message): .Extra.Task, .Extra.Context and
//     .Extra.Lessons (the reflections, a []string);
//   - finalize_prompt: .Extra.Task, .Extra.Context, .Extra.Lessons,
//     .Extra.Scratchpad (the steps so far as text) and .Extra.Why (why the
//     loop stopped).
//
// .Question, .Reflections and .Notes refer to the run state as in every
// other nodekind.
type ReActConfig struct {
	// Style is "chat" (a system message and one message per step) or
	// "completion" (the ReAct paper's harness: one prompt of numbered
	// steps that the model continues, sent as one user message; it needs
	// mode text, format react-paper and language en). Default "chat".
	Style string `mapstructure:"style"`
	// Mode is "text" (Thought/Action text parsed by executor/parse, with stop
	// words) or "tools" (native tool calling through llms.WithTools; a reply
	// without tool calls is the final answer). Default "text".
	Mode string `mapstructure:"mode"`
	// Language selects the embedded prompt variant and labels: "en" or "zh".
	// Default "en".
	Language string `mapstructure:"language"`
	// Format is the text-mode output format: "react" (Thought / Action /
	// Action Input / Final Answer) or "react-paper" (Action: Tool[input],
	// Finish[answer]). It selects the prompt and examples; in chat style
	// replies in either form are accepted. In react-paper the text inside
	// Tool[...] goes to the tool as written, trimmed only (quotes stay, no
	// JSON unwrapping), as the paper's harness passed it. Ignored in tools
	// mode. Default "react", and "react-paper" in completion style.
	Format string `mapstructure:"format"`
	// Tools names the subset of the pipeline's tools the loop may use
	// (tolerant names). Default: all of them.
	Tools []string `mapstructure:"tools"`
	// MaxIterations bounds the model turns of one run (retries of empty
	// replies and the finalizer call are not counted); in completion style
	// it is the step budget (the action-only second call of a step is not
	// counted). Default 8.
	MaxIterations int `mapstructure:"max_iterations"`
	// MaxParseFailures is how many consecutive unparseable replies are
	// answered with format feedback before the run stops with failure
	// "parse". Not used in completion style, where a reply without an
	// action gets the action-only call and an unusable action the
	// observation "Invalid action: ...". Default 3.
	MaxParseFailures int `mapstructure:"max_parse_failures"`
	// MaxRepeats is how many times an identical (tool, input) call may
	// return the same observation again: each such repeat gets a warning
	// appended to its observation, and one more stops the run with failure
	// "loop". A repeated call whose observation changed (paging) is not a
	// repeat. Not used in completion style: the paper's harness had no
	// such guard, and the environment answers a repeated call as it
	// will. Default 2.
	MaxRepeats int `mapstructure:"max_repeats"`
	// MaxEmptyRetries is how many times in a row an empty reply is retried
	// (by llm.Model.Call: the same prompt with a nudge appended, guard
	// "empty_reply") before it is treated as a format error. Set, it
	// replaces the llm block's empty_retries for the loop's turns; the finalizer's
	// call keeps the llm block's. Not used in completion style (an empty
	// reply gets the action-only call, and is not retried). 0 turns the
	// retries off for the loop. Unset, the loop's turns use the llm
	// block's empty_retries (default 2; a llm.Model built by hand has
	// none).
	MaxEmptyRetries *int `mapstructure:"max_empty_retries"`
	// ObservationLimit caps an observation, in characters (runes); longer
	// ones are cut and end with "…[truncated N chars]". -1 means no limit;
	// 0 means the default. Default 2000.
	ObservationLimit int `mapstructure:"observation_limit"`
	// KeepSteps is how many recent steps the prompt shows in full; long
	// observations of older steps are replaced by a one-line elision and
	// older format errors are dropped. The system prompt, the task and the
	// tool list are never dropped. Unset means 3; 0 keeps every step (the
	// paper's harness kept every step).
	KeepSteps *int `mapstructure:"keep_steps"`
	// Compaction is how older steps leave the prompt once keep_steps is
	// not 0: "block" keeps the prompt an append-only extension of the
	// previous call's (what provider prompt caches need) until the steps
	// shown in full pass CompactionBudget, then compacts all but the
	// last KeepSteps steps at once; "window" compacts the step that
	// leaves the last KeepSteps on every call. Compacting elides long
	// observations and drops format errors as KeepSteps says. Completion
	// style always uses "window" (its prompt is the paper's harness's).
	// "summarize" compacts in blocks like "block" but has the model
	// summarize each block (see CompactionSummarize). Default "block" in
	// chat style.
	Compaction string `mapstructure:"compaction"`
	// CompactionBudget is, with compaction "block", how large the steps
	// shown in full may grow, in characters (runes) of their thoughts,
	// actions, observations and format feedback, before a block of them
	// is compacted. When the last KeepSteps steps alone pass it, every
	// step compacts the one before them, as "window" does. 0 means the
	// default. Default 9000.
	CompactionBudget int `mapstructure:"compaction_budget"`
	// SummarizePrompt replaces the embedded template of the summary call
	// (compaction "summarize"). Its .Extra values: .Extra.Task,
	// .Extra.Summary (the previous summary, or empty) and .Extra.Steps
	// (the steps to summarize as text, observations in full).
	SummarizePrompt string `mapstructure:"summarize_prompt"`
	// SummarizePromptFile reads the summary template from a file.
	SummarizePromptFile string `mapstructure:"summarize_prompt_file"`
	// SummaryMaxTokens caps each summary's completion, in tokens. 0 means
	// the default. Default 512.
	SummaryMaxTokens int `mapstructure:"summary_max_tokens"`
	// Recall adds the tool "recall" to the loop: it fetches back, by step
	// number or by words to search for, the full output of any earlier
	// tool call of the run, however the prompt compacted it. A pipeline
	// tool of that name is then a setting error. Default true with
	// compaction "summarize", false otherwise.
	Recall *bool `mapstructure:"recall"`
	// ShowVars shows the run's working memory (state.State.Vars, which
	// the vars tool, `output: var:NAME` and plan steps set) to the model:
	// the whole state block ("name = value" lines, values cut to 200
	// characters) in the task message when vars are set as the run
	// begins, and again after the observation of each step that changed
	// them; earlier blocks stay as they were, so the prompt stays
	// append-only. Default true for a `react` node; false for the ReAct
	// steps of `execute` and `lats`, whose prompts carry the plan's
	// results as context and whose concurrent sibling runs change the
	// vars while they run.
	ShowVars *bool `mapstructure:"show_vars"`
	// PromptSources are the system, system_file, prompt and prompt_file
	// keys: system replaces the embedded system prompt template, prompt
	// the embedded template of the first user message. In completion
	// style the prompt's text begins with the system template's output,
	// rendered as written (nothing trimmed; the instruction and the
	// examples), followed by the prompt template's (the question line,
	// default "Question: {{.Extra.Task}}"; trailing line breaks dropped)
	// and one line break.
	nodekind.PromptSources `mapstructure:",squash"`
	// Examples replaces the embedded few-shot examples (plain text shown in
	// the system prompt). Default: examples for the language and format in
	// text mode, none in tools mode.
	Examples string `mapstructure:"examples"`
	// ExamplesFile reads the few-shot examples from a file, relative to
	// the pipeline's folder: the whole file, or with ExamplesKey the
	// string under that key of a JSON object file (the ReAct paper's
	// prompts_naive.json and fever.json). In completion style the text is
	// used exactly as read. Default: none.
	ExamplesFile string `mapstructure:"examples_file"`
	// ExamplesKey selects the string under this key of a JSON object
	// ExamplesFile, such as "webthink_simple6" in the paper's
	// prompts_naive.json. Default: none (the whole file is the examples).
	ExamplesKey string `mapstructure:"examples_key"`
	// ExamplesFallback names built-in examples used when ExamplesFile does
	// not exist: "demo-qa" or "demo-fever" (the ReAct paper's format over
	// the demo corpus, written for this engine; not the paper's examples).
	// Each run then emits a guard event "examples_fallback" that says so
	// and where to get the paper's files. Default: none, and a missing
	// file is an error.
	ExamplesFallback string `mapstructure:"examples_fallback"`
	// FinalizePrompt replaces the embedded template of the finalizer call.
	FinalizePrompt string `mapstructure:"finalize_prompt"`
	// FinalizePromptFile reads the finalizer template from a file.
	FinalizePromptFile string `mapstructure:"finalize_prompt_file"`
	// Temperature overrides the model's sampling temperature. Default: the
	// model's.
	Temperature *float64 `mapstructure:"temperature"`
	// MaxTokens caps each completion, in tokens; 0 uses the model default.
	MaxTokens int `mapstructure:"max_tokens"`
	// Finalize makes the loop, when it stops without a final answer (budget,
	// parse or loop failure), call the model once more (role "finalize")
	// to answer from the work so far. The answer is still marked
	// incomplete. Off, the answer is empty, as the paper's harness gave
	// (it called finish[] when the steps ran out). Default true.
	Finalize *bool `mapstructure:"finalize"`
	// ToolRetrieval (key tool_retrieval) makes each model call show only
	// the tools relevant to the task and the latest thought when the loop
	// has more than max_tools (default 12) tools; see ToolRetrieval for
	// its keys (max_tools, max_shown, method, always, first_call, sticky,
	// disabled, search_tool, search_tool_name, search_results) and their
	// defaults. Below the threshold nothing changes. No call shows more
	// than max_shown (default DefaultMaxShown, 128) tools: above that many,
	// retrieval is on even when disabled, and a trace guard event
	// "tool_cap" says so and how to show more.
	ToolRetrieval ToolRetrieval `mapstructure:"tool_retrieval"`
}

// settings is a ReActConfig with defaults applied and values checked.
type settings struct {
	style, mode, language, format string
	maxIter, maxParse, maxRepeats int
	// maxEmpty is max_empty_retries, or -1 for the model's own.
	maxEmpty, keepSteps int
	// compaction is CompactionBlock or CompactionWindow; budget is the
	// block budget in runes.
	compaction string
	budget     int
	// obsLimit is the observation limit; 0 is none.
	obsLimit int
	finalize bool
	// summaryTokens caps a summary call; recall adds the recall tool.
	summaryTokens int
	recall        bool
	// retrieval is tool_retrieval with its defaults.
	retrieval retrievalSettings
	// showVars shows the state block (ShowVars; never in completion
	// style, the paper's harness).
	showVars bool
}

// completion reports whether the loop runs in completion style.
func (s settings) completion() bool { return s.style == StyleCompletion }

// verbatim reports whether tool inputs go to the tools as written
// (format react-paper).
func (s settings) verbatim() bool { return s.mode == ModeText && s.format == FormatPaper }

// resolve applies the defaults and validates c. Errors are
// *config.SettingError naming the key.
func (c ReActConfig) resolve() (settings, error) {
	s := settings{
		style: c.Style, mode: c.Mode, language: c.Language, format: c.Format,
		maxIter: c.MaxIterations, maxParse: c.MaxParseFailures, maxRepeats: c.MaxRepeats,
		maxEmpty: -1, obsLimit: c.ObservationLimit, keepSteps: DefaultKeepSteps,
		compaction: c.Compaction, budget: c.CompactionBudget,
		finalize:      c.Finalize == nil || *c.Finalize,
		summaryTokens: c.SummaryMaxTokens,
		showVars:      (c.ShowVars == nil || *c.ShowVars) && c.Style != StyleCompletion,
	}
	if s.style == StyleCompletion && s.format == "" {
		s.format = FormatPaper
	}
	choices := []struct {
		key string
		v   *string
		// def is the default; alt the one other value.
		def, alt string
	}{
		{"style", &s.style, StyleChat, StyleCompletion},
		{"mode", &s.mode, ModeText, ModeTools},
		{"language", &s.language, LanguageEnglish, LanguageChinese},
		{"format", &s.format, FormatReAct, FormatPaper},
	}
	for _, f := range choices {
		switch *f.v {
		case "":
			*f.v = f.def
		case f.def, f.alt:
		default:
			return s, config.SettingErrorf(f.key, "want %q or %q, got %q", f.def, f.alt, *f.v)
		}
	}
	if s.completion() {
		for _, f := range []struct{ key, got, want string }{
			{"mode", s.mode, ModeText}, {"format", s.format, FormatPaper}, {"language", s.language, LanguageEnglish},
		} {
			if f.got != f.want {
				return s, config.SettingErrorf(f.key, "style %q needs %s %q (the ReAct paper's numbered English steps), got %q", StyleCompletion, f.key, f.want, f.got)
			}
		}
	}
	switch s.compaction {
	case "":
		s.compaction = CompactionBlock
		if s.completion() {
			s.compaction = CompactionWindow
		}
	case CompactionWindow:
	case CompactionBlock, CompactionSummarize:
		if s.completion() {
			return s, config.SettingErrorf("compaction", "style %q compacts as %q (the paper's harness), got %q", StyleCompletion, CompactionWindow, s.compaction)
		}
	default:
		return s, config.SettingErrorf("compaction", "want %q, %q or %q, got %q", CompactionBlock, CompactionWindow, CompactionSummarize, s.compaction)
	}
	s.recall = s.compaction == CompactionSummarize
	if c.Recall != nil {
		s.recall = *c.Recall
	}
	ints := []struct {
		key string
		v   *int
		def int
		// unlimited allows -1.
		unlimited bool
	}{
		{"max_iterations", &s.maxIter, DefaultMaxIterations, false},
		{"max_parse_failures", &s.maxParse, DefaultMaxParseFailures, false},
		{"max_repeats", &s.maxRepeats, DefaultMaxRepeats, false},
		{"observation_limit", &s.obsLimit, DefaultObservationLimit, true},
		{"compaction_budget", &s.budget, DefaultCompactionBudget, false},
		{"summary_max_tokens", &s.summaryTokens, DefaultSummaryMaxTokens, false},
	}
	for _, f := range ints {
		switch {
		case f.unlimited && *f.v < Unlimited:
			return s, config.SettingErrorf(f.key, "must be -1 (no limit) or more, got %d", *f.v)
		case !f.unlimited && *f.v < 0:
			return s, config.SettingErrorf(f.key, "must not be negative, got %d", *f.v)
		case *f.v == 0:
			*f.v = f.def
		}
	}
	if s.obsLimit == Unlimited {
		s.obsLimit = 0
	}
	if c.MaxEmptyRetries != nil {
		if *c.MaxEmptyRetries < 0 {
			return s, config.SettingErrorf("max_empty_retries", "must not be negative (0 turns the retries off), got %d", *c.MaxEmptyRetries)
		}
		s.maxEmpty = *c.MaxEmptyRetries
	}
	if c.KeepSteps != nil {
		if *c.KeepSteps < 0 {
			return s, config.SettingErrorf("keep_steps", "must not be negative (0 keeps every step), got %d", *c.KeepSteps)
		}
		s.keepSteps = *c.KeepSteps
	}
	if c.MaxTokens < 0 {
		return s, config.SettingErrorf("max_tokens", "must not be negative, got %d", c.MaxTokens)
	}
	var err error
	if s.retrieval, err = c.ToolRetrieval.resolve(); err != nil {
		return s, err
	}
	return s, nil
}
