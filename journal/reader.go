package journal

import (
	"context"
	"fmt"
	"iter"
)

// PageSize is how many entries a session (Open) and All read from an
// EntryPager at a time.
const PageSize = 512

// EntryPager is a Store that reads a journal a page at a time, so that a
// session replays a long journal without holding all of it at once. Open
// and All use it when the store has it, and Store.Entries otherwise;
// journaltest.Run checks it against Entries.
type EntryPager interface {
	// EntryPage returns, in Seq order, the entries of the named thread's
	// journal whose Seq follows after (0 for the first page), at most
	// limit of them (limit < 1 means one), and how many entries the
	// journal holds, both read in one snapshot. The page is verified as
	// Entries verifies a journal: a page that skips an entry, holds one
	// beyond the journal's count or a changed one, or ends before limit
	// entries while the journal holds more, fails with ErrCorrupt, never
	// a partial page. A missing thread fails with ErrNotFound.
	EntryPage(ctx context.Context, name string, after int64, limit int) (page []Entry, total int64, err error)
}

// All returns the named thread's journal in Seq order as an iterator,
// read a page at a time from an EntryPager (PageSize entries), and all at
// once by Entries from another store. It yields an error (ErrNotFound,
// ErrCorrupt, a store's failure) once, as its last pair, with a zero
// Entry; the entries yielded before it stand, but a caller that must not
// act on part of a damaged journal reads it to its end before it acts.
func All(ctx context.Context, s Store, name string) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		rd := newReader(s, name)
		for !rd.done {
			page, err := rd.next(ctx)
			if err != nil {
				yield(Entry{}, err)
				return
			}
			for _, e := range page {
				if !yield(e, nil) {
					return
				}
			}
		}
	}
}

// reader reads a journal a page at a time, up to the count of entries
// its first page reported (a session's own appends come after them), and
// checks that the pages follow one another.
type reader struct {
	s     Store
	pager EntryPager
	name  string
	// after is the seq of the last entry read; total the journal's count
	// at the first page, -1 before it.
	after, total int64
	done         bool
}

func newReader(s Store, name string) *reader {
	pager, _ := s.(EntryPager)
	return &reader{s: s, pager: pager, name: name, total: -1}
}

// next returns the next page; done is set once the journal is read.
func (rd *reader) next(ctx context.Context) ([]Entry, error) {
	if rd.done {
		return nil, nil
	}
	if rd.pager == nil {
		es, err := rd.s.Entries(ctx, rd.name)
		if err != nil {
			return nil, err
		}
		rd.after, rd.total, rd.done = int64(len(es)), int64(len(es)), true
		return es, nil
	}
	limit := PageSize
	if rd.total >= 0 {
		limit = int(min(int64(limit), rd.total-rd.after))
	}
	page, total, err := rd.pager.EntryPage(ctx, rd.name, rd.after, limit)
	if err != nil {
		return nil, err
	}
	corrupt := func(seq int64, format string, args ...any) error {
		return fmt.Errorf("%w: thread %q, entry %d: %s", ErrCorrupt, rd.name, seq, fmt.Sprintf(format, args...))
	}
	switch {
	case rd.total < 0:
		rd.total = total
	case total < rd.total:
		return nil, corrupt(total+1, "missing: the journal shrank from %d to %d entries while it was read", rd.total, total)
	}
	for i, e := range page {
		if want := rd.after + int64(i) + 1; e.Seq != want {
			return nil, corrupt(want, "missing (the store's page went on with entry %d)", e.Seq)
		}
	}
	if len(page) > limit {
		page = page[:limit]
	}
	rd.after += int64(len(page))
	switch {
	case rd.after >= rd.total:
		rd.done = true
	case len(page) < limit:
		return nil, corrupt(rd.after+1, "missing (the journal records %d entries, the store's page ended at %d)", rd.total, rd.after)
	}
	return page, nil
}
