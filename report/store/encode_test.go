package store

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"
)

// jsonLine is a record as encoding/json writes it, the reference for
// appendRecord.
func jsonLine(t testing.TB, r *Record) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func checkEncoding(t testing.TB, r *Record) {
	got, err := appendRecord(nil, r)
	if err != nil {
		t.Fatalf("appendRecord(%+v): %v", r, err)
	}
	if want := jsonLine(t, r); !bytes.Equal(got, want) {
		t.Fatalf("appendRecord(%+v)\n got %q\nwant %q", r, got, want)
	}
}

func TestAppendRecordMatchesEncodingJSON(t *testing.T) {
	at := time.Date(2026, 11, 21, 9, 30, 0, 123456789, time.UTC)
	for _, r := range []Record{
		{Type: TypeRun, Note: "run started", At: at},
		{Type: TypeIntent, Agent: "Spring Promo", Phone: "+12125550101", AgentID: "agent_1", Sheet: "leads.csv", Row: 2, Attempt: 1, At: at},
		{Type: TypeOutcome, Agent: "A", Phone: "+1", N: 3, Attempt: 2, Status: OutcomeFailed, HTTP: 422, Reason: "the service refused the call",
			Body: `{"error":"bad","message":"a \"quoted\" <b>&</b>\nline\ttab\r\b\f\x00\x1f\x7f é 😀 \u2028\u2029 \xff\xfe end"}`, At: at.In(time.FixedZone("", -5*3600))},
		{Type: TypeOutcome, Agent: "Ågent\\", Phone: "+44", N: -1, Row: -7, Attempt: 1 << 40, HTTP: 599, Sheet: "dir/ä.csv", At: time.Time{}},
		{Type: "", At: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)},
	} {
		checkEncoding(t, &r)
	}
}

func TestAppendRecordRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"", "a", "Ada", "\"", "\\", "\n", "\x00", "\x1f", " ", "<>&", "é", "😀", "\u2028", "\u2029", "\xff", "\xe2\x80", "\xed\xa0\x80", "{}", "+12125550101"}
	str := func() string {
		var b []byte
		for range rng.IntN(6) {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		return string(b)
	}
	num := func() int { return []int{0, 1, -1, 200, 1 << 31, -(1 << 62)}[rng.IntN(6)] }
	for range 20000 {
		r := Record{Type: str(), Agent: str(), Phone: str(), N: num(), AgentID: str(), Sheet: str(), Row: num(), Attempt: num(),
			Status: str(), HTTP: num(), Reason: str(), Body: str(), Note: str(),
			At: time.Unix(rng.Int64N(1<<35)-(1<<34), rng.Int64N(1e9)).In(time.FixedZone("", (rng.IntN(48)-24)*1800))}
		checkEncoding(t, &r)
	}
}

func FuzzAppendRecord(f *testing.F) {
	f.Add("intent", "Spring Promo", "+12125550101", "a \"b\" \n \xff \u2028", 3, int64(1700000000), int64(5))
	f.Fuzz(func(t *testing.T, typ, agent, phone, body string, n int, sec, nsec int64) {
		r := Record{Type: typ, Agent: agent, Phone: phone, Body: body, Reason: body, N: n, Row: n, At: time.Unix(sec%(1<<35), nsec%1e9).UTC()}
		got, err := appendRecord(nil, &r)
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		werr := enc.Encode(&r)
		if (err != nil) != (werr != nil) {
			t.Fatalf("appendRecord error %v, encoding/json error %v", err, werr)
		}
		if err == nil && !bytes.Equal(got, buf.Bytes()) {
			t.Fatalf("got %q\nwant %q", got, buf.Bytes())
		}
	})
}

func TestAppendRecordOutOfRangeYear(t *testing.T) {
	r := Record{Type: TypeRun, At: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}
	if _, err := appendRecord(nil, &r); err == nil {
		t.Fatal("no error for year 10000")
	}
}

func BenchmarkAppendRecord(b *testing.B) {
	r := Record{Type: TypeOutcome, Agent: "Spring Promo", Phone: "+12125550101", AgentID: "agent_1", Sheet: "leads.csv", Row: 12345, Attempt: 1,
		Status: OutcomeSent, HTTP: 200, Body: `{"status":"success","call_id":"call_123"}`, At: time.Now()}
	b.Run("appendRecord", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 512)
		for b.Loop() {
			buf, _ = appendRecord(buf[:0], &r)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		for b.Loop() {
			buf.Reset()
			enc.Encode(&r)
		}
	})
}

func TestAppendRecordOutOfRangeOffset(t *testing.T) {
	r := Record{Type: TypeRun, At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", 25*3600))}
	if _, err := appendRecord(nil, &r); err == nil {
		t.Fatal("no error for an offset of 25 hours")
	}
	if _, err := json.Marshal(&r); err == nil {
		t.Fatal("encoding/json has no error either: the two disagree")
	}
}
