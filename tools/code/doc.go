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
//   - every built-in, method and operator that makes a string or a
//     collection in one step checks the size of its result before making
//     it: strings and bytes up to Config.MaxValueSize bytes, lists,
//     tuples, sets and dicts up to MaxValueSize/16 elements, integers up
//     to MaxIntBits. That covers the operators +, *, %, << and | (and
//     their augmented forms), str, repr, bytes, int parsing, json.encode
//     and json.decode, the string methods split, rsplit, splitlines,
//     replace, join, format, upper, lower, title and capitalize, and the
//     list, set and dict methods extend, union, update, keys, values and
//     items: x.split("a") on a 16 MB string fails instead of making 16
//     million strings, and the doubling loops (s += s) that reach
//     gigabytes in a few dozen steps stop at the limit;
//   - list, tuple, sorted, set, dict, enumerate, zip, reversed, min, max,
//     any and all refuse arguments with more elements than the limit,
//     so list(range(10**9)) fails instead of allocating 16 GB in one
//     step; an argument of unknown length (s.codepoints()) is gathered
//     up to the limit first, and so is the x of a call f(*x) or f(**x);
//   - print and the final value render at most Config.MaxOutput bytes,
//     however large or self-similar the value;
//   - a watchdog stops the program once the heap's live bytes have grown
//     by more than Config.MaxMemory since it started. It reads the heap
//     every 100µs and right after a built-in made a big value, and forces
//     a garbage collection to measure the live bytes when the heap in use
//     (garbage included) nears the limit, so the heap peaks at most a
//     sixteenth of MaxMemory plus one step's allocation above it: at the
//     defaults, measured, 1.0 to 1.2 times MaxMemory in heap and in
//     resident memory for programs that keep what built-ins make
//     (TestMemoryLimitHolds).
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
//     in it (a[f()] += x);
//   - collections that grow an element per step (append, add, item
//     assignment, comprehensions) are bounded by the step limit and the
//     memory watchdog, not by the element limit. A dict or set doubles
//     its hash table inside one step, about 120 bytes per entry: from
//     about 850,000 entries that is a 120 MB allocation the watchdog
//     sees only afterwards (measured: 1.22 times MaxMemory in heap, up to
//     1.3 to 1.5 times in resident memory, for a dict grown to the limit);
//   - the memory watchdog measures the whole process, so other
//     goroutines' allocations count against a program; one step may
//     allocate up to about three times MaxValueSize (split making a
//     million strings) before the watchdog looks, which is more than a
//     quarter of a MaxMemory under 200 MiB. A program that keeps close to
//     MaxMemory and makes garbage runs a garbage collection every
//     MaxMemory/16 bytes it allocates;
//   - Starlark's interpreter and built-ins are trusted code: a bug in them
//     is a bug here.
//
// Run the engine under an operating-system memory limit (a container or
// cgroup) when programs may be hostile.
package code
