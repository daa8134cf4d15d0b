//go:build !race

package code_test

// raceEnabled reports a build with the race detector, whose shadow
// memory counts in a process's resident set.
const raceEnabled = false
