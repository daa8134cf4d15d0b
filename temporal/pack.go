package temporal

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/planner-engine/planner/journal"
)

// chainDigest extends prev, the chain digest of a journal's first
// entries, with e: the hex SHA-256 of prev and the parts of e that
// identify it wherever it travels (kind, scope, node, request digest and
// response). The request itself and the entry's sequence number and time
// are left out: compacting an entry (journal.Compact) or storing it again
// does not change its digest. The workflow and the workers compute it
// alike, to agree on which journal a worker holds. The chain digest of no
// entries is "".
func chainDigest(prev string, e journal.Entry) string {
	h := sha256.New()
	var n [8]byte
	for _, p := range [][]byte{[]byte(prev), []byte(e.Kind), []byte(e.Scope), []byte(e.Node), []byte(e.Digest), compactJSON(e.Response)} {
		binary.LittleEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// compactJSON is b without insignificant white space (b itself when it
// is not valid JSON), so that a response digests the same before and
// after a trip through a payload.
func compactJSON(b []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return b
	}
	return buf.Bytes()
}

// extendChain appends to chain, the chain digests of a journal's first
// 0, 1, ... entries (at least [""], for none), those of the journal
// extended with entries, and returns it.
func extendChain(chain []string, entries []journal.Entry) []string {
	chain = slices.Grow(chain, len(entries))
	for _, e := range entries {
		chain = append(chain, chainDigest(chain[len(chain)-1], e))
	}
	return chain
}

// pack returns v as gzip-compressed JSON: how journals and trace events
// travel in bulk (a resend, a continue-as-new), where they would
// otherwise pass Temporal's payload size limit (2 MB) sooner. JSON of
// journal entries shrinks about seven times.
func pack(v any) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(v); err != nil {
		return nil, fmt.Errorf("temporal: packing: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("temporal: packing: %w", err)
	}
	return buf.Bytes(), nil
}

// unpack decodes what pack packed into v; empty b leaves v as it is.
func unpack(b []byte, v any) error {
	if len(b) == 0 {
		return nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("temporal: unpacking: %w", err)
	}
	if err := json.NewDecoder(zr).Decode(v); err != nil {
		return fmt.Errorf("temporal: unpacking: %w", err)
	}
	if _, err := io.Copy(io.Discard, zr); err != nil {
		return fmt.Errorf("temporal: unpacking: %w", err)
	}
	return nil
}

// compacted returns entries ready to travel in a workflow's history:
// compacted (journal.Compact: a model request is kept as its digest,
// which is all replay needs) and without sequence numbers.
func compacted(entries []journal.Entry) []journal.Entry {
	if len(entries) == 0 {
		return nil
	}
	out := make([]journal.Entry, len(entries))
	for i, e := range entries {
		e = journal.Compact(e)
		e.Seq = 0
		out[i] = e
	}
	return out
}
