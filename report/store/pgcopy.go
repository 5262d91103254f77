package store

import (
	"encoding/binary"
	"slices"
	"time"
)

// pgCopyHeader opens a stream in PostgreSQL's binary COPY format: the
// signature, no flags, no header extension.
const pgCopyHeader = "PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00"

// pgEpochMicros is where PostgreSQL's binary timestamps count from
// (2000-01-01 UTC), in microseconds since the Unix epoch.
var pgEpochMicros = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()

// appendDoNotCallCopy appends entries to buf as the rows (number, hash,
// at, removed, source, reason, source_id) of a binary COPY into
// callrun_do_not_call, header and trailer included: an entry whose
// source has an id in sources is written with the id and an empty
// source, any other with its source and no id. pgDoNotCall.add sends it: pgx's CopyFrom
// encodes each value through its type map, and at a 10,000,000-number
// import that was half the client's CPU.
func appendDoNotCallCopy(buf []byte, entries []DoNotCallEntry, sources map[string]int32) []byte {
	size := len(pgCopyHeader) + 2
	for _, e := range entries {
		size += 2 + 7*4 + 8 + 1 + 4 + len(e.Number) + len(e.Hash) + len(e.Source) + len(e.Reason)
	}
	buf = slices.Grow(buf, size)
	buf = append(buf, pgCopyHeader...)
	for _, e := range entries {
		buf = binary.BigEndian.AppendUint16(buf, 7)
		buf = appendCopyText(buf, e.Number)
		buf = appendCopyText(buf, e.Hash)
		buf = binary.BigEndian.AppendUint32(buf, 8)
		buf = binary.BigEndian.AppendUint64(buf, uint64(e.At.UnixMicro()-pgEpochMicros))
		buf = binary.BigEndian.AppendUint32(buf, 1)
		if e.Removed {
			buf = append(buf, 1)
		} else {
			buf = append(buf, 0)
		}
		id, ok := sources[e.Source]
		if ok {
			buf = appendCopyText(buf, "")
		} else {
			buf = appendCopyText(buf, e.Source)
		}
		buf = appendCopyText(buf, e.Reason)
		if ok {
			buf = binary.BigEndian.AppendUint32(buf, 4)
			buf = binary.BigEndian.AppendUint32(buf, uint32(id))
		} else {
			buf = binary.BigEndian.AppendUint32(buf, 0xffffffff) // NULL: -1
		}
	}
	return binary.BigEndian.AppendUint16(buf, 0xffff) // the trailer: -1
}

// appendCopyText appends one text field of a binary COPY row.
func appendCopyText(buf []byte, s string) []byte {
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(s)))
	return append(buf, s...)
}
