package serpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/planner-engine/planner/internal/textutil"
)

// Bounds on the parts of an observation.
const (
	// maxFacts bounds the knowledge graph's facts shown.
	maxFacts = 8
	// maxFactChars bounds one fact's value in characters.
	maxFactChars = 200
	// maxItems bounds the items of an answer box's list, table or
	// definitions, and the sports games shown.
	maxItems = 10
)

// response is the part of a SerpApi Google results page the tool reads.
// The parts are kept raw and decoded one by one, so a part whose shape is
// unexpected is skipped instead of failing the whole page.
type response struct {
	Error          string          `json:"error"`
	AnswerBox      json.RawMessage `json:"answer_box"`
	SportsResults  json.RawMessage `json:"sports_results"`
	KnowledgeGraph json.RawMessage `json:"knowledge_graph"`
	OrganicResults json.RawMessage `json:"organic_results"`
}

// answer renders the first part of the page that has something to say:
// the answer box, the sports results, the knowledge graph, then the first
// n organic results. It is "" when none has.
func (r response) answer(n int) string {
	for _, part := range []func() string{
		func() string { return answerBox(r.AnswerBox) },
		func() string { return sportsResults(r.SportsResults) },
		func() string { return knowledgeGraph(r.KnowledgeGraph) },
		func() string { return organicResults(r.OrganicResults, n) },
	} {
		if s := strings.TrimSpace(part()); s != "" {
			return s
		}
	}
	return ""
}

// object decodes raw as a JSON object, or returns nil.
func object(raw json.RawMessage) map[string]any {
	var m map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// text returns m[key] as one line of text when it is a string, a number
// or a boolean, and "" otherwise.
func text(m map[string]any, key string) string {
	return scalar(m[key])
}

// scalar renders a string, number or boolean as one line of text.
func scalar(v any) string {
	switch v := v.(type) {
	case string:
		return textutil.OneLine(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	}
	return ""
}

// scalars returns the scalar items of m[key] when it is an array.
func scalars(m map[string]any, key string) []string {
	items, _ := m[key].([]any)
	var out []string
	for _, it := range items {
		if s := scalar(it); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// lines collects the non-blank lines of an observation.
type lines []string

func (l *lines) add(format string, args ...any) {
	if s := strings.TrimSpace(fmt.Sprintf(format, args...)); s != "" {
		*l = append(*l, s)
	}
}

func (l lines) String() string { return strings.Join(l, "\n") }

// answerBox renders Google's answer box: its answer (or a calculator,
// converter or weather result), snippet, highlighted words (when there is
// no answer), list, table and dictionary definitions, then its source.
// It is "" when the box has none of these.
func answerBox(raw json.RawMessage) string {
	box := object(raw)
	if box == nil {
		return ""
	}
	var body lines
	answer := text(box, "answer")
	if answer == "" {
		answer = text(box, "result")
	}
	if answer == "" {
		if temp := text(box, "temperature"); temp != "" {
			answer = strings.TrimSpace(temp + " " + text(box, "unit"))
			if w := text(box, "weather"); w != "" {
				answer = w + ", " + answer
			}
			if loc := text(box, "location"); loc != "" {
				answer = fmt.Sprintf("%s in %s", answer, loc)
			}
			if date := text(box, "date"); date != "" {
				answer = fmt.Sprintf("%s (%s)", answer, date)
			}
		}
	}
	if answer != "" {
		body.add("Answer: %s", answer)
	}
	body.add("%s", text(box, "snippet"))
	if words := scalars(box, "snippet_highlighted_words"); answer == "" && len(words) > 0 {
		body.add("Highlighted: %s", strings.Join(words, "; "))
	}
	for i, item := range scalars(box, "list") {
		if i == maxItems {
			break
		}
		body.add("- %s", item)
	}
	if rows, ok := box["table"].([]any); ok {
		for i, row := range rows {
			if i == maxItems {
				break
			}
			cells, _ := row.([]any)
			var cs []string
			for _, c := range cells {
				cs = append(cs, scalar(c))
			}
			body.add("%s", strings.Join(cs, " | "))
		}
	}
	for i, def := range scalars(box, "definitions") {
		if i == maxItems {
			break
		}
		body.add("- %s", def)
	}
	if len(body) == 0 {
		return ""
	}
	if src := source(text(box, "title"), text(box, "link")); src != "" {
		body.add("Source: %s", src)
	}
	return "Google answer box:\n" + body.String()
}

// source renders a source's name and link.
func source(name, link string) string {
	switch {
	case name != "" && link != "":
		return name + " <" + link + ">"
	case link != "":
		return "<" + link + ">"
	}
	return name
}

// sportsResults renders the game in the spotlight, or else the first
// games, of Google's sports box. It is "" when there is neither.
func sportsResults(raw json.RawMessage) string {
	sports := object(raw)
	if sports == nil {
		return ""
	}
	var games lines
	if spot, ok := sports["game_spotlight"].(map[string]any); ok {
		games.add("%s", game(spot))
	}
	if len(games) == 0 {
		list, _ := sports["games"].([]any)
		for _, g := range list {
			if len(games) == maxItems {
				break
			}
			if m, ok := g.(map[string]any); ok {
				games.add("%s", game(m))
			}
		}
	}
	if len(games) == 0 {
		return ""
	}
	head := "Google sports results:"
	if title := text(sports, "title"); title != "" {
		head = "Google sports results: " + title
	}
	return head + "\n" + games.String()
}

// game renders one game: its teams with their scores, then the league,
// stage, date and status that are known.
func game(g map[string]any) string {
	teams, _ := g["teams"].([]any)
	var ts []string
	for _, t := range teams {
		m, ok := t.(map[string]any)
		if !ok {
			continue
		}
		name := text(m, "name")
		if score := text(m, "score"); score != "" {
			name = strings.TrimSpace(name + " " + score)
		}
		if name != "" {
			ts = append(ts, name)
		}
	}
	if len(ts) == 0 {
		return ""
	}
	var about []string
	for _, k := range []string{"league", "tournament", "stage", "date", "time", "status"} {
		if s := text(g, k); s != "" {
			about = append(about, s)
		}
	}
	out := strings.Join(ts, " vs ")
	if len(about) > 0 {
		out += " (" + strings.Join(about, ", ") + ")"
	}
	return out
}

// knowledgeGraph renders Google's knowledge panel: title and type, the
// description, up to maxFacts of the entity's facts (the string fields
// SerpApi lifts from the panel, such as born or headquarters, in the
// order it sends them), then the source. It is "" without a title, or
// without both a description and facts.
func knowledgeGraph(raw json.RawMessage) string {
	kg := object(raw)
	if kg == nil {
		return ""
	}
	title := text(kg, "title")
	desc := text(kg, "description")
	facts := kgFacts(raw)
	if title == "" || (desc == "" && len(facts) == 0) {
		return ""
	}
	var body lines
	head := title
	if typ := text(kg, "type"); typ != "" {
		head += " (" + typ + ")"
	}
	body.add("Google knowledge graph: %s", head)
	body.add("%s", desc)
	for _, f := range facts {
		body.add("%s", f)
	}
	if src, ok := kg["source"].(map[string]any); ok {
		if s := source(text(src, "name"), text(src, "link")); s != "" {
			body.add("Source: %s", s)
		}
	}
	return body.String()
}

// isFactKey reports whether a knowledge graph field may be a fact about
// the entity: not one shown otherwise (title, type, description, source),
// an identifier, a link or an image.
func isFactKey(key string) bool {
	switch key {
	case "", "title", "type", "description", "source", "kgmid", "entity_type", "thumbnail":
		return false
	}
	for _, suffix := range []string{"link", "links", "_id", "image", "images"} {
		if strings.HasSuffix(key, suffix) {
			return false
		}
	}
	return true
}

// kgFacts returns up to maxFacts "Label: value" lines for the string
// fields of the knowledge graph object raw, in their order, leaving out
// the fields isFactKey refuses and URLs (but for the website).
func kgFacts(raw json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var facts []string
	for dec.More() && len(facts) < maxFacts {
		tok, err := dec.Token()
		if err != nil {
			return facts
		}
		key, _ := tok.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return facts
		}
		s, ok := v.(string)
		if !ok || !isFactKey(key) {
			continue
		}
		isURL := strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
		if s = textutil.OneLine(s); s == "" || (isURL && key != "website") {
			continue
		}
		facts = append(facts, label(key)+": "+textutil.Clip(s, maxFactChars))
	}
	return facts
}

// label turns a field name such as "place_of_birth" into "Place of birth".
func label(key string) string {
	s := strings.ReplaceAll(key, "_", " ")
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// organicResults renders the first n organic results, numbered, each as
// its title, snippet and link. Results with neither title nor snippet
// are skipped.
func organicResults(raw json.RawMessage, n int) string {
	var items []json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &items) != nil {
		return ""
	}
	var blocks []string
	for _, it := range items {
		if len(blocks) == n {
			break
		}
		m := object(it)
		title, snippet, link := text(m, "title"), text(m, "snippet"), text(m, "link")
		if title == "" && snippet == "" {
			continue
		}
		var b lines
		b.add("[%d] %s", len(blocks)+1, title)
		b.add("%s", snippet)
		b.add("%s", link)
		blocks = append(blocks, b.String())
	}
	if len(blocks) == 0 {
		return ""
	}
	return "Google results:\n" + strings.Join(blocks, "\n\n")
}
