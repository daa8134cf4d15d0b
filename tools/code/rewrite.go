package code

import (
	"strconv"

	"go.starlark.net/syntax"
)

// rewrite prepares a parsed program for running, before it is resolved:
//
//   - a load statement is refused (errLoad at its position);
//   - the operators +, *, %, << and | (and +=, *=, %=, <<=, |=) become
//     calls of hidden built-ins that check the size of the result first;
//   - the argument x of f(*x) and f(**x) passes through a hidden built-in
//     that refuses one of more elements than the limit;
//   - a call x.m(...) of a method that can make a large result (see
//     guardedMethods) looks m up through a hidden built-in that wraps it
//     with a size check;
//   - when the last statement is an expression, its value is assigned to
//     a hidden global, so the caller can show it as a notebook cell does.
//
// It reports whether the last statement was so rewritten.
func rewrite(f *syntax.File) (hasResult bool, err error) {
	for _, s := range f.Stmts {
		if l, ok := s.(*syntax.LoadStmt); ok {
			return false, &loadError{pos: l.Load}
		}
	}
	f.Stmts = stmts(f.Stmts)
	if n := len(f.Stmts); n > 0 {
		if e, ok := f.Stmts[n-1].(*syntax.ExprStmt); ok {
			start, _ := e.X.Span()
			f.Stmts[n-1] = &syntax.AssignStmt{
				OpPos: start,
				Op:    syntax.EQ,
				LHS:   &syntax.Ident{NamePos: start, Name: resultVar},
				RHS:   e.X,
			}
			return true, nil
		}
	}
	return false, nil
}

// loadError is a refused load statement.
type loadError struct{ pos syntax.Position }

func (e *loadError) Error() string {
	return "load() is not available: there are no modules to load; math and json are predeclared, and anything else must be written in the program"
}

// guardedOp returns the hidden built-in that applies a binary operator
// with a size check, or "" for an operator that needs none.
func guardedOp(op syntax.Token) string {
	switch op {
	case syntax.PLUS:
		return opAdd
	case syntax.STAR:
		return opMul
	case syntax.PERCENT:
		return opMod
	case syntax.LTLT:
		return opLsh
	case syntax.PIPE:
		return opOr
	}
	return ""
}

// augmentedOp returns the hidden built-in of an augmented assignment
// operator, or "".
func augmentedOp(op syntax.Token) string {
	switch op {
	case syntax.PLUS_EQ:
		return opIAdd
	case syntax.STAR_EQ:
		return opMul
	case syntax.PERCENT_EQ:
		return opMod
	case syntax.LTLT_EQ:
		return opLsh
	case syntax.PIPE_EQ:
		return opOr
	}
	return ""
}

func stmts(ss []syntax.Stmt) []syntax.Stmt {
	for i, s := range ss {
		ss[i] = stmt(s)
	}
	return ss
}

func stmt(s syntax.Stmt) syntax.Stmt {
	switch s := s.(type) {
	case *syntax.AssignStmt:
		s.RHS = expr(s.RHS)
		if s.Op == syntax.EQ {
			s.LHS = target(s.LHS)
			return s
		}
		// x op= y becomes x = $op(x, y) when evaluating x twice has no
		// effects; otherwise the operator runs unchecked.
		if name := augmentedOp(s.Op); name != "" && pure(s.LHS) {
			operand := expr(clone(s.LHS))
			return &syntax.AssignStmt{OpPos: s.OpPos, Op: syntax.EQ, LHS: target(s.LHS), RHS: call(name, s.OpPos, operand, s.RHS)}
		}
		s.LHS = target(s.LHS)
	case *syntax.DefStmt:
		params(s.Params)
		s.Body = stmts(s.Body)
	case *syntax.ExprStmt:
		s.X = expr(s.X)
	case *syntax.IfStmt:
		s.Cond = expr(s.Cond)
		s.True = stmts(s.True)
		s.False = stmts(s.False)
	case *syntax.ForStmt:
		s.Vars = target(s.Vars)
		s.X = expr(s.X)
		s.Body = stmts(s.Body)
	case *syntax.WhileStmt:
		s.Cond = expr(s.Cond)
		s.Body = stmts(s.Body)
	case *syntax.ReturnStmt:
		if s.Result != nil {
			s.Result = expr(s.Result)
		}
	}
	return s
}

// params rewrites the default values of a function's parameters.
func params(ps []syntax.Expr) {
	for _, p := range ps {
		if b, ok := p.(*syntax.BinaryExpr); ok && b.Op == syntax.EQ {
			b.Y = expr(b.Y)
		}
	}
}

// target rewrites the operands inside an assignment target, leaving the
// target's own shape (name, index, field, tuple) as it is.
func target(e syntax.Expr) syntax.Expr {
	switch e := e.(type) {
	case *syntax.IndexExpr:
		e.X = expr(e.X)
		e.Y = expr(e.Y)
	case *syntax.DotExpr:
		e.X = expr(e.X)
	case *syntax.ParenExpr:
		e.X = target(e.X)
	case *syntax.TupleExpr:
		for i, x := range e.List {
			e.List[i] = target(x)
		}
	case *syntax.ListExpr:
		for i, x := range e.List {
			e.List[i] = target(x)
		}
	}
	return e
}

func exprs(es []syntax.Expr) {
	for i, e := range es {
		es[i] = expr(e)
	}
}

func expr(e syntax.Expr) syntax.Expr {
	switch e := e.(type) {
	case nil:
		return nil
	case *syntax.BinaryExpr:
		e.X = expr(e.X)
		e.Y = expr(e.Y)
		if name := guardedOp(e.Op); name != "" {
			return call(name, e.OpPos, e.X, e.Y)
		}
	case *syntax.CallExpr:
		if d, ok := e.Fn.(*syntax.DotExpr); ok && guardedMethods(d.Name.Name) {
			e.Fn = call(opMethod, d.Dot, expr(d.X), &syntax.Literal{
				Token: syntax.STRING, TokenPos: d.NamePos, Raw: strconv.Quote(d.Name.Name), Value: d.Name.Name,
			})
		} else {
			e.Fn = expr(e.Fn)
		}
		exprs(e.Args)
		for _, a := range e.Args {
			// f(*x) and f(**x) copy every element of x in one step.
			if u, ok := a.(*syntax.UnaryExpr); ok && (u.Op == syntax.STAR || u.Op == syntax.STARSTAR) && u.X != nil {
				u.X = call(opSpread, u.OpPos, u.X)
			}
		}
	case *syntax.ParenExpr:
		e.X = expr(e.X)
	case *syntax.DotExpr:
		e.X = expr(e.X)
	case *syntax.IndexExpr:
		e.X = expr(e.X)
		e.Y = expr(e.Y)
	case *syntax.SliceExpr:
		e.X = expr(e.X)
		e.Lo = expr(e.Lo)
		e.Hi = expr(e.Hi)
		e.Step = expr(e.Step)
	case *syntax.UnaryExpr:
		e.X = expr(e.X)
	case *syntax.CondExpr:
		e.Cond = expr(e.Cond)
		e.True = expr(e.True)
		e.False = expr(e.False)
	case *syntax.ListExpr:
		exprs(e.List)
	case *syntax.TupleExpr:
		exprs(e.List)
	case *syntax.DictExpr:
		exprs(e.List)
	case *syntax.DictEntry:
		e.Key = expr(e.Key)
		e.Value = expr(e.Value)
	case *syntax.LambdaExpr:
		params(e.Params)
		e.Body = expr(e.Body)
	case *syntax.Comprehension:
		e.Body = expr(e.Body)
		for _, c := range e.Clauses {
			switch c := c.(type) {
			case *syntax.ForClause:
				c.Vars = target(c.Vars)
				c.X = expr(c.X)
			case *syntax.IfClause:
				c.Cond = expr(c.Cond)
			}
		}
	}
	return e
}

// call returns the call of the hidden built-in name with args, placed at
// pos so that errors point at the operator.
func call(name string, pos syntax.Position, args ...syntax.Expr) *syntax.CallExpr {
	return &syntax.CallExpr{Fn: &syntax.Ident{NamePos: pos, Name: name}, Lparen: pos, Args: args, Rparen: pos}
}

// pure reports whether evaluating e twice is the same as evaluating it
// once: names, literals, and fields, indexes and operators of pure
// operands. Calls and comprehensions are not pure.
func pure(e syntax.Expr) bool {
	switch e := e.(type) {
	case *syntax.Ident, *syntax.Literal:
		return true
	case *syntax.ParenExpr:
		return pure(e.X)
	case *syntax.DotExpr:
		return pure(e.X)
	case *syntax.IndexExpr:
		return pure(e.X) && pure(e.Y)
	case *syntax.SliceExpr:
		return pure(e.X) && (e.Lo == nil || pure(e.Lo)) && (e.Hi == nil || pure(e.Hi)) && (e.Step == nil || pure(e.Step))
	case *syntax.UnaryExpr:
		return e.X != nil && pure(e.X)
	case *syntax.BinaryExpr:
		return pure(e.X) && pure(e.Y)
	case *syntax.TupleExpr:
		for _, x := range e.List {
			if !pure(x) {
				return false
			}
		}
		return true
	}
	return false
}

// clone copies a pure expression, so the copy and the original can be
// resolved apart.
func clone(e syntax.Expr) syntax.Expr {
	switch e := e.(type) {
	case *syntax.Ident:
		return &syntax.Ident{NamePos: e.NamePos, Name: e.Name}
	case *syntax.Literal:
		c := *e
		return &c
	case *syntax.ParenExpr:
		return &syntax.ParenExpr{Lparen: e.Lparen, X: clone(e.X), Rparen: e.Rparen}
	case *syntax.DotExpr:
		return &syntax.DotExpr{X: clone(e.X), Dot: e.Dot, NamePos: e.NamePos, Name: &syntax.Ident{NamePos: e.Name.NamePos, Name: e.Name.Name}}
	case *syntax.IndexExpr:
		return &syntax.IndexExpr{X: clone(e.X), Lbrack: e.Lbrack, Y: clone(e.Y), Rbrack: e.Rbrack}
	case *syntax.SliceExpr:
		return &syntax.SliceExpr{X: clone(e.X), Lbrack: e.Lbrack, Lo: cloneOpt(e.Lo), Hi: cloneOpt(e.Hi), Step: cloneOpt(e.Step), Rbrack: e.Rbrack}
	case *syntax.UnaryExpr:
		return &syntax.UnaryExpr{OpPos: e.OpPos, Op: e.Op, X: clone(e.X)}
	case *syntax.BinaryExpr:
		return &syntax.BinaryExpr{X: clone(e.X), OpPos: e.OpPos, Op: e.Op, Y: clone(e.Y)}
	case *syntax.TupleExpr:
		c := &syntax.TupleExpr{Lparen: e.Lparen, Rparen: e.Rparen}
		for _, x := range e.List {
			c.List = append(c.List, clone(x))
		}
		return c
	}
	return e
}

func cloneOpt(e syntax.Expr) syntax.Expr {
	if e == nil {
		return nil
	}
	return clone(e)
}
