package store

import (
	"encoding/binary"
	"io"
	"time"
)

// pgCopyHeader opens a stream in PostgreSQL's binary COPY format: the
// signature, no flags, no header extension.
const pgCopyHeader = "PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00"

// pgEpochMicros is where PostgreSQL's binary timestamps count from
// (2000-01-01 UTC), in microseconds since the Unix epoch.
var pgEpochMicros = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()

// doNotCallCopy is the binary COPY of do-not-call entries into
// callrun_do_not_call, the rows (number, hash, at, removed, source,
// reason, source_id), read as it is encoded, a few hundred rows at a
// time: an entry whose source has an id in sources is written with the
// id and an empty source, any other with its source and no id.
// pgDoNotCall.add sends it, in place of pgx's CopyFrom, which encodes
// each value through its type map (docs/performance.md has the cost).
type doNotCallCopy struct {
	entries []DoNotCallEntry // those not encoded yet
	sources map[string]int32
	buf     []byte // encoded, not read yet
	mem     []byte // buf's memory, used again for each chunk
	begun   bool   // the header is in buf
	ended   bool   // the trailer is in buf
}

func newDoNotCallCopy(entries []DoNotCallEntry, sources map[string]int32) *doNotCallCopy {
	return &doNotCallCopy{entries: entries, sources: sources}
}

func (c *doNotCallCopy) Read(p []byte) (int, error) {
	if len(c.buf) == 0 {
		if c.ended {
			return 0, io.EOF
		}
		c.fill()
	}
	n := copy(p, c.buf)
	c.buf = c.buf[n:]
	return n, nil
}

// fill encodes the next rows into buf: the header first, the trailer
// once the entries are out.
func (c *doNotCallCopy) fill() {
	const chunk = 512
	buf := c.mem[:0]
	if !c.begun {
		buf, c.begun = append(buf, pgCopyHeader...), true
	}
	n := min(chunk, len(c.entries))
	for _, e := range c.entries[:n] {
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
		id, shared := c.sources[e.Source]
		source := e.Source
		if shared {
			source = ""
		}
		buf = appendCopyText(buf, source)
		buf = appendCopyText(buf, e.Reason)
		if shared {
			buf = binary.BigEndian.AppendUint32(buf, 4)
			buf = binary.BigEndian.AppendUint32(buf, uint32(id))
		} else {
			buf = binary.BigEndian.AppendUint32(buf, 0xffffffff) // NULL: -1
		}
	}
	if c.entries = c.entries[n:]; len(c.entries) == 0 {
		buf, c.ended = binary.BigEndian.AppendUint16(buf, 0xffff), true // the trailer: -1
	}
	c.buf, c.mem = buf, buf
}

// appendCopyText appends one text field of a binary COPY row.
func appendCopyText(buf []byte, s string) []byte {
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(s)))
	return append(buf, s...)
}
