package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/internal/app"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/provider"
	"github.com/spf13/cobra"
)

// providerInfo is one real provider in `planner models` output.
type providerInfo struct {
	Provider  string `json:"provider"`
	Spec      string `json:"spec"`
	Label     string `json:"label"`
	StopWords bool   `json:"stop_words"`
	ToolCalls bool   `json:"tool_calls"`
	JSONMode  bool   `json:"json_mode"`
	Streaming bool   `json:"streaming"`
	Notes     string `json:"notes"`
}

// offlineInfo is one offline model in `planner models` output.
type offlineInfo struct {
	Provider string `json:"provider"`
	Spec     string `json:"spec"`
	Label    string `json:"label"`
	Notes    string `json:"notes"`
}

// modelsOutput is the `planner models --json` document.
type modelsOutput struct {
	Providers []providerInfo `json:"providers"`
	Offline   []offlineInfo  `json:"offline"`
}

// offlineKind describes the offline models of one kind for `planner
// models`: how --llm names one (spec, a format of the provider's name) and
// how it treats the call options the provider table covers.
type offlineKind struct {
	kind  llm.Kind
	spec  string
	notes string
}

// offlineKinds lists the kinds of models that need no network, in the
// order `planner models` shows them.
func offlineKinds() []offlineKind {
	return []offlineKind{
		{kind: llm.KindScripted, spec: "%[1]s:FILE or %[1]s",
			notes: "Replies come from a YAML script in order, each optionally matched on the calling node and a prompt " +
				"substring or regex; replies may be text or tool calls. Stop words cut a reply as an API would " +
				"(ignore_stop: true keeps the text, to test parsers). Replies are streamed in chunks. JSON mode " +
				"is not enforced: a reply is returned as written. No usage is reported, so tokens are estimated. " +
				"A call no reply matches fails at once, naming the script and the call. Scripts for the shipped " +
				"configs, each for one demo question: examples/scripts. Without a file (--llm scripted) it plays " +
				"each suite task's own \"replies\" (a JSONL suite's, such as a recorded run's raw outputs) in order, " +
				"from the first for every run of the task, ignoring the prompt; running out of replies fails the run, " +
				"naming the task. Use it with compare --suite FILE to check a set of recorded runs at once."},
		{kind: llm.KindSimulated, spec: "%s[:PROFILE]",
			notes: "SIMULATED oracle for suite tasks with a gold solution: plays the calling role in its real output " +
				"format and injects faults at seeded rates (profiles: " + strings.Join(sim.ProfileNames(), ", ") + "). Its numbers " +
				"measure the engine's recovery and cost structure, never a model's quality. It plays only tasks " +
				"of a suite with a gold solution: compare --suite SUITE, or run --suite SUITE --task ID (or a demo " +
				"question word for word); run refuses anything else before calling it."},
		{kind: llm.KindReplayed, spec: "%s:FILE",
			notes: "Plays back a cassette written by planner run --record, offline and through the same retry " +
				"middleware, so recorded failed attempts are retried as they were. A request that differs from " +
				"every unused recording fails with a diff. Supports whatever the recorded provider did; a " +
				"streaming caller gets the reply as one chunk."},
	}
}

func newModelsCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "models [--json]",
		Short: "List the model providers, what each supports, and the offline models",
		Long: `List the providers --llm and the YAML llm block accept. For each real provider the table says
whether the langchaingo adapter really sends stop words, returns tool calls, honours JSON mode
and streams tokens; the notes give its quirks. Then the offline models (scripted, sim, replay)
with the label their outputs carry.`,
		Example: `  planner models
  planner models --json`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error {
			a, err := app.New()
			if err != nil {
				return err
			}
			doc, err := listModels(a)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(c.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(doc)
			}
			return writeModels(c.OutOrStdout(), doc)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func listModels(a *app.App) (modelsOutput, error) {
	var doc modelsOutput
	for _, name := range provider.Providers() {
		caps, err := provider.CapabilitiesOf(name)
		if err != nil {
			return doc, err
		}
		doc.Providers = append(doc.Providers, providerInfo{Provider: name, Spec: name + ":MODEL", Label: a.ModelLabel(name),
			StopWords: caps.StopWords, ToolCalls: caps.ToolCalls, JSONMode: caps.JSONMode, Streaming: caps.Streaming, Notes: caps.Notes})
	}
	for _, k := range offlineKinds() {
		for _, name := range a.Models.Providers() {
			if a.ModelKind(name) == k.kind {
				doc.Offline = append(doc.Offline, offlineInfo{Provider: name, Spec: fmt.Sprintf(k.spec, name),
					Label: a.ModelLabel(name), Notes: k.notes})
			}
		}
	}
	return doc, nil
}

func writeModels(w io.Writer, doc modelsOutput) error {
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tSTOP WORDS\tTOOL CALLS\tJSON MODE\tSTREAMING\t--llm")
	for _, p := range doc.Providers {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.Provider, yes(p.StopWords), yes(p.ToolCalls), yes(p.JSONMode), yes(p.Streaming), p.Spec)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nNotes (langchaingo v0.1.14 adapters):")
	for _, p := range doc.Providers {
		fmt.Fprintf(w, "  %s:\n%s", p.Provider, wrapText(p.Notes, "    ", 96))
	}
	fmt.Fprintln(w, "\nOffline models (no network):")
	for _, m := range doc.Offline {
		fmt.Fprintf(w, "  %s (--llm %s)\n    label: %s\n%s", m.Provider, m.Spec, m.Label, wrapText(m.Notes, "    ", 96))
	}
	return nil
}

// wrapText breaks text into lines of at most width columns (longer words
// stay whole), each starting with indent and ending in a newline.
func wrapText(text, indent string, width int) string {
	var b, line strings.Builder
	for _, word := range strings.Fields(text) {
		if line.Len() > 0 && len(indent)+line.Len()+1+len(word) > width {
			b.WriteString(indent + line.String() + "\n")
			line.Reset()
		}
		if line.Len() > 0 {
			line.WriteByte(' ')
		}
		line.WriteString(word)
	}
	if line.Len() > 0 {
		b.WriteString(indent + line.String() + "\n")
	}
	return b.String()
}
