// Package nodes holds the node kinds that need no package of their own: the
// single-call generators (direct, chain of thought, Plan-and-Solve), the
// finalizer and ReWOO solver, and the reasoning paradigms built from model
// calls alone or around the ReAct executor: self-consistency, Least-to-Most,
// Reflexion's evaluator and self-reflection, Tree of Thoughts (BFS and DFS,
// with an exact Game of 24 verifier) and LATS.
package nodes
