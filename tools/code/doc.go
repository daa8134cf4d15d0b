// Package code is the code tool: a hermetic interpreter for programs that
// a model writes, in the spirit of the python_interpreter tool of agent
// papers, but safe to run in the engine's process. Programs are Starlark
// (go.starlark.net), a dialect of Python, with the dialect options that
// bring it closest to Python switched on: while loops, recursion, set,
// if/for/while at top level and reassignment of globals.
//
// # Observation
//
// A call returns what the program printed, then, when its last statement
// is an expression whose value is not None, that value's repr, as a
// notebook cell shows it:
//
//	total = 0
//	for i in range(1, 11):
//	    total += i * i
//	print("sum of squares:", total)
//	total / 10
//
// returns "sum of squares: 385\n38.5". A program with neither returns
// NoOutput. The input is the program text (Markdown code fences, with or
// without a language tag, are removed), or a JSON object {"code": "..."}
// from native tool calling; see Program.
//
// # Environment
//
// Besides Starlark's built-ins, programs see the modules math (Starlark's
// plus factorial, gcd, isnan, isinf, isfinite, log2, log10, inf, nan) and
// json, and Python's sum, round, pow, divmod, map, filter (both returning
// lists), hex, oct and bin; print takes sep and end, and the % operator
// and str.format accept Python's widths, precisions and format specs
// ("%.2f", "{:>8,}"), which Starlark lacks. There is no load,
// no file, network, environment or clock access, and no randomness, so a
// program's result depends only on its text. Errors name the line, show
// it, and add a hint for the Python features Starlark lacks (imports,
// classes, exceptions, f-strings, **), because a model sees only the
// first line of a tool's error.
//
// # Limits
//
// Each call runs in a fresh thread with its own globals; nothing is kept
// between calls, and calls may run concurrently. Config sets the limits:
// computation steps, wall-clock time (the context's cancellation stops a
// program too), call depth, printed output, program size, the size of one
// value, and the growth of the heap. A program is stopped at the first
// step boundary after a limit is reached.
//
// Starlark itself has no memory limit, so the tool bounds allocation in
// layers:
//
//   - the step limit bounds how many values a program can make;
//   - the operators +, *, % and << (and their augmented forms), str,
//     repr, json.encode, int parsing and the string, list, set and dict
//     methods that can make a result much larger than their operands
//     (replace, join, format, extend, union, update, ...) check the size
//     of their result before making it (Config.MaxValueSize, MaxIntBits),
//     which stops the doubling loops (s += s) that reach gigabytes in a
//     few dozen steps;
//   - list, tuple, sorted, set, dict, enumerate, zip, reversed, min, max,
//     any and all refuse arguments with more elements than the limit,
//     so list(range(10**9)) fails instead of allocating 16 GB in one step;
//   - print and the final value render at most Config.MaxOutput bytes,
//     however large or self-similar the value;
//   - a watchdog compares the heap's live bytes after each garbage
//     collection with those at the start and stops the program once they
//     have grown by more than Config.MaxMemory.
//
// # Remaining risks
//
// The checks above are best effort, not isolation:
//
//   - one built-in operation is not interruptible; a program is stopped
//     only between steps. An operation on large values made of shared
//     parts (comparing two lists that each repeat the same million-element
//     list a million times) can run for a very long time. Run then returns
//     at the time limit (after a short grace) with ErrTimeLimit, but the
//     goroutine keeps a CPU busy until the operation ends;
//   - an alias of a guarded method (r = s.replace; r(...)) bypasses its
//     size check, as does an augmented assignment whose target has a call
//     in it (a[f()] += x), and a few methods not guarded (split, elems)
//     can make values some times larger than their operands;
//   - the memory watchdog measures the whole process, so other goroutines'
//     allocations count against a program, and it checks only after a
//     garbage collection; a program can allocate up to about
//     MaxValueSize times a small factor in one step, and more between
//     collections when the heap is already large;
//   - Starlark's interpreter and built-ins are trusted code: a bug in them
//     is a bug here.
//
// Run the engine under an operating-system memory limit (a container or
// cgroup) when programs may be hostile.
package code
