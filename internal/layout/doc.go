// Package layout holds no code: its test pins the import rules of the
// project's packages (which floor of the import graph each package sits on
// and which arrows between them are allowed), so a change that makes a low
// package depend on a higher one fails CI with the offending import.
package layout
