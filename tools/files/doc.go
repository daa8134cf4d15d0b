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
// Hard links cannot be checked that way: a hard link is the file itself
// under another name, with nothing that tells the name inside the root
// from one outside it (a link made in the root to a file elsewhere on
// the same file system, by anyone who could write the root). So
// read_file, search_files and write_file refuse every regular file with
// more than one link, checked on the open file before anything is read
// or written (write_file truncates only after the check), with an error
// wrapping ErrHardLink; search_files skips such files and counts them,
// and list_files marks them. A file legitimately linked twice inside the
// root is refused too; copy it instead. Windows reports the count on the
// open file only, so its listings do not mark them; Plan 9 and
// WebAssembly do not report it, and nothing is refused there.
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
