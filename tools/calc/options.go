package calc

// Default limits and rendering settings.
const (
	// DefaultMaxBits is the default limit on the bit length of the numerator
	// and of the denominator of every exact value (about 3,010 decimal
	// digits).
	DefaultMaxBits = 10_000
	// DefaultPrecision is the default number of fractional digits shown for
	// results that must be rounded.
	DefaultPrecision = 12
	// DefaultMaxLength is the default limit on the input length in bytes.
	DefaultMaxLength = 4096
	// DefaultMaxDepth is the default limit on nesting depth (parentheses,
	// function calls, unary operators and chained powers).
	DefaultMaxDepth = 100
	// MaxPrecision is the largest precision WithPrecision accepts; larger
	// values are clamped to it.
	MaxPrecision = 1000
)

// config holds the settings of one evaluation.
type config struct {
	maxBits   int
	precision int
	maxLength int
	maxDepth  int
}

func defaultConfig() config {
	return config{
		maxBits:   DefaultMaxBits,
		precision: DefaultPrecision,
		maxLength: DefaultMaxLength,
		maxDepth:  DefaultMaxDepth,
	}
}

func newConfig(opts []Option) config {
	c := defaultConfig()
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// Option changes one setting of Eval or of a Tool.
type Option func(*config)

// WithMaxBits limits the bit length of the numerator and of the denominator
// of every exact value computed, intermediate ones included. An expression
// whose value would exceed it fails with ErrTooLarge before the value is
// computed. The work budget of an evaluation (about 16 operations on values
// of this size) grows with the square of n. Default DefaultMaxBits (10,000
// bits); n <= 0 keeps the default.
func WithMaxBits(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxBits = n
		}
	}
}

// WithPrecision sets how many fractional digits are shown when a result has
// to be rounded (a non-terminating exact quotient such as 1/3, or a float64
// result, which never shows more than 15 significant digits). Default
// DefaultPrecision (12); n <= 0 keeps the default and n > MaxPrecision is
// clamped to MaxPrecision.
func WithPrecision(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.precision = min(n, MaxPrecision)
		}
	}
}

// WithMaxLength limits the input length in bytes, counted before
// surrounding quotes and white space are removed; longer input fails with
// ErrTooLarge. Default DefaultMaxLength (4096 bytes); n <= 0 keeps the
// default.
func WithMaxLength(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxLength = n
		}
	}
}

// WithMaxDepth limits how deeply the expression may nest (parentheses,
// function calls, unary operators and chained powers each add a level);
// deeper input fails with ErrTooLarge. Default DefaultMaxDepth (100 levels);
// n <= 0 keeps the default.
func WithMaxDepth(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxDepth = n
		}
	}
}
