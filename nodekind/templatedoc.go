package nodekind

import (
	"fmt"
	"slices"
	"strings"
)

// TemplateDocs renders, as Markdown, the fields every prompt template sees
// (StateFields) and a table of each kind's template settings with their
// .Extra fields, required ones marked. The README's "Prompt templates"
// section holds its output, and a test keeps the two equal.
func TemplateDocs(kinds []Kind) string {
	var b strings.Builder
	b.WriteString("Every template sees the run state:\n\n")
	for _, f := range StateFields() {
		fmt.Fprintf(&b, "- `.%s`: %s\n", f.Name, f.Doc)
	}
	b.WriteString("\nand the values of its node under `.Extra`:\n\n")
	b.WriteString("| type | setting | `.Extra` fields |\n|---|---|---|\n")
	for _, k := range kinds {
		for _, s := range k.Templates {
			cell := extraCell(s)
			if same := sameAs(kinds, s); same != "" {
				cell = same
			}
			fmt.Fprintf(&b, "| `%s` | `%s` | %s |\n", k.Name, s.Key, cell)
		}
	}
	return b.String()
}

// sameAs names, for a nested spec ("react.system"), the kind whose own
// spec it repeats ("as for `react`"), or returns "".
func sameAs(kinds []Kind, s TemplateSpec) string {
	_, inner, nested := strings.Cut(s.Key, ".")
	if !nested {
		return ""
	}
	for _, k := range kinds {
		for _, o := range k.Templates {
			if o.Key == inner && extraCell(o) == extraCell(s) {
				return fmt.Sprintf("as for `%s`'s `%s`", k.Name, inner)
			}
		}
	}
	return ""
}

func extraCell(s TemplateSpec) string {
	if len(s.Extra) == 0 {
		return "none"
	}
	parts := make([]string, len(s.Extra))
	for i, f := range s.Extra {
		p := fmt.Sprintf("`.Extra.%s`: %s", f.Name, f.Doc)
		for _, r := range s.Required {
			if !slices.Contains(r.Fields, f.Name) {
				continue
			}
			note := "**required**"
			if others := slices.DeleteFunc(slices.Clone(r.Fields), func(n string) bool { return n == f.Name }); len(others) > 0 {
				note += " (this or `.Extra." + strings.Join(others, "`, `.Extra.") + "`)"
			}
			if r.When != "" {
				note += " " + r.When
			}
			p += "; " + note
		}
		parts[i] = p
	}
	return strings.Join(parts, "<br>")
}
