package nodes

// Default returns a registry with every built-in node kind.
func Default() *Registry {
	return NewRegistry().MustRegister(
		Kind{Name: "direct", Summary: "one model call; the reply is the answer", New: NewDirect},
		Kind{Name: "cot", Summary: "zero-shot chain of thought with answer extraction", New: NewCoT},
	)
}
