package code

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/planner-engine/planner/internal/textutil"
	starjson "go.starlark.net/lib/json"
	starmath "go.starlark.net/lib/math"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"
)

// predeclared returns the names every program sees besides Starlark's
// universe: the modules math and json, Python built-ins Starlark lacks,
// bounded replacements of built-ins whose result or work can grow
// without limit, and the hidden guards the rewritten program calls.
func (g *guards) predeclared() starlark.StringDict {
	d := starlark.StringDict{
		"math": g.mathModule(),
		"json": g.jsonModule(),

		"print":   starlark.NewBuiltin("print", builtinPrint),
		"fail":    starlark.NewBuiltin("fail", builtinFail),
		"str":     g.stringer("str"),
		"repr":    g.stringer("repr"),
		"int":     g.intBuiltin(),
		"getattr": g.getattr(),
		"sum":     starlark.NewBuiltin("sum", g.sum),
		"round":   starlark.NewBuiltin("round", builtinRound),
		"pow":     starlark.NewBuiltin("pow", builtinPow),
		"divmod":  starlark.NewBuiltin("divmod", builtinDivmod),
		"map":     starlark.NewBuiltin("map", g.mapBuiltin),
		"filter":  starlark.NewBuiltin("filter", g.filter),
		"hex":     radix("hex", 16, "0x"),
		"oct":     radix("oct", 8, "0o"),
		"bin":     radix("bin", 2, "0b"),
		"bytes":   starlark.NewBuiltin("bytes", g.bytesBuiltin),

		opAdd:    g.binary(opAdd, syntax.PLUS),
		opMul:    g.binary(opMul, syntax.STAR),
		opMod:    g.binary(opMod, syntax.PERCENT),
		opLsh:    g.binary(opLsh, syntax.LTLT),
		opOr:     g.binary(opOr, syntax.PIPE),
		opIAdd:   g.iadd(),
		opMethod: g.method(),
		opSpread: g.spread(),
	}
	for _, name := range []string{"list", "tuple", "sorted", "reversed", "enumerate", "zip", "set", "dict", "min", "max", "any", "all"} {
		d[name] = g.sized(name)
	}
	d.Freeze()
	return d
}

// universal returns the built-in of Starlark's universe called name.
func universal(name string) *starlark.Builtin {
	b, _ := starlark.Universe[name].(*starlark.Builtin)
	return b
}

// sized wraps the universal built-in name so that it refuses an argument
// with more elements than the limit (list(range(10**9)) would allocate
// gigabytes in one step, and max(range(10**12)) would run for hours). An
// argument it iterates whose length is unknown (s.codepoints()) is
// gathered into a tuple first, up to the limit.
func (g *guards) sized(name string) *starlark.Builtin {
	native := universal(name)
	return starlark.NewBuiltin(name, func(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if err := g.checkOperands(args); err != nil {
			return nil, err
		}
		// min and max compare their arguments when given several; every
		// other built-in here iterates all of its positional arguments.
		if (name != "min" && name != "max") || len(args) == 1 {
			var err error
			if args, err = g.boundedArgs(args, 0); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		}
		v, err := native.CallInternal(thread, args, kwargs)
		if err == nil {
			noteAlloc(thread, v)
		}
		return v, err
	})
}

// bytesBuiltin is bytes(x): a string's or bytes' bytes as Starlark's
// bytes makes them, or the bytes of an iterable of integers, refused once
// it passes the value size limit (bytes(range(10**9)) would otherwise
// build a gigabyte in one step).
func (g *guards) bytesBuiltin(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(kwargs) > 0 || len(args) != 1 {
		return universal("bytes").CallInternal(thread, args, kwargs)
	}
	switch x := args[0].(type) {
	case starlark.String:
		// Each invalid byte becomes the three bytes of U+FFFD.
		if len(x) > g.maxBytes()/3 && !utf8.ValidString(string(x)) {
			if err := g.checkBytes(transcodedLen(string(x)), "the bytes"); err != nil {
				return nil, fmt.Errorf("bytes: %w", err)
			}
		}
		return universal("bytes").CallInternal(thread, args, kwargs)
	case starlark.Bytes:
		return x, nil
	case starlark.Iterable:
		if n := starlark.Len(x); n >= 0 {
			if err := g.checkBytes(int64(n), "the bytes"); err != nil {
				return nil, fmt.Errorf("bytes: %w", err)
			}
		}
		var buf []byte
		i := 0
		for v := range starlark.Elements(x) {
			var b byte
			if err := starlark.AsInt(v, &b); err != nil {
				return nil, fmt.Errorf("bytes: at index %d, %w", i, err)
			}
			if len(buf) == g.maxBytes() {
				return nil, fmt.Errorf("bytes: %w", tooLarge("the bytes would be over %s long, over the limit of %s (the code tool's max_value_size); work on smaller pieces",
					byteSize(int64(g.maxBytes())), byteSize(int64(g.maxBytes()))))
			}
			buf = append(buf, b)
			i++
		}
		v := starlark.Bytes(buf)
		noteAlloc(thread, v)
		return v, nil
	}
	return universal("bytes").CallInternal(thread, args, kwargs)
}

// stringer wraps str or repr so that it refuses to render a value whose
// text would be larger than the value size limit.
func (g *guards) stringer(name string) *starlark.Builtin {
	native := universal(name)
	return starlark.NewBuiltin(name, func(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if len(args) == 1 {
			if err := g.checkRepr(args[0]); err != nil {
				return nil, err
			}
		}
		v, err := native.CallInternal(thread, args, kwargs)
		if err == nil {
			noteAlloc(thread, v)
		}
		return v, err
	})
}

// checkRepr fails when v's text would be too large or too deeply nested.
func (g *guards) checkRepr(v starlark.Value) error {
	n, deep := reprSize(v, g.maxBytes())
	if deep {
		return tooLarge("the value is nested more than %d levels deep", maxNest)
	}
	if n > g.maxBytes() {
		return tooLarge("the text of the value would be over the limit of %s", byteSize(int64(g.maxBytes())))
	}
	return nil
}

// intBuiltin wraps int so that it refuses to parse a string of more
// digits than MaxIntBits allows (parsing is quadratic in the length).
func (g *guards) intBuiltin() *starlark.Builtin {
	native := universal("int")
	maxDigits := MaxIntBits*30103/100000 + 64
	return starlark.NewBuiltin("int", func(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if len(args) > 0 {
			if s, ok := starlark.AsString(args[0]); ok && len(s) > maxDigits {
				return nil, tooLarge("int: the string has %s characters, over the limit of %s digits", withCommas(uint64(len(s))), withCommas(uint64(maxDigits)))
			}
		}
		return native.CallInternal(thread, args, kwargs)
	})
}

// getattr wraps getattr so that a method with a guarded name comes back
// wrapped with its size check, as a call x.name(...) does.
func (g *guards) getattr() *starlark.Builtin {
	native := universal("getattr")
	return starlark.NewBuiltin("getattr", func(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if len(args) >= 2 && len(kwargs) == 0 {
			if name, ok := starlark.AsString(args[1]); ok && guardedMethods(name) {
				v, err := g.lookupMethod(args[0], name)
				if err != nil && len(args) > 2 {
					return args[2], nil
				}
				return v, err
			}
		}
		return native.CallInternal(thread, args, kwargs)
	})
}

// transcodedLen is the length of s with each invalid UTF-8 byte replaced
// by U+FFFD, as bytes(s) makes it.
func transcodedLen(s string) int64 {
	var n int64
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r == utf8.RuneError && size == 1 {
			n += 3
		} else {
			n += int64(size)
		}
	}
	return n
}

// builtinPrint is print(*args, sep=" ", end="\n"), where None stands for
// the default as in Python: it writes to the call's output, which keeps at
// most Config.MaxOutput bytes.
func builtinPrint(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var sep, end starlark.Value = starlark.None, starlark.None
	if err := starlark.UnpackArgs("print", nil, kwargs, "sep?", &sep, "end?", &end); err != nil {
		return nil, err
	}
	sepText, err := textArg("print", "sep", sep, " ")
	if err != nil {
		return nil, err
	}
	endText, err := textArg("print", "end", end, "\n")
	if err != nil {
		return nil, err
	}
	if r := runOf(thread); r != nil {
		r.out.print(args, sepText, endText)
	}
	return starlark.None, nil
}

// textArg returns a string argument, or def for None.
func textArg(fn, name string, v starlark.Value, def string) (string, error) {
	if v == starlark.None {
		return def, nil
	}
	s, ok := starlark.AsString(v)
	if !ok {
		return "", fmt.Errorf("%s: %s must be None or a string, not %s", fn, name, v.Type())
	}
	return s, nil
}

// builtinFail is fail(*args, sep=" "): it stops the program with an error
// made of the arguments (at most 2 KiB of them).
func builtinFail(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	sep := " "
	if err := starlark.UnpackArgs("fail", nil, kwargs, "sep?", &sep); err != nil {
		return nil, err
	}
	w := &limitWriter{max: 2 << 10}
	rd := renderer{w: w}
	w.WriteString("fail: ")
	for i, a := range args {
		if i > 0 {
			w.WriteString(sep)
		}
		rd.printed(a)
	}
	return nil, errors.New(string(w.buf))
}

// sum is Python's sum(iterable, start=0), adding with the size checks of
// the + operator and counting a step per element.
func (g *guards) sum(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var iterable starlark.Iterable
	var acc starlark.Value = starlark.MakeInt(0)
	if err := starlark.UnpackArgs("sum", args, kwargs, "iterable", &iterable, "start?", &acc); err != nil {
		return nil, err
	}
	r := runOf(thread)
	for v := range starlark.Elements(iterable) {
		if err := r.tick(thread); err != nil {
			return nil, err
		}
		var err error
		if acc, err = g.apply(syntax.PLUS, acc, v); err != nil {
			return nil, err
		}
	}
	return acc, nil
}

// mapBuiltin is Python's map(function, iterable, ...), returning a list
// (as Starlark's enumerate and zip do); with several iterables it stops
// at the shortest.
func (g *guards) mapBuiltin(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(kwargs) > 0 {
		return nil, fmt.Errorf("map: unexpected keyword arguments")
	}
	if len(args) < 2 {
		return nil, fmt.Errorf("map: want a function and at least one iterable, got %d arguments", len(args))
	}
	if err := g.checkOperands(args[1:]); err != nil {
		return nil, err
	}
	fn := args[0]
	iters := make([]starlark.Iterator, 0, len(args)-1)
	defer func() {
		for _, it := range iters {
			it.Done()
		}
	}()
	for i, a := range args[1:] {
		it := starlark.Iterate(a)
		if it == nil {
			return nil, fmt.Errorf("map: argument %d is not iterable: %s", i+2, a.Type())
		}
		iters = append(iters, it)
	}
	r := runOf(thread)
	var out []starlark.Value
	for {
		call := make(starlark.Tuple, len(iters))
		for i, it := range iters {
			if !it.Next(&call[i]) {
				return starlark.NewList(out), nil
			}
		}
		if err := r.tick(thread); err != nil {
			return nil, err
		}
		v, err := starlark.Call(thread, fn, call, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
}

// filter is Python's filter(function, iterable), returning a list; a
// function of None keeps the true elements.
func (g *guards) filter(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var fn starlark.Value
	var iterable starlark.Iterable
	if err := starlark.UnpackPositionalArgs("filter", args, kwargs, 2, &fn, &iterable); err != nil {
		return nil, err
	}
	if err := g.checkOperands(args[1:]); err != nil {
		return nil, err
	}
	r := runOf(thread)
	var out []starlark.Value
	for v := range starlark.Elements(iterable) {
		if err := r.tick(thread); err != nil {
			return nil, err
		}
		keep := v
		if fn != starlark.None {
			var err error
			if keep, err = starlark.Call(thread, fn, starlark.Tuple{v}, nil); err != nil {
				return nil, err
			}
		}
		if keep.Truth() {
			out = append(out, v)
		}
	}
	return starlark.NewList(out), nil
}

// builtinRound is Python's round(number, ndigits=None): without ndigits
// the nearest int (ties to even); with them a number of the same type
// rounded to that many decimal places (negative: tens, hundreds, ...).
func builtinRound(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, nd starlark.Value = nil, starlark.None
	if err := starlark.UnpackArgs("round", args, kwargs, "number", &x, "ndigits?", &nd); err != nil {
		return nil, err
	}
	digits, haveDigits := 0, nd != starlark.None
	if haveDigits {
		if err := starlark.AsInt(nd, &digits); err != nil {
			return nil, fmt.Errorf("round: ndigits: %w", err)
		}
	}
	switch x := x.(type) {
	case starlark.Int:
		if !haveDigits || digits >= 0 {
			return x, nil
		}
		return roundInt(x, -digits), nil
	case starlark.Float:
		f := float64(x)
		if !haveDigits {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("round: cannot convert %v to an integer", x)
			}
			return starlark.NumberToInt(starlark.Float(math.RoundToEven(f)))
		}
		switch {
		case math.IsNaN(f) || math.IsInf(f, 0) || digits > 330:
			return x, nil
		case digits >= 0:
			r, err := strconv.ParseFloat(strconv.FormatFloat(f, 'f', digits, 64), 64)
			if err != nil {
				return nil, fmt.Errorf("round: %w", err)
			}
			return starlark.Float(r), nil
		case digits < -330:
			return starlark.Float(math.Copysign(0, f)), nil
		default:
			p := math.Pow(10, float64(-digits))
			return starlark.Float(math.RoundToEven(f/p) * p), nil
		}
	}
	return nil, fmt.Errorf("round: got %s, want int or float", x.Type())
}

// roundInt rounds x to a multiple of 10**k, ties to even.
func roundInt(x starlark.Int, k int) starlark.Int {
	xb := x.BigInt()
	if k > xb.BitLen()/3+2 { // 10**k > 2*|x|
		return starlark.MakeInt(0)
	}
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(k)), nil)
	q, m := new(big.Int).DivMod(xb, p, new(big.Int)) // m >= 0
	switch new(big.Int).Lsh(m, 1).Cmp(p) {
	case 1:
		q.Add(q, big.NewInt(1))
	case 0:
		if q.Bit(0) == 1 {
			q.Add(q, big.NewInt(1))
		}
	}
	return starlark.MakeBigInt(q.Mul(q, p))
}

// builtinPow is Python's pow(base, exp, mod=None): exact for integers
// (a float for a negative exponent), math.pow otherwise.
func builtinPow(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var base, exp, mod starlark.Value = nil, nil, starlark.None
	if err := starlark.UnpackArgs("pow", args, kwargs, "base", &base, "exp", &exp, "mod?", &mod); err != nil {
		return nil, err
	}
	bi, bInt := base.(starlark.Int)
	ei, eInt := exp.(starlark.Int)
	if mod != starlark.None {
		mi, ok := mod.(starlark.Int)
		if !bInt || !eInt || !ok {
			return nil, fmt.Errorf("pow: a modulus needs integer arguments")
		}
		return powMod(bi.BigInt(), ei.BigInt(), mi.BigInt())
	}
	if bInt && eInt {
		e := ei.BigInt()
		if e.Sign() >= 0 {
			b := bi.BigInt()
			if b.CmpAbs(big.NewInt(1)) > 0 {
				if !e.IsInt64() || e.Int64() > MaxIntBits {
					return nil, checkBits(MaxIntBits+1, "pow's result")
				}
				if err := checkBits(int64(b.BitLen()-1)*e.Int64()+1, "pow's result"); err != nil {
					return nil, err
				}
			}
			return starlark.MakeBigInt(new(big.Int).Exp(b, e, nil)), nil
		}
	}
	bf, ok1 := starlark.AsFloat(base)
	ef, ok2 := starlark.AsFloat(exp)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("pow: got %s and %s, want numbers", base.Type(), exp.Type())
	}
	return starlark.Float(math.Pow(bf, ef)), nil
}

// powMod is pow(b, e, m) for integers, with Python's signs: the result
// has the sign of m, and a negative e takes the modular inverse.
func powMod(b, e, m *big.Int) (starlark.Value, error) {
	if m.Sign() == 0 {
		return nil, fmt.Errorf("pow: the modulus must not be 0")
	}
	if e.BitLen()*m.BitLen() > 1<<24 {
		return nil, tooLarge("pow: a %d-bit exponent with a %d-bit modulus would take too long", e.BitLen(), m.BitLen())
	}
	am := new(big.Int).Abs(m)
	bb := new(big.Int).Mod(b, am)
	if e.Sign() < 0 {
		if bb.ModInverse(bb, am) == nil {
			return nil, fmt.Errorf("pow: the base is not invertible for this modulus")
		}
		e = new(big.Int).Neg(e)
	}
	r := new(big.Int).Exp(bb, e, am)
	if m.Sign() < 0 && r.Sign() != 0 {
		r.Add(r, m)
	}
	return starlark.MakeBigInt(r), nil
}

// builtinDivmod is Python's divmod(a, b): the tuple (a // b, a % b).
func builtinDivmod(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var a, b starlark.Value
	if err := starlark.UnpackPositionalArgs("divmod", args, kwargs, 2, &a, &b); err != nil {
		return nil, err
	}
	q, err := starlark.Binary(syntax.SLASHSLASH, a, b)
	if err != nil {
		return nil, fmt.Errorf("divmod: %w", err)
	}
	m, err := starlark.Binary(syntax.PERCENT, a, b)
	if err != nil {
		return nil, fmt.Errorf("divmod: %w", err)
	}
	return starlark.Tuple{q, m}, nil
}

// radix returns Python's hex, oct or bin: an integer's digits in base
// with prefix, and a minus sign first when negative.
func radix(name string, base int, prefix string) *starlark.Builtin {
	return starlark.NewBuiltin(name, func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var x starlark.Int
		if err := starlark.UnpackPositionalArgs(name, args, kwargs, 1, &x); err != nil {
			return nil, err
		}
		b := x.BigInt()
		sign := ""
		if b.Sign() < 0 {
			sign = "-"
			b.Neg(b)
		}
		return starlark.String(sign + prefix + b.Text(base)), nil
	})
}

// mathModule is Starlark's math module plus a few of Python's: factorial,
// gcd, isnan, isinf, isfinite, log2, log10, inf and nan.
func (g *guards) mathModule() *starlarkstruct.Module {
	members := starlark.StringDict{}
	for k, v := range starmath.Module.Members {
		members[k] = v
	}
	members["inf"] = starlark.Float(math.Inf(1))
	members["nan"] = starlark.Float(math.NaN())
	members["factorial"] = starlark.NewBuiltin("factorial", factorial)
	members["gcd"] = starlark.NewBuiltin("gcd", gcd)
	members["isnan"] = floatPredicate("isnan", math.IsNaN)
	members["isinf"] = floatPredicate("isinf", func(f float64) bool { return math.IsInf(f, 0) })
	members["isfinite"] = floatPredicate("isfinite", func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) })
	members["log2"] = floatFunc("log2", math.Log2)
	members["log10"] = floatFunc("log10", math.Log10)
	return &starlarkstruct.Module{Name: "math", Members: members}
}

// factorial is math.factorial(n) for 0 <= n, refusing results over
// MaxIntBits.
func factorial(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var n int
	if err := starlark.UnpackPositionalArgs("factorial", args, kwargs, 1, &n); err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("factorial: not defined for negative values")
	}
	lg, _ := math.Lgamma(float64(n) + 1)
	if err := checkBits(int64(lg/math.Ln2)+1, "factorial's result"); err != nil {
		return nil, err
	}
	return starlark.MakeBigInt(new(big.Int).MulRange(1, int64(n))), nil
}

// gcd is math.gcd(*integers), non-negative.
func gcd(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(kwargs) > 0 {
		return nil, fmt.Errorf("gcd: unexpected keyword arguments")
	}
	r := new(big.Int)
	for i, a := range args {
		x, ok := a.(starlark.Int)
		if !ok {
			return nil, fmt.Errorf("gcd: argument %d is %s, want int", i+1, a.Type())
		}
		r.GCD(nil, nil, r, new(big.Int).Abs(x.BigInt()))
	}
	return starlark.MakeBigInt(r), nil
}

// floatArg unpacks one int or float argument of the built-in name.
func floatArg(name string, args starlark.Tuple, kwargs []starlark.Tuple) (float64, error) {
	var x starlark.Value
	if err := starlark.UnpackPositionalArgs(name, args, kwargs, 1, &x); err != nil {
		return 0, err
	}
	f, ok := starlark.AsFloat(x)
	if !ok {
		return 0, fmt.Errorf("%s: got %s, want int or float", name, x.Type())
	}
	return f, nil
}

// floatPredicate returns a math built-in testing a float.
func floatPredicate(name string, test func(float64) bool) *starlark.Builtin {
	return starlark.NewBuiltin(name, func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		f, err := floatArg(name, args, kwargs)
		if err != nil {
			return nil, err
		}
		return starlark.Bool(test(f)), nil
	})
}

// floatFunc returns a math built-in applying fn to a float.
func floatFunc(name string, fn func(float64) float64) *starlark.Builtin {
	return starlark.NewBuiltin(name, func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		f, err := floatArg(name, args, kwargs)
		if err != nil {
			return nil, err
		}
		return starlark.Float(fn(f)), nil
	})
}

// jsonModule is Starlark's json module with size checks: encode and
// encode_indent refuse values whose text would be too large, and decode
// and indent refuse text nested deeper than maxJSONDepth (their parsers
// recurse once per level) or, for indent, whose result would be too
// large; decode also refuses text of more values than the element limit
// (each makes a Starlark value, several times the bytes of its text) or
// with a number of more digits than MaxIntBits allows (parsing one is
// quadratic in its length).
func (g *guards) jsonModule() *starlarkstruct.Module {
	members := starlark.StringDict{}
	for k, v := range starjson.Module.Members {
		members[k] = v
	}
	for _, name := range []string{"encode", "encode_indent", "decode", "indent"} {
		native, _ := starjson.Module.Members[name].(*starlark.Builtin)
		members[name] = starlark.NewBuiltin("json."+name, func(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if len(args) > 0 {
				if err := g.checkJSON(name, args[0], kwargs); err != nil {
					return nil, fmt.Errorf("json.%s: %w", name, err)
				}
			}
			v, err := native.CallInternal(thread, args, kwargs)
			if err == nil {
				noteAlloc(thread, v)
			}
			return v, err
		})
	}
	return &starlarkstruct.Module{Name: "json", Members: members}
}

// maxJSONDepth bounds the nesting of JSON text that json.decode and
// json.indent accept.
const maxJSONDepth = 1000

// checkJSON fails when json.name(arg, **kwargs) would make too large a
// text or parse too deeply nested a one.
func (g *guards) checkJSON(name string, arg starlark.Value, kwargs []starlark.Tuple) error {
	// Indented output adds, per element, a newline, the prefix and an
	// indent per level.
	perLevel, prefix := 1, 0
	for _, kv := range kwargs {
		if len(kv) != 2 {
			continue
		}
		k, _ := starlark.AsString(kv[0])
		v, _ := starlark.AsString(kv[1])
		switch k {
		case "indent":
			perLevel = len(v)
		case "prefix":
			prefix = len(v)
		}
	}
	switch name {
	case "encode", "encode_indent":
		m := measure(arg, g.maxBytes())
		if m.deep {
			return tooLarge("the value is nested more than %d levels deep", maxNest)
		}
		size := int64(m.n)
		if name == "encode_indent" {
			size += int64(m.items) * int64(1+prefix+m.maxDepth*perLevel)
		}
		return g.checkBytes(size, "the JSON text")
	case "decode", "indent":
		s, ok := starlark.AsString(arg)
		if !ok {
			return nil
		}
		depth, items, digits := jsonShape(s)
		if depth > maxJSONDepth {
			return tooLarge("the text nests more than %d levels deep", maxJSONDepth)
		}
		if name == "indent" {
			return g.checkBytes(int64(len(s))+int64(items)*int64(1+prefix+depth*perLevel), "the indented text")
		}
		if maxDigits := MaxIntBits*30103/100000 + 64; digits > maxDigits {
			return tooLarge("the text has a number of %s digits, over the limit of %s digits", withCommas(uint64(digits)), withCommas(uint64(maxDigits)))
		}
		// Each value but the first follows a comma or opens with a
		// bracket or brace; a closing one adds none, so items bounds the
		// values from above by at most a factor of two.
		return g.checkElems(int64(items), "the decoded value")
	}
	return nil
}

// jsonShape returns the deepest nesting of brackets and braces in JSON
// text, outside strings, the number of commas, brackets and braces, and
// the longest run of digits outside strings.
func jsonShape(s string) (deepest, items, digits int) {
	var scan textutil.JSONScanner
	run := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		outside := scan.Step(c)
		if outside && c >= '0' && c <= '9' {
			run++
			digits = max(digits, run)
			continue
		}
		run = 0
		if outside && strings.IndexByte("[]{},", c) >= 0 {
			items++
			deepest = max(deepest, scan.Depth)
		}
	}
	return deepest, items, digits
}
