package code

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Names of the hidden built-ins that a rewritten program calls, and of
// the global that receives the value of its last expression. A '$' cannot
// appear in Starlark source, so a program can neither call nor shadow
// them.
const (
	hiddenPrefix = "$"
	opAdd        = "$add"
	opMul        = "$mul"
	opMod        = "$mod"
	opLsh        = "$lsh"
	opOr         = "$or"
	opIAdd       = "$iadd"
	opMethod     = "$method"
	opSpread     = "$spread"
	resultVar    = "$result"
)

// guardedMethods reports whether a call of a method of this name is
// routed through the $method guard: the string, list, set and dict
// methods whose result can be much larger than their operands, or that
// make a collection of as many elements as their receiver has bytes
// (split) or entries (items).
func guardedMethods(name string) bool {
	switch name {
	case "replace", "join", "format", "extend", "update", "union", "intersection",
		"difference", "symmetric_difference", "issubset", "issuperset",
		"split", "rsplit", "splitlines", "upper", "lower", "title", "capitalize",
		"keys", "values", "items":
		return true
	}
	return false
}

// guards holds the size limits that the hidden built-ins enforce.
type guards struct{ cfg Config }

// maxBytes returns the cap on one string or bytes value.
func (g *guards) maxBytes() int { return g.cfg.MaxValueSize }

// checkBytes fails when a string of n bytes (what describes it) is too
// large.
func (g *guards) checkBytes(n int64, what string) error {
	if n > int64(g.maxBytes()) {
		return tooLarge("%s would be %s bytes long, over the limit of %s (the code tool's max_value_size); work on smaller pieces", what, withCommas(uint64(n)), byteSize(int64(g.maxBytes())))
	}
	return nil
}

// checkElems fails when a collection of n elements is too large.
func (g *guards) checkElems(n int64, what string) error {
	if n > int64(g.cfg.maxElems()) {
		return tooLarge("%s would have %s elements, over the limit of %s elements (the code tool's max_value_size / 16); work on smaller pieces", what, withCommas(uint64(n)), withCommas(uint64(g.cfg.maxElems())))
	}
	return nil
}

// checkBits fails when an integer of n bits is too large.
func checkBits(n int64, what string) error {
	if n > MaxIntBits {
		return tooLarge("%s would have about %s decimal digits, over the limit of %s", what, withCommas(uint64(n*30103/100000)), withCommas(MaxIntBits*30103/100000))
	}
	return nil
}

// binary returns the hidden built-in for a binary operator: it checks the
// size of the result, then applies the operator as the interpreter would.
func (g *guards) binary(name string, op syntax.Token) *starlark.Builtin {
	return starlark.NewBuiltin(name, func(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
		if len(args) != 2 {
			return nil, fmt.Errorf("%s: internal error: want 2 operands, got %d", name, len(args))
		}
		refund(thread, 1)
		v, err := g.apply(op, args[0], args[1])
		if err == nil {
			noteAlloc(thread, v)
		}
		return v, err
	})
}

// refund gives back the steps that calling a hidden built-in costs more
// than the operation it replaces (loading the built-in, and for a method
// its name), so a rewritten program spends the steps the original would.
func refund(thread *starlark.Thread, n uint64) {
	thread.Steps -= min(n, thread.Steps)
}

// apply checks the size of x op y, then computes it: a string template
// with Python's widths and precisions (which Starlark lacks) by printf,
// anything else as the interpreter does.
func (g *guards) apply(op syntax.Token, x, y starlark.Value) (starlark.Value, error) {
	if err := g.checkBinary(op, x, y); err != nil {
		return nil, err
	}
	if t, ok := x.(starlark.String); ok && op == syntax.PERCENT && hasPrintfSpec(string(t)) {
		s, err := formatter{max: g.maxBytes()}.printf(string(t), y)
		if err != nil {
			return nil, err
		}
		return starlark.String(s), nil
	}
	return starlark.Binary(op, x, y)
}

// checkBinary fails when x op y would be too large.
func (g *guards) checkBinary(op syntax.Token, x, y starlark.Value) error {
	switch op {
	case syntax.PLUS:
		switch x := x.(type) {
		case starlark.String:
			if y, ok := y.(starlark.String); ok {
				return g.checkBytes(int64(len(x))+int64(len(y)), "the joined string")
			}
		case starlark.Bytes:
			if y, ok := y.(starlark.Bytes); ok {
				return g.checkBytes(int64(len(x))+int64(len(y)), "the joined bytes")
			}
		case *starlark.List:
			if y, ok := y.(*starlark.List); ok {
				return g.checkElems(int64(x.Len())+int64(y.Len()), "the joined list")
			}
		case starlark.Tuple:
			if y, ok := y.(starlark.Tuple); ok {
				return g.checkElems(int64(len(x))+int64(len(y)), "the joined tuple")
			}
		case starlark.Int:
			if y, ok := y.(starlark.Int); ok {
				return checkBits(int64(max(intBits(x), intBits(y)))+1, "the sum")
			}
		}
	case syntax.STAR:
		if xi, ok := x.(starlark.Int); ok {
			if yi, ok := y.(starlark.Int); ok {
				return checkBits(int64(intBits(xi))+int64(intBits(yi)), "the product")
			}
			return g.checkRepeat(y, xi)
		}
		if yi, ok := y.(starlark.Int); ok {
			return g.checkRepeat(x, yi)
		}
	case syntax.PERCENT:
		if f, ok := x.(starlark.String); ok {
			return g.checkFormat(string(f), '%', formatArgs(y))
		}
	case syntax.LTLT:
		if xi, ok := x.(starlark.Int); ok {
			if n, ok := y.(starlark.Int); ok {
				if k, ok := n.Int64(); ok && k > 0 {
					return checkBits(int64(intBits(xi))+k, "the shifted integer")
				}
			}
		}
	case syntax.PIPE:
		return g.checkUnion(x, y)
	}
	return nil
}

// checkUnion fails when the union x | y of two sets or two dicts would
// have too many elements. It counts the union exactly only when the
// operands' sizes together pass the limit.
func (g *guards) checkUnion(x, y starlark.Value) error {
	switch x := x.(type) {
	case *starlark.Set:
		if y, ok := y.(*starlark.Set); ok && x.Len()+y.Len() > g.cfg.maxElems() {
			n := x.Len()
			for v := range starlark.Elements(y) {
				if found, _ := x.Has(v); !found {
					n++
				}
			}
			return g.checkElems(int64(n), "the union")
		}
	case *starlark.Dict:
		if y, ok := y.(*starlark.Dict); ok && x.Len()+y.Len() > g.cfg.maxElems() {
			n := x.Len()
			for k := range starlark.Elements(y) {
				if _, found, _ := x.Get(k); !found {
					n++
				}
			}
			return g.checkElems(int64(n), "the union")
		}
	}
	return nil
}

// checkRepeat fails when seq * n would be too large.
func (g *guards) checkRepeat(seq starlark.Value, n starlark.Int) error {
	k, ok := n.Int64()
	if !ok || k <= 0 {
		return nil // starlark reports a huge count itself
	}
	mul := func(size int) int64 {
		if size > 0 && k > (1<<62)/int64(size) {
			return 1 << 62
		}
		return int64(size) * k
	}
	switch s := seq.(type) {
	case starlark.String:
		return g.checkBytes(mul(len(s)), "the repeated string")
	case starlark.Bytes:
		return g.checkBytes(mul(len(s)), "the repeated bytes")
	case *starlark.List:
		return g.checkElems(mul(s.Len()), "the repeated list")
	case starlark.Tuple:
		return g.checkElems(mul(len(s)), "the repeated tuple")
	}
	return nil
}

// formatArgs returns the operands of a % formatting: the elements of a
// tuple, the values of a dict, or the value itself.
func formatArgs(y starlark.Value) []starlark.Value {
	switch y := y.(type) {
	case starlark.Tuple:
		return y
	case *starlark.Dict:
		var vs []starlark.Value
		for _, v := range y.Entries() {
			vs = append(vs, v)
		}
		return vs
	}
	return []starlark.Value{y}
}

// checkFormat fails when formatting f with args could make a string that
// is too large: it bounds the result by the template's length plus, for
// each conversion (each occurrence of mark), the longest operand.
func (g *guards) checkFormat(f string, mark byte, args []starlark.Value) error {
	convs := strings.Count(f, string(mark))
	if convs == 0 {
		return nil
	}
	limit := g.maxBytes()
	longest := 0
	for _, a := range args {
		n, deep := reprSize(a, limit)
		if deep {
			return tooLarge("a value to format is nested more than %d levels deep", maxNest)
		}
		longest = max(longest, n)
	}
	total := int64(len(f))
	if longest > 0 && int64(convs) > (1<<62)/int64(longest) {
		total = 1 << 62
	} else {
		total += int64(convs) * int64(longest)
	}
	return g.checkBytes(total, "the formatted string")
}

// iadd is the hidden built-in for x += y: a list grows in place, as the
// interpreter does it; anything else is x + y.
func (g *guards) iadd() *starlark.Builtin {
	return starlark.NewBuiltin(opIAdd, func(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
		if len(args) != 2 {
			return nil, fmt.Errorf("%s: internal error: want 2 operands, got %d", opIAdd, len(args))
		}
		refund(thread, 1)
		if l, ok := args[0].(*starlark.List); ok {
			if it, ok := args[1].(starlark.Iterable); ok {
				if err := g.extendList(l, it); err != nil {
					return nil, err
				}
				noteAlloc(thread, l)
				return l, nil
			}
		}
		v, err := g.apply(syntax.PLUS, args[0], args[1])
		if err == nil {
			noteAlloc(thread, v)
		}
		return v, err
	})
}

// extendList appends the elements of it to l, failing before l grows
// beyond the element limit.
func (g *guards) extendList(l *starlark.List, it starlark.Iterable) error {
	if n := starlark.Len(it); n >= 0 {
		if err := g.checkElems(int64(l.Len())+int64(n), "the list"); err != nil {
			return err
		}
	}
	var elems []starlark.Value
	for v := range starlark.Elements(it) {
		elems = append(elems, v)
		if err := g.checkElems(int64(l.Len()+len(elems)), "the list"); err != nil {
			return err
		}
	}
	for _, v := range elems {
		if err := l.Append(v); err != nil {
			return err
		}
	}
	return nil
}

// method is the hidden built-in $method(x, name) that a call x.name(...)
// of a guarded method name is rewritten to call first (see lookupMethod).
func (g *guards) method() *starlark.Builtin {
	return starlark.NewBuiltin(opMethod, func(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
		if len(args) != 2 {
			return nil, fmt.Errorf("%s: internal error: want 2 operands, got %d", opMethod, len(args))
		}
		refund(thread, 2)
		name, _ := starlark.AsString(args[1])
		return g.lookupMethod(args[0], name)
	})
}

// lookupMethod returns x's attribute name; a method that can make a large
// result comes wrapped so that a call checks the size of the result
// first (and, for str.format, follows Python's format specs).
func (g *guards) lookupMethod(x starlark.Value, name string) (starlark.Value, error) {
	ha, ok := x.(starlark.HasAttrs)
	if !ok {
		return nil, fmt.Errorf("%s has no .%s field or method", x.Type(), name)
	}
	v, err := ha.Attr(name)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, fmt.Errorf("%s has no .%s field or method", x.Type(), name)
	}
	m, ok := v.(*starlark.Builtin)
	if !ok || m.Receiver() == nil {
		return v, nil
	}
	check := g.methodCheck(x, name)
	if check == nil {
		return v, nil
	}
	return starlark.NewBuiltin(name, func(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		args, err := check(args, kwargs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		var v starlark.Value
		switch t, isStr := x.(starlark.String); {
		case isStr && name == "format" && hasFormatSpec(string(t)):
			s, err := formatter{max: g.maxBytes()}.format(string(t), args, kwargs)
			if err != nil {
				return nil, fmt.Errorf("format: %w", err)
			}
			v = starlark.String(s)
		case isStr && name == "rsplit" && rsplitsFew(args, kwargs):
			v, err = rsplitN(string(t), args)
		default:
			v, err = m.CallInternal(thread, args, kwargs)
		}
		if err == nil {
			noteAlloc(thread, v)
		}
		return v, err
	}).BindReceiver(x), nil
}

// methodCheck returns the size check of method name of x, or nil when it
// needs none. The check may return the arguments changed: an iterable of
// unknown length (s.codepoints()) comes back as a tuple of its elements,
// gathered up to the element limit, so that the method cannot consume an
// unbounded number of them in one step.
func (g *guards) methodCheck(x starlark.Value, name string) func(args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Tuple, error) {
	switch x := x.(type) {
	case starlark.String:
		switch name {
		case "replace":
			return func(args starlark.Tuple, _ []starlark.Tuple) (starlark.Tuple, error) {
				return args, g.checkReplace(string(x), args)
			}
		case "join":
			return func(args starlark.Tuple, _ []starlark.Tuple) (starlark.Tuple, error) {
				args, err := g.boundedArgs(args, 0)
				if err != nil {
					return nil, err
				}
				return args, g.checkJoin(string(x), args)
			}
		case "format":
			return func(args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Tuple, error) {
				vals := append([]starlark.Value(nil), args...)
				for _, kv := range kwargs {
					if len(kv) == 2 {
						vals = append(vals, kv[1])
					}
				}
				return args, g.checkFormat(string(x), '{', vals)
			}
		case "split", "rsplit", "splitlines":
			return func(args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Tuple, error) {
				return args, g.checkElems(pieces(string(x), name, args, kwargs), "the list of pieces")
			}
		case "upper", "lower", "title", "capitalize":
			return func(args starlark.Tuple, _ []starlark.Tuple) (starlark.Tuple, error) {
				return args, g.checkCase(string(x))
			}
		}
	case *starlark.List:
		if name == "extend" {
			return func(args starlark.Tuple, _ []starlark.Tuple) (starlark.Tuple, error) {
				args, err := g.boundedArgs(args, 0)
				if err != nil {
					return nil, err
				}
				if len(args) == 1 {
					if n := starlark.Len(args[0]); n >= 0 {
						return args, g.checkElems(int64(x.Len())+int64(n), "the list")
					}
				}
				return args, nil
			}
		}
	case *starlark.Dict:
		switch name {
		case "keys", "values", "items":
			return func(args starlark.Tuple, _ []starlark.Tuple) (starlark.Tuple, error) {
				return args, g.checkElems(int64(x.Len()), "the list of the dict's "+name)
			}
		case "update":
			return func(args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Tuple, error) {
				args, err := g.boundedArgs(args, 0)
				if err != nil {
					return nil, err
				}
				return args, g.checkGrowth(x.Len(), args, len(kwargs))
			}
		}
	case *starlark.Set:
		return func(args starlark.Tuple, _ []starlark.Tuple) (starlark.Tuple, error) {
			args, err := g.boundedArgs(args, 0)
			if err != nil {
				return nil, err
			}
			switch name {
			case "union", "update", "symmetric_difference":
				return args, g.checkGrowth(x.Len(), args, 0)
			}
			return args, nil
		}
	}
	return nil
}

// checkGrowth fails when a collection of n elements, grown by every
// element of args and by extra more, could pass the element limit. The
// bound counts elements the collection may hold already, so a set near
// the limit cannot be updated with a large argument, even one that adds
// nothing new.
func (g *guards) checkGrowth(n int, args starlark.Tuple, extra int) error {
	total := int64(n) + int64(extra)
	for _, a := range args {
		if k := starlark.Len(a); k > 0 {
			total += int64(k)
		}
	}
	return g.checkElems(total, "the result")
}

// checkOperands fails when an operand has more elements than the limit.
func (g *guards) checkOperands(args starlark.Tuple) error {
	for _, a := range args {
		if n := starlark.Len(a); n > g.cfg.maxElems() {
			return tooLarge("an argument has %s elements, over the limit of %s elements (the code tool's max_value_size / 16); work on smaller pieces", withCommas(uint64(n)), withCommas(uint64(g.cfg.maxElems())))
		}
	}
	return nil
}

// bounded returns v, or, when v is an iterable of unknown length (such as
// s.codepoints()), a tuple of its elements; it fails when v has more
// elements than the limit. Gathering stops one element past the limit.
func (g *guards) bounded(v starlark.Value) (starlark.Value, error) {
	if n := starlark.Len(v); n >= 0 {
		if n > g.cfg.maxElems() {
			return nil, g.checkElems(int64(n), "the argument")
		}
		return v, nil
	}
	it, ok := v.(starlark.Iterable)
	if !ok {
		return v, nil
	}
	var out starlark.Tuple
	for e := range starlark.Elements(it) {
		if len(out) == g.cfg.maxElems() {
			return nil, tooLarge("the argument has more than %s elements, over the limit of %s elements (the code tool's max_value_size / 16); work on smaller pieces",
				withCommas(uint64(g.cfg.maxElems())), withCommas(uint64(g.cfg.maxElems())))
		}
		out = append(out, e)
	}
	return out, nil
}

// boundedArgs returns args with each argument from index first on made
// bounded (see bounded); args itself is not changed.
func (g *guards) boundedArgs(args starlark.Tuple, first int) (starlark.Tuple, error) {
	var out starlark.Tuple
	for i := first; i < len(args); i++ {
		b, err := g.bounded(args[i])
		if err != nil {
			return nil, err
		}
		if b != args[i] {
			if out == nil {
				out = slices.Clone(args)
			}
			out[i] = b
		}
	}
	if out == nil {
		return args, nil
	}
	return out, nil
}

// spread is the hidden built-in $spread(x, kind) that the argument of
// f(*x) (kind 1) or f(**x) (kind 2) passes through: the interpreter
// copies every element of x into the call's arguments in one step, so x
// must be bounded as a built-in's argument is.
func (g *guards) spread() *starlark.Builtin {
	return starlark.NewBuiltin(opSpread, func(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
		if len(args) != 1 {
			return nil, fmt.Errorf("%s: internal error: want 1 operand, got %d", opSpread, len(args))
		}
		refund(thread, 1)
		v, err := g.bounded(args[0])
		if err != nil {
			return nil, fmt.Errorf("the arguments after * or **: %w", err)
		}
		return v, nil
	})
}

// pieces returns how many pieces s.split, s.rsplit or s.splitlines (the
// method name) would make with args and kwargs, as the interpreter splits
// (see go.starlark.net's string_split): at most maxsplit+1 when a
// maxsplit is given.
func pieces(s, name string, args starlark.Tuple, kwargs []starlark.Tuple) int64 {
	if name == "splitlines" {
		if s == "" {
			return 0
		}
		n := int64(strings.Count(s, "\n")) + 1
		if strings.HasSuffix(s, "\n") {
			n--
		}
		return n
	}
	var sep starlark.Value = starlark.None
	maxsplit := int64(-1)
	if len(args) > 0 {
		sep = args[0]
	}
	if len(args) > 1 {
		if k, ok := args[1].(starlark.Int); ok {
			if v, ok := k.Int64(); ok {
				maxsplit = v
			}
		}
	}
	for _, kv := range kwargs {
		if len(kv) != 2 {
			continue
		}
		switch k, _ := starlark.AsString(kv[0]); k {
		case "sep":
			sep = kv[1]
		case "maxsplit":
			if k, ok := kv[1].(starlark.Int); ok {
				if v, ok := k.Int64(); ok {
					maxsplit = v
				}
			}
		}
	}
	var n int64
	if t, ok := starlark.AsString(sep); ok && t != "" {
		n = int64(strings.Count(s, t)) + 1
	} else {
		n = fields(s)
	}
	if maxsplit >= 0 && maxsplit+1 < n {
		n = maxsplit + 1
	}
	return n
}

// fields counts the fields of s, as strings.Fields splits it, without
// making them.
func fields(s string) int64 {
	var n int64
	in := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			in = false
		} else if !in {
			in = true
			n++
		}
	}
	return n
}

// rsplitsFew reports whether s.rsplit(args...) has a separator and a
// maxsplit, which go.starlark.net implements by splitting the whole
// string first (as many pieces as s has separators) and joining the
// excess back; rsplitN does it without the excess.
func rsplitsFew(args starlark.Tuple, kwargs []starlark.Tuple) bool {
	if len(kwargs) > 0 || len(args) != 2 {
		return false
	}
	sep, ok := starlark.AsString(args[0])
	if !ok || sep == "" {
		return false
	}
	k, ok := args[1].(starlark.Int)
	if !ok {
		return false
	}
	n, ok := k.Int64()
	return ok && n >= 0
}

// rsplitN is s.rsplit(sep, maxsplit) for a non-empty sep and maxsplit >=
// 0 (rsplitsFew): the last maxsplit separators split s.
func rsplitN(s string, args starlark.Tuple) (starlark.Value, error) {
	sep, _ := starlark.AsString(args[0])
	k, _ := args[1].(starlark.Int).Int64()
	var rev []starlark.Value
	for ; k > 0; k-- {
		i := strings.LastIndex(s, sep)
		if i < 0 {
			break
		}
		rev = append(rev, starlark.String(s[i+len(sep):]))
		s = s[:i]
	}
	out := make([]starlark.Value, 0, len(rev)+1)
	out = append(out, starlark.String(s))
	for i := len(rev) - 1; i >= 0; i-- {
		out = append(out, rev[i])
	}
	return starlark.NewList(out), nil
}

// checkCase fails when changing the case of s (upper, lower, title,
// capitalize) could make a string over the limit: a few letters take
// more bytes in the other case, and each invalid byte becomes the three
// bytes of U+FFFD. The text is measured only when it is long enough for
// that to matter.
func (g *guards) checkCase(s string) error {
	if len(s) <= g.maxBytes()/3 {
		return nil
	}
	var n int64
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r == utf8.RuneError && size == 1 {
			n += 3
			continue
		}
		n += int64(max(utf8.RuneLen(unicode.ToUpper(r)), utf8.RuneLen(unicode.ToLower(r)), utf8.RuneLen(unicode.ToTitle(r)), size))
	}
	return g.checkBytes(n, "the string")
}

// checkReplace fails when s.replace(old, new[, count]) would be too large.
func (g *guards) checkReplace(s string, args starlark.Tuple) error {
	if len(args) < 2 {
		return nil // the method reports it
	}
	old, ok1 := starlark.AsString(args[0])
	repl, ok2 := starlark.AsString(args[1])
	if !ok1 || !ok2 || len(repl) <= len(old) {
		return nil
	}
	n := int64(strings.Count(s, old))
	if old == "" {
		n = int64(utf8.RuneCountInString(s)) + 1
	}
	if len(args) > 2 {
		if c, ok := args[2].(starlark.Int); ok {
			if k, ok := c.Int64(); ok && k >= 0 && k < n {
				n = k
			}
		}
	}
	grow := int64(len(repl) - len(old))
	if n > 0 && grow > (1<<62)/n {
		return g.checkBytes(1<<62, "the string")
	}
	return g.checkBytes(int64(len(s))+n*grow, "the string")
}

// checkJoin fails when sep.join(iterable) would be too large.
func (g *guards) checkJoin(sep string, args starlark.Tuple) error {
	if len(args) != 1 {
		return nil
	}
	if err := g.checkOperands(args); err != nil {
		return err
	}
	it, ok := args[0].(starlark.Iterable)
	if !ok {
		return nil
	}
	var total, n int64
	for v := range starlark.Elements(it) {
		if s, ok := starlark.AsString(v); ok {
			total += int64(len(s))
		}
		n++
		if total+max(n-1, 0)*int64(len(sep)) > int64(g.maxBytes()) {
			break
		}
	}
	return g.checkBytes(total+max(n-1, 0)*int64(len(sep)), "the joined string")
}
