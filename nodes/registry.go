// Package nodes is the registry that maps a pipeline's node `type:` to a
// constructor, and holds the nodes that need no package of their own: the
// single-call generators (direct, chain of thought, Plan-and-Solve), the
// finalizer and ReWOO solver, and the reasoning paradigms built from model
// calls alone or around the ReAct executor: self-consistency, Least-to-Most,
// Reflexion's evaluator and self-reflection, Tree of Thoughts (BFS and DFS,
// with an exact Game of 24 verifier) and LATS.
package nodes

import (
	"errors"
	"fmt"
	"sort"

	"github.com/planner-engine/planner/node"
)

// ErrUnknownType means no node kind is registered under a type name.
var ErrUnknownType = errors.New("unknown node type")

// Kind is a registered node type.
type Kind struct {
	// Name is the YAML `type:` value.
	Name string
	// Summary is a one-line description for listings.
	Summary string
	// New builds a node from its spec.
	New node.Constructor
}

// Registry maps type names to kinds. Build one with NewRegistry or Default;
// it is not safe for concurrent registration, only for concurrent lookups.
type Registry struct {
	kinds map[string]Kind
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{kinds: map[string]Kind{}} }

// Register adds a kind; registering a name twice is an error.
func (r *Registry) Register(k Kind) error {
	if k.Name == "" || k.New == nil {
		return fmt.Errorf("node kind needs a name and a constructor")
	}
	if _, dup := r.kinds[k.Name]; dup {
		return fmt.Errorf("node kind %q registered twice", k.Name)
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

// Lookup returns the kind registered under name.
func (r *Registry) Lookup(name string) (Kind, error) {
	k, ok := r.kinds[name]
	if !ok {
		return Kind{}, fmt.Errorf("%w %q (known types: %v)", ErrUnknownType, name, r.Names())
	}
	return k, nil
}

// Constructor returns the constructor of the kind registered under name; it
// implements pipeline.Constructors.
func (r *Registry) Constructor(name string) (node.Constructor, error) {
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
