package nodekind

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/planner-engine/planner/config"
)

// ErrBadKind means a kind name is registered twice, or a kind lacks a
// name or a constructor.
var ErrBadKind = errors.New("bad node kind registration")

// ErrUnknownType means no node kind is registered under a type name.
var ErrUnknownType = errors.New("unknown node type")

// Kind is a registered node type.
type Kind struct {
	// Name is the YAML `type:` value.
	Name string
	// Summary is a one-line description for listings.
	Summary string
	// New builds a node from its spec.
	New Constructor
	// Templates declare the kind's prompt template settings and the
	// .Extra values each sees; the constructor compiles its templates
	// against the same declarations, and the README's table of template
	// fields is generated from them (TemplateDocs).
	Templates []TemplateSpec
}

// Registry maps type names to kinds. Build one with NewRegistry; package
// paradigms composes the built-in kinds. It is not safe for concurrent
// registration, only for concurrent lookups.
type Registry struct {
	kinds map[string]Kind
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{kinds: map[string]Kind{}} }

// Register adds a kind; registering a name twice is an error.
func (r *Registry) Register(k Kind) error {
	if k.Name == "" || k.New == nil {
		return fmt.Errorf("%w: a node kind needs a name and a constructor", ErrBadKind)
	}
	if _, dup := r.kinds[k.Name]; dup {
		return fmt.Errorf("%w: node kind %q registered twice", ErrBadKind, k.Name)
	}
	r.kinds[k.Name] = k
	return nil
}

// MustRegister is Register for built-in kinds; it panics on a programming
// error (a duplicate name).
func (r *Registry) MustRegister(ks ...Kind) *Registry {
	for _, k := range ks {
		if err := r.Register(k); err != nil {
			panic(err)
		}
	}
	return r
}

// Lookup returns the kind registered under name. An unknown name fails
// with an error wrapping ErrUnknownType that suggests the nearest known
// type, when one is close, and lists them all.
func (r *Registry) Lookup(name string) (Kind, error) {
	k, ok := r.kinds[name]
	if !ok {
		names := r.Names()
		return Kind{}, fmt.Errorf("%w %q (%sknown types: %s)", ErrUnknownType, name, config.DidYouMean(name, names), strings.Join(names, ", "))
	}
	return k, nil
}

// Constructor returns the constructor of the kind registered under name; it
// implements pipeline.Constructors.
func (r *Registry) Constructor(name string) (Constructor, error) {
	k, err := r.Lookup(name)
	if err != nil {
		return nil, err
	}
	return k.New, nil
}

// Names returns the registered type names, sorted.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.kinds))
	for n := range r.kinds {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Kinds returns the registered kinds sorted by name.
func (r *Registry) Kinds() []Kind {
	out := make([]Kind, 0, len(r.kinds))
	for _, n := range r.Names() {
		out = append(out, r.kinds[n])
	}
	return out
}
