package code

import (
	"time"

	"github.com/planner-engine/planner/tools"
)

// Defaults of the Config fields, used where a field is zero or negative.
const (
	// DefaultMaxSteps is the default step budget of one program: Starlark
	// bytecode instructions, plus one per element that a built-in such as
	// sum or map visits.
	DefaultMaxSteps = 10_000_000
	// DefaultTimeout is the default wall-clock limit of one program.
	DefaultTimeout = 5 * time.Second
	// DefaultMaxOutput is the default cap, in bytes, on the printed text
	// kept, and separately on the rendering of the final value.
	DefaultMaxOutput = 16 << 10
	// DefaultMaxSource is the default cap, in bytes, on a program's text.
	DefaultMaxSource = 64 << 10
	// DefaultMaxDepth is the default limit on nested calls (Python's
	// default recursion limit).
	DefaultMaxDepth = 1000
	// DefaultMaxValueSize is the default cap, in bytes, on one string or
	// bytes value an operator or guarded method makes; lists, tuples,
	// sets and dicts may hold a sixteenth as many elements.
	DefaultMaxValueSize = 16 << 20
	// DefaultMaxMemory is the default limit on the growth of the Go heap's
	// live bytes while a program runs; with DefaultMaxValueSize the heap
	// peaks within 25% of it (see Config.MaxMemory).
	DefaultMaxMemory = 256 << 20
)

// MaxIntBits caps the size of an integer that an operator or built-in
// makes (about 315,000 decimal digits), so that no single multiplication
// or conversion runs for long.
const MaxIntBits = 1 << 20

// Config sets the limits of the code tool; the mapstructure tags are the
// keys of a pipeline's tools entry (name: code), with sizes in bytes. The
// zero value takes every default; a field that is zero or negative takes
// its default too, so no limit can be switched off.
type Config struct {
	// MaxSteps bounds the computation steps of one program. Default
	// DefaultMaxSteps (10,000,000), which a simple loop spends in about
	// a second.
	MaxSteps uint64 `mapstructure:"max_steps"`
	// Timeout bounds the wall-clock time of one program. Default
	// DefaultTimeout (5s). The tool's Meta.Timeout is Timeout plus a
	// margin for parsing and rendering.
	Timeout time.Duration `mapstructure:"timeout"`
	// MaxOutput caps the printed text kept, in bytes; more is dropped and
	// the observation says it was truncated. The rendering of the final
	// value has a cap of the same size. Default DefaultMaxOutput (16 KiB).
	MaxOutput int `mapstructure:"max_output"`
	// MaxSource caps the program's text in bytes. Default
	// DefaultMaxSource (64 KiB).
	MaxSource int `mapstructure:"max_source"`
	// MaxDepth bounds nested function calls. Default DefaultMaxDepth
	// (1000).
	MaxDepth int `mapstructure:"max_depth"`
	// MaxValueSize caps, in bytes, one string or bytes value that an
	// operator (+, *, %, <<), str, repr, bytes, json.encode or a guarded
	// string method (replace, join, format, upper, lower, title,
	// capitalize) would make; lists, tuples, sets and dicts so made or
	// consumed by a built-in (split, rsplit, splitlines, keys, values,
	// items, union, update, extend, json.decode, the x of f(*x), ...) may
	// hold MaxValueSize/16 elements. Default DefaultMaxValueSize (16 MiB,
	// so 1 Mi elements).
	MaxValueSize int `mapstructure:"max_value_size"`
	// MaxMemory stops a program once the process's live heap has grown by
	// more than this many bytes since the program started. The heap is
	// read every 100µs and after each big value a built-in makes, and a
	// garbage collection is forced to measure it when the heap in use
	// nears the limit, so it peaks at most MaxMemory/16 plus one step's
	// allocation (up to about 3*MaxValueSize) above the limit. Other
	// goroutines' allocations count too, so keep it well above what
	// programs need, and at least 8 times MaxValueSize for the peak to
	// stay within 25% of it. Default DefaultMaxMemory (256 MiB).
	MaxMemory int64 `mapstructure:"max_memory"`
}

// withDefaults returns c with every unset field at its default.
func (c Config) withDefaults() Config {
	if c.MaxSteps == 0 {
		c.MaxSteps = DefaultMaxSteps
	}
	c.Timeout = tools.SettingOr(c.Timeout, DefaultTimeout)
	c.MaxOutput = tools.SettingOr(c.MaxOutput, DefaultMaxOutput)
	c.MaxSource = tools.SettingOr(c.MaxSource, DefaultMaxSource)
	c.MaxDepth = tools.SettingOr(c.MaxDepth, DefaultMaxDepth)
	c.MaxValueSize = tools.SettingOr(c.MaxValueSize, DefaultMaxValueSize)
	c.MaxMemory = tools.SettingOr(c.MaxMemory, DefaultMaxMemory)
	return c
}

// maxElems is the cap on the elements of one list, tuple, set or dict.
func (c Config) maxElems() int { return max(c.MaxValueSize/16, 1) }
