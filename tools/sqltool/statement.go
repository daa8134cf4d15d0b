package sqltool

import (
	"strings"

	"github.com/planner-engine/planner/tools"
)

// token is one lexical token of SQL text: a word (upper-cased), a ';', a
// quoted string or identifier (text "'"), or another character.
type token struct {
	text       string
	start, end int
}

// tokenize splits SQL text into tokens, skipping white space and comments.
// Quoted strings and identifiers ('...', "...", `...`, [...]) are single
// tokens, so that a ';' inside one does not end a statement.
func tokenize(s string) ([]token, error) {
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
				i += j + 1
			} else {
				i = len(s)
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			if j := strings.Index(s[i+2:], "*/"); j >= 0 {
				i += j + 4
			} else {
				i = len(s)
			}
		case c == '\'' || c == '"' || c == '`' || c == '[':
			closer := c
			if c == '[' {
				closer = ']'
			}
			j := i + 1
			for {
				k := strings.IndexByte(s[j:], closer)
				if k < 0 {
					return nil, tools.BadInput(ErrSQL, "unterminated %c...%c at offset %d", c, closer, i)
				}
				j += k + 1
				// A doubled quote stands for the quote itself.
				if closer != ']' && j < len(s) && s[j] == closer {
					j++
					continue
				}
				break
			}
			toks = append(toks, token{text: "'", start: i, end: j})
			i = j
		case isWordByte(c):
			j := i + 1
			for j < len(s) && (isWordByte(s[j]) || s[j] >= '0' && s[j] <= '9' || s[j] == '$') {
				j++
			}
			toks = append(toks, token{text: strings.ToUpper(s[i:j]), start: i, end: j})
			i = j
		default:
			toks = append(toks, token{text: s[i : i+1], start: i, end: i + 1})
			i++
		}
	}
	return toks, nil
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

// statement is one checked SQL statement.
type statement struct {
	// text is the statement without surrounding comments or the final
	// ';'.
	text string
	// kind is its first keyword, upper-cased ("SELECT", "INSERT", ...),
	// after EXPLAIN when the statement is explained.
	kind string
	// explain is true for EXPLAIN and EXPLAIN QUERY PLAN.
	explain bool
}

// parseStatement checks that input holds exactly one SQL statement and
// returns it. A ';' that ends the statement may be followed only by white
// space, comments and more ';'. Inside CREATE TRIGGER the statements of
// the body are part of it, up to the END that closes it. These checks give
// the model clear messages; what a statement may do is enforced by SQLite
// (see authorizer).
func parseStatement(input string) (statement, error) {
	s := strings.TrimSpace(input)
	if strings.IndexByte(s, 0) >= 0 {
		return statement{}, tools.BadInput(ErrSQL, "the SQL contains a NUL byte")
	}
	if len(s) > MaxStatementBytes {
		return statement{}, tools.BadInput(ErrSQL, "the SQL is %d bytes long; at most %d are allowed", len(s), MaxStatementBytes)
	}
	toks, err := tokenize(s)
	if err != nil {
		return statement{}, err
	}
	for len(toks) > 0 && toks[0].text == ";" {
		toks = toks[1:]
	}
	if len(toks) == 0 {
		return statement{}, tools.BadInput(ErrEmptyStatement, "give one SQL statement, such as SELECT * FROM some_table LIMIT 10")
	}
	trigger := isCreateTrigger(toks)
	end := len(toks)
	for i, t := range toks {
		if t.text == ";" && (!trigger || i > 0 && toks[i-1].text == "END") {
			end = i
			break
		}
	}
	for _, t := range toks[end:] {
		if t.text != ";" {
			return statement{}, tools.BadInput(ErrMultipleStatements, "the input holds more than one statement (the second begins %q); run one statement per call", clip(s[t.start:], 40))
		}
	}
	body := toks[:end]
	st := statement{text: s[body[0].start:body[len(body)-1].end]}
	words := body
	if words[0].text == "EXPLAIN" {
		st.explain = true
		words = words[1:]
		if len(words) >= 2 && words[0].text == "QUERY" && words[1].text == "PLAN" {
			words = words[2:]
		}
	}
	if len(words) > 0 {
		st.kind = words[0].text
	}
	if st.kind == "PRAGMA" && !st.explain {
		if err := checkPragma(words); err != nil {
			return statement{}, err
		}
	}
	return st, nil
}

// isCreateTrigger reports whether tokens begin CREATE [TEMP] TRIGGER.
func isCreateTrigger(toks []token) bool {
	if len(toks) < 2 || toks[0].text != "CREATE" {
		return false
	}
	i := 1
	if toks[i].text == "TEMP" || toks[i].text == "TEMPORARY" {
		i++
	}
	return i < len(toks) && toks[i].text == "TRIGGER"
}

// checkPragma refuses PRAGMA name = value and PRAGMA name(value) for
// pragmas whose argument is a setting. The authorizer refuses them too,
// except where the value is an empty string, which SQLite hands it as a
// NULL, that is as no value.
func checkPragma(words []token) error {
	i := 1
	if i+1 < len(words) && words[i+1].text == "." {
		i += 2 // schema.name
	}
	if i >= len(words) {
		return nil
	}
	name := strings.ToLower(words[i].text)
	if i+1 < len(words) && (words[i+1].text == "=" || words[i+1].text == "(") && !argumentPragma(name) {
		return tools.BadInput(ErrNotAllowed, "PRAGMA %s with a value changes a setting, which is not allowed; read-only pragmas such as PRAGMA table_info(name) are", name)
	}
	return nil
}

// clip cuts s to at most n bytes, on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
