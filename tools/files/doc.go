// Package files gives agents read (and optionally write) access to the
// files under one root folder: the tools list_files, read_file,
// search_files and, when Config.Write is set, write_file.
//
// Every path a model gives is relative to the root. Absolute paths, ".."
// components that climb above the root, NUL bytes and symbolic links that
// resolve outside the root are refused: files are opened through an
// os.Root, which checks each path component, symbolic links included, at
// the moment it is opened. Refusals wrap ErrOutsideRoot or ErrBadPath and
// tools.ErrBadInput, with a message that tells the model what to do
// instead.
//
// Output is bounded: read_file stops at Config.MaxReadBytes and ends with a
// marker that names the start_line to read on from; list_files shows at
// most Config.MaxEntries entries and search_files at most Config.MaxMatches
// matches, each saying how many more there were. read_file refuses binary
// files and search_files skips them, and files larger than
// Config.MaxSearchFileBytes. Listings and searches skip ".git" folders
// unless Config.IncludeGit is set; write_file never writes inside one.
//
// A model calls a tool with the JSON object of its arguments, such as
// {"path": "notes/a.md", "start_line": 10}, or with plain text where that
// is unambiguous: a bare path for list_files and read_file, a bare pattern
// for search_files. write_file always takes a JSON object.
//
// An FS is immutable and safe for concurrent use; it holds no open files
// between calls.
package files
