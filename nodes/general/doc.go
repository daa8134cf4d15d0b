// Package general holds the general-purpose node kinds, which a pipeline
// composes into paradigms of its own: `llm` (a prompt template, one model
// call, the reply as text or as JSON validated against a JSON Schema
// written in the YAML, into the answer, a note or vars) and `tool` (one
// call of a named tool with a templated input, into a var).
//
// Both make their calls the way every node does (llm.Model.Call and
// nodekind.ToolCall), so the run's journal, budget, trace, streaming,
// approvals and audit log apply to them unchanged.
package general
