package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/report/store"
)

// TestListenPutsOptOutsOnTheList: a delivery whose outcomes.opt_out
// field holds one of its values puts the number (read with the
// campaign's region) on the do-not-call list in CALLRUN_HOME, with the
// delivery and campaign, before it is answered 200; a retry adds nothing;
// another disposition puts nothing; a list that cannot be written gets
// 503, so the service sends it again, and the retry puts it there.
func TestListenPutsOptOutsOnTheList(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	t.Setenv("CALLRUN_HOME", home)
	path := writeListenCampaign(t, dir, "spring")
	b, _ := os.ReadFile(path)
	b = append(b, "  opt_out: {field: disposition, values: [do_not_call, opted_out]}\nregion: US\n"...)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var logs e2eBuffer
	base, stop := startListen(t, &logs, path)
	hook := base + "/callrun/spring/" + hookSecret
	send := func(phone, disposition string) int {
		t.Helper()
		resp, err := http.PostForm(hook, url.Values{"event": {"call.ended"}, "phone_number": {phone}, "disposition": {disposition}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	list := store.OpenDoNotCallFile(home)
	entries := func() []store.DoNotCallEntry {
		t.Helper()
		es, err := list.Entries(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return es
	}

	if got := send("(415) 555-0132", " Opted_Out "); got != 200 {
		t.Fatalf("an opt-out: answered %d", got)
	}
	// Acknowledged, so on the list already: no waiting.
	es := entries()
	if len(es) != 1 || es[0].Number != "+14155550132" || !strings.HasPrefix(es[0].Source, "delivery ") || !strings.HasSuffix(es[0].Source, " of campaign spring") || time.Since(es[0].At) > time.Minute {
		t.Fatalf("after the opt-out: %+v", es)
	}
	if got := send("(415) 555-0132", " Opted_Out "); got != 200 || len(entries()) != 1 {
		t.Errorf("a retry of the opt-out: answered %d, %d entries", got, len(entries()))
	}
	if got := send("+14155550133", "completed"); got != 200 || len(entries()) != 1 {
		t.Errorf("a call that ended without opting out: answered %d, %d entries", got, len(entries()))
	}
	if got := send("n/a", "do_not_call"); got != 200 || !strings.Contains(logs.String(), "callrun suppress add") {
		t.Errorf("an opt-out whose number does not read: answered %d; logs:\n%s", got, logs.String())
	}

	// The list cannot be written: no acknowledgement.
	bad := filepath.Join(home, store.DoNotCallFileName)
	if err := os.Rename(bad, bad+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(bad, 0o700); err != nil {
		t.Fatal(err)
	}
	if got := send("+14155550134", "do_not_call"); got != http.StatusServiceUnavailable {
		t.Errorf("an opt-out the list cannot take: answered %d, want 503", got)
	}
	os.Remove(bad)
	if err := os.Rename(bad+".away", bad); err != nil {
		t.Fatal(err)
	}
	if got := send("+14155550134", "do_not_call"); got != 200 {
		t.Errorf("the service's retry: answered %d", got)
	}
	if on := store.OnDoNotCall(entries()); len(on) != 2 || on["+14155550134"].Number == "" {
		t.Errorf("after the retry: %v", on)
	}
	if err := stop(); err != nil {
		t.Errorf("listen: %v", err)
	}
}

// TestListenRecordsConversations: a call.answered delivery records a
// conversation for its number (read with the campaign's region) in the
// call starts in CALLRUN_HOME before it is answered 200; its retry
// records nothing more; call.started, and call.ended with a duration of
// 0, record none (a call.ended that does not say so does: failing
// closed, TestRegFHoldsAfterAContactOnlyDelivery); a
// conversations file that cannot be written gets 503, so the service
// sends it again, and the retry records it.
func TestListenRecordsConversations(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	t.Setenv("CALLRUN_HOME", home)
	path := writeListenCampaign(t, dir, "spring")
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, append(b, "region: US\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs e2eBuffer
	base, stop := startListen(t, &logs, path)
	hook := base + "/callrun/spring/" + hookSecret
	send := func(event, phone string, more ...string) int {
		t.Helper()
		form := url.Values{"event": {event}, "phone_number": {phone}}
		for i := 0; i+1 < len(more); i += 2 {
			form.Set(more[i], more[i+1])
		}
		resp, err := http.PostForm(hook, form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	starts := store.OpenCallStartsFile(home)
	talked := func() map[string]time.Time {
		t.Helper()
		m, err := starts.Conversed(context.Background(), time.Now().Add(-time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, ev := range []string{"call.started", "call.ended"} {
		if got := send(ev, "(415) 555-0132", "duration", "0"); got != 200 || len(talked()) != 0 {
			t.Fatalf("%s: answered %d, conversations %v; want none", ev, got, talked())
		}
	}
	if got := send("call.answered", "(415) 555-0132"); got != 200 {
		t.Fatalf("call.answered: answered %d", got)
	}
	// Acknowledged, so recorded already: no waiting.
	if m := talked(); len(m) != 1 || time.Since(m["+14155550132"]) > time.Minute {
		t.Fatalf("after call.answered: %v", m)
	}
	if got := send("call.answered", "(415) 555-0132"); got != 200 {
		t.Errorf("its retry: answered %d", got)
	}
	if cs, err := starts.Conversations(context.Background(), "+14155550132"); err != nil || len(cs) != 1 || cs[0].Campaign != "spring" {
		t.Errorf("after the retry: %+v, %v; want one conversation, of spring", cs, err)
	}

	bad := filepath.Join(home, store.ConversationsFileName)
	if err := os.Rename(bad, bad+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(bad, 0o700); err != nil {
		t.Fatal(err)
	}
	if got := send("call.answered", "+14155550133"); got != http.StatusServiceUnavailable {
		t.Errorf("a conversation the file cannot take: answered %d, want 503", got)
	}
	os.Remove(bad)
	if err := os.Rename(bad+".away", bad); err != nil {
		t.Fatal(err)
	}
	if got := send("call.answered", "+14155550133"); got != 200 {
		t.Errorf("the service's retry: answered %d", got)
	}
	if m := talked(); len(m) != 2 || m["+14155550133"].IsZero() {
		t.Errorf("after the retry: %v", m)
	}
	if err := stop(); err != nil {
		t.Errorf("listen: %v", err)
	}
}

// optOutListen starts listen in process on a campaign of its own, in a
// CALLRUN_HOME of its own, whose outcomes.opt_out is the documentation's
// {field: disposition, values: [do_not_call, opted_out]}, and returns a
// function that posts a body to its hook (with the Content-Type and
// Content-Encoding given, when not "") and returns the answer's status,
// and one that returns the numbers on the do-not-call list.
func optOutListen(t *testing.T) (send func(ctype, encoding string, body []byte) int, listed func() map[string]store.DoNotCallEntry) {
	t.Helper()
	return optOutListenWith(t, "  opt_out: {field: disposition, values: [do_not_call, opted_out]}\n")
}

// listenCampaign writes the spring campaign (writeListenCampaign), with
// extra after its outcomes: block (more of its keys, indented, then the
// campaign's), in a directory of its own under a CALLRUN_HOME of its own,
// and starts listen on it: the directory, the home, the campaign file,
// listen's base URL, its log and how to stop it.
func listenCampaign(t *testing.T, extra string) (dir, home, path, base string, logs *e2eBuffer, stop func() error) {
	t.Helper()
	dir = t.TempDir()
	home = filepath.Join(dir, "home")
	t.Setenv("CALLRUN_HOME", home)
	path = writeListenCampaign(t, dir, "spring")
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, append(b, extra...), 0o644); err != nil {
		t.Fatal(err)
	}
	logs = &e2eBuffer{}
	base, stop = startListen(t, logs, path)
	return dir, home, path, base, logs, stop
}

// postHook posts the JSON body to the spring campaign's outcomes path at
// listen's base URL, and fails the test unless listen answers 200.
func postHook(t *testing.T, base, body string) {
	t.Helper()
	resp, err := http.Post(base+"/callrun/spring/"+hookSecret, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("listen answered %d to %s", resp.StatusCode, body)
	}
}

// optOutListenWith is optOutListen with the campaign's outcomes: block
// ending in optOut (its opt_out: line, or nothing).
func optOutListenWith(t *testing.T, optOut string) (send func(ctype, encoding string, body []byte) int, listed func() map[string]store.DoNotCallEntry) {
	t.Helper()
	_, home, _, base, logs, stop := listenCampaign(t, optOut+"region: US\n")
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("listen: %v", err)
		}
		if t.Failed() {
			t.Logf("listen's log:\n%s", logs.String())
		}
	})
	hook := base + "/callrun/spring/" + hookSecret
	c := &http.Client{Timeout: 10 * time.Second}
	send = func(ctype, encoding string, body []byte) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, hook, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		if encoding != "" {
			req.Header.Set("Content-Encoding", encoding)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	listed = func() map[string]store.DoNotCallEntry {
		t.Helper()
		es, err := store.OpenDoNotCallFile(home).Entries(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return store.OnDoNotCall(es)
	}
	return send, listed
}

// gzipBody is body compressed with gzip.
func gzipBody(t testing.TB, body []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(body); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestListenOptOutBodiesAsSent: an opt-out whose body a sender sent
// otherwise than its type says is read all the same, and its number is on
// the do-not-call list once it is answered 200: JSON sent as a form (a
// common misconfiguration), JSON with a UTF-8 byte order mark and no
// Content-Type, and gzip bodies (Content-Encoding: gzip), form and JSON.
// A gzip bomb is refused 413, and nothing of it is listed.
func TestListenOptOutBodiesAsSent(t *testing.T) {
	const number = "+442079460123"
	js := []byte(`{"event":"call.ended","data":{"phone_number":"+442079460123","disposition":"do_not_call"}}`)
	form := []byte("event=call.ended&phone_number=%2B442079460123&disposition=do_not_call")
	for _, c := range []struct {
		name, ctype, encoding string
		body                  []byte
	}{
		{"JSON sent as a form", "application/x-www-form-urlencoded", "", js},
		{"JSON with a BOM and no type", "", "", append([]byte("\xef\xbb\xbf"), js...)},
		{"a gzip form", "application/x-www-form-urlencoded", "gzip", gzipBody(t, form)},
		{"gzip JSON", "application/json", "gzip", gzipBody(t, js)},
		{"gzip JSON sent as a form", "application/x-www-form-urlencoded", "gzip", gzipBody(t, js)},
	} {
		t.Run(c.name, func(t *testing.T) {
			send, listed := optOutListen(t)
			if got := send(c.ctype, c.encoding, c.body); got != http.StatusOK {
				t.Fatalf("answered %d, want 200", got)
			}
			if on := listed(); len(on) != 1 || on[number].Number != number {
				t.Errorf("the do-not-call list holds %v, want %s alone", on, number)
			}
		})
	}
	t.Run("a gzip bomb", func(t *testing.T) {
		send, listed := optOutListen(t)
		bomb := gzipBody(t, append(append([]byte(nil), form...), make([]byte, 64<<20)...)) // 64 MiB in 64 KiB
		if got := send("application/x-www-form-urlencoded", "gzip", bomb); got != http.StatusRequestEntityTooLarge {
			t.Errorf("answered %d, want 413", got)
		}
		if on := listed(); len(on) != 0 {
			t.Errorf("the do-not-call list holds %v, want nothing", on)
		}
	})
}

// TestListenOptOutWithoutMapping: a campaign whose outcomes: names no
// opt_out reads the disposition for the words services write ("dnc",
// "do_not_call", "Opted Out"), rather than drop every opt-out.
func TestListenOptOutWithoutMapping(t *testing.T) {
	const number = "+442079460123"
	send, listed := optOutListenWith(t, "")
	for _, body := range []string{"event=call.ended&phone_number=%2B442079460123&disposition=completed", "event=call.ended&phone_number=%2B442079460123&disposition=dnc"} {
		if got := send("application/x-www-form-urlencoded", "", []byte(body)); got != http.StatusOK {
			t.Fatalf("%s: answered %d, want 200", body, got)
		}
	}
	if on := listed(); len(on) != 1 || on[number].Number != number {
		t.Errorf("the do-not-call list holds %v, want %s alone", on, number)
	}
}

// TestListenOptOutByItsFlag: a delivery whose field says do not call as
// a sheet's flag column would (HighLevel's ContactDndUpdate, an account
// field the agent set) is an opt-out whatever outcomes.opt_out names, and
// whether it names one or not: its number is on the do-not-call list
// before the 200. A DND of e-mails alone puts nothing there.
func TestListenOptOutByItsFlag(t *testing.T) {
	const number = "+442079460123"
	const hl = `{"type":"ContactDndUpdate","locationId":"ve9EPM428h8vShlRW1KT","id":"nmFmQEsNgz6AVpgLVUJ0","phone":"+442079460123","dnd":false,` +
		`"dndSettings":{"Call":{"status":"%s","message":"","code":""},"Email":{"status":"%s","message":"","code":""}}}`
	for _, c := range []struct {
		name, body string
		opts       bool
	}{
		{"HighLevel, calls", fmt.Sprintf(hl, "active", "inactive"), true},
		{"HighLevel, e-mails", fmt.Sprintf(hl, "inactive", "active"), false},
		{"an account field", `{"event":"call.ended","call_id":"c-9","phone_number":"+442079460123","disposition":"completed","do_not_call":"Yes"}`, true},
	} {
		for _, mapping := range []string{"", "  opt_out: {field: outcome, values: [unsubscribe]}\n"} {
			t.Run(c.name+", "+strings.TrimSpace(mapping), func(t *testing.T) {
				send, listed := optOutListenWith(t, mapping)
				if got := send("application/json", "", []byte(c.body)); got != http.StatusOK {
					t.Fatalf("answered %d, want 200", got)
				}
				on := listed()
				switch {
				case c.opts && (len(on) != 1 || on[number].Number != number):
					t.Errorf("the do-not-call list holds %v, want %s alone", on, number)
				case !c.opts && len(on) != 0:
					t.Errorf("the do-not-call list holds %v, want nothing", on)
				}
			})
		}
	}
}

// TestListenOptOutByTranscript: a call whose status says only completed,
// but whose person asked on it not to be called again (a user's turn of
// Retell's transcript_object), puts the number on the do-not-call list
// before the 200, and listen's log names the field and the turn, never the
// words said; the same call where only the agent offers the list, as an
// artificial voice must, puts nothing there. Such an opt-out whose number
// does not read is held, as any is.
func TestListenOptOutByTranscript(t *testing.T) {
	const number = "+442079460123"
	const retell = `{"event":"call_ended","call":{"call_id":"c-%d","to_number":"+442079460123","call_status":"ended","disconnection_reason":"user_hangup",` +
		`"transcript_object":[{"role":"agent","content":"Say stop to be added to our do not call list.","words":[]},{"role":"user","content":"%s","words":[]}]}}`
	_, home, _, base, logs, stop := listenCampaign(t, "region: US\n")
	defer stop()
	send := func(body string) { t.Helper(); postHook(t, base, body) }
	listed := func() map[string]store.DoNotCallEntry {
		es, err := store.OpenDoNotCallFile(home).Entries(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return store.OnDoNotCall(es)
	}
	send(fmt.Sprintf(retell, 1, "Sure, call me back tomorrow."))
	if on := listed(); len(on) != 0 {
		t.Errorf("only the agent offered the list: the do-not-call list holds %v", on)
	}
	send(fmt.Sprintf(retell, 2, "Please stop calling me, ever."))
	if on := listed(); len(on) != 1 || on[number].Number != number {
		t.Errorf("the person asked: the do-not-call list holds %v, want %s alone", on, number)
	}
	if log := logs.String(); !strings.Contains(log, `"field":"call.transcript_object[1]"`) || strings.Contains(log, "stop calling me") {
		t.Errorf("listen's log names no turn, or the words said:\n%s", log)
	}
	// Whose number cannot be read: held, as any opt-out so.
	send(strings.Replace(fmt.Sprintf(retell, 3, "Take me off your list."), `"to_number":"+442079460123",`, "", 1))
	if held, err := store.OpenDoNotCallFile(home).Held(context.Background()); err != nil || len(held) != 1 {
		t.Errorf("an opt-out said on a call whose number does not read: held %+v, %v; want one hold", held, err)
	}
}

// TestListenOptOutInALongCall: an opt-out said at the end of a long call,
// in a delivery of Retell's shape whose transcript is also given word by
// word with timings (transcript_object and transcript_with_tool_calls),
// over 1 MiB in all, is taken and its number put on the do-not-call list
// before the 200; a body over apiclient.MaxDeliveryBody is 413 and lists
// nothing.
func TestListenOptOutInALongCall(t *testing.T) {
	const number = "+442079460123"
	call := func(minutes int) []byte {
		// About 150 words a minute, the agent and the person in turn.
		type word struct {
			Word  string  `json:"word"`
			Start float64 `json:"start"`
			End   float64 `json:"end"`
		}
		type turn struct {
			Role    string `json:"role"`
			Content string `json:"content"`
			Words   []word `json:"words"`
		}
		var turns []turn
		at := 0.0
		say := func(role, content string) {
			tr := turn{Role: role, Content: content}
			for _, w := range strings.Fields(content) {
				tr.Words = append(tr.Words, word{w, at, at + 0.3})
				at += 0.4
			}
			turns = append(turns, tr)
		}
		for i := range minutes * 10 {
			say("agent", fmt.Sprintf("Let me go over item %d of your plan: the terms, the price and when it renews each year.", i))
			say("user", "Right, I see, and what about the one after that, is it much the same?")
		}
		say("agent", "Is there anything else I can help you with today?")
		say("user", "Yes. Please don't call me again.")
		var text strings.Builder
		for _, tr := range turns {
			fmt.Fprintf(&text, "%s: %s\n", map[string]string{"agent": "Agent", "user": "User"}[tr.Role], tr.Content)
		}
		b, err := json.Marshal(map[string]any{"event": "call_ended", "call": map[string]any{
			"call_id": "call_long", "to_number": number, "call_status": "ended", "disconnection_reason": "user_hangup",
			"transcript": text.String(), "transcript_object": turns, "transcript_with_tool_calls": turns, "scrubbed_transcript_with_tool_calls": turns,
		}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	long := call(90)
	if len(long) <= 1<<20 || len(long) > 8<<20 {
		t.Fatalf("the long call's delivery is %d bytes: want 1 to 8 MiB", len(long))
	}
	send, listed := optOutListen(t)
	if got := send("application/json", "", long); got != http.StatusOK {
		t.Fatalf("a delivery of %d bytes answered %d, want 200", len(long), got)
	}
	if on := listed(); len(on) != 1 || on[number].Number != number {
		t.Errorf("the person asked at the end of a %d-byte delivery: the do-not-call list holds %v, want %s alone", len(long), on, number)
	}
	send, listed = optOutListen(t)
	tooLong := call(90 * (apiclient.MaxDeliveryBody/len(long) + 1))
	if got := send("application/json", "", tooLong); got != http.StatusRequestEntityTooLarge {
		t.Errorf("a delivery of %d bytes answered %d, want 413", len(tooLong), got)
	}
	if on := listed(); len(on) != 0 {
		t.Errorf("the do-not-call list holds %v, want nothing", on)
	}
}

// TestListenOptOutByVapiLiveTranscript: Vapi's live transcript messages,
// one turn each with its speaker in message.role beside it, reach listen
// as the call goes: the assistant's offer of the list and the user's
// partial "Stop" put nothing on the do-not-call list; the user's final
// request puts the number there before the 200, and the log names the
// field, never the words said.
func TestListenOptOutByVapiLiveTranscript(t *testing.T) {
	const number = "+14155550132"
	const live = `{"message":{"timestamp":%d,"type":"transcript","role":%q,"transcriptType":%q,"transcript":%q,` +
		`"call":{"id":"9a8b7c6d","type":"outboundPhoneCall","status":"in-progress","customer":{"number":"+14155550132"}},` +
		`"customer":{"number":"+14155550132"},"phoneNumber":{"id":"p1","number":"+14155550100"}}}`
	_, home, _, base, logs, stop := listenCampaign(t, "region: US\n")
	defer stop()
	listed := func() map[string]store.DoNotCallEntry {
		es, err := store.OpenDoNotCallFile(home).Entries(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return store.OnDoNotCall(es)
	}
	postHook(t, base, fmt.Sprintf(live, 1740848586000, "assistant", "final", "Hi Ada. If you'd rather not get these calls, say stop and we'll put you on our do not call list."))
	postHook(t, base, fmt.Sprintf(live, 1740848587000, "user", "partial", "Stop"))
	if on := listed(); len(on) != 0 {
		t.Errorf("the assistant's offer and a partial turn: the do-not-call list holds %v", on)
	}
	postHook(t, base, fmt.Sprintf(live, 1740848589000, "user", "final", "Please don't call me again."))
	if on := listed(); len(on) != 1 || on[number].Number != number {
		t.Errorf("the user asked: the do-not-call list holds %v, want %s alone", on, number)
	}
	if log := logs.String(); !strings.Contains(log, `"field":"message.transcript"`) || strings.Contains(log, "call me again") {
		t.Errorf("listen's log names no field, or the words said:\n%s", log)
	}
}

// TestListenOptOutValuesAsSent: an opt-out value is matched as senders
// vary it, and every value a delivery gives counts: "Do Not Call" and
// "do-not-call" are do_not_call; a JSON array's strings each; each value
// of a form field sent more than once. Each puts its number on the
// do-not-call list before the 200; a disposition that is none of the
// values, however written, puts nothing.
func TestListenOptOutValuesAsSent(t *testing.T) {
	const number = "+442079460123"
	const ctForm, ctJSON = "application/x-www-form-urlencoded", "application/json"
	for _, c := range []struct {
		name, ctype, body string
		opts              bool
	}{
		{"Do Not Call", ctJSON, `{"event":"call.ended","data":{"phone_number":"+442079460123","disposition":"Do Not Call"}}`, true},
		{"do-not-call", ctJSON, `{"event":"call.ended","data":{"phone_number":"+442079460123","disposition":"do-not-call"}}`, true},
		{"a JSON array", ctJSON, `{"event":"call.ended","data":{"phone_number":"+442079460123","disposition":["do_not_call"]}}`, true},
		{"a JSON array, second", ctJSON, `{"event":"call.ended","data":{"phone_number":"+442079460123","disposition":["completed","do_not_call"]}}`, true},
		{"a repeated form field", ctForm, "event=call.ended&phone_number=%2B442079460123&disposition=completed&disposition=do_not_call", true},
		{"Opted Out in a form", ctForm, "event=call.ended&phone_number=%2B442079460123&disposition=Opted+Out", true},
		{"another disposition", ctForm, "event=call.ended&phone_number=%2B442079460123&disposition=completed&disposition=Call-Back", false},
		{"another in an array", ctJSON, `{"event":"call.ended","data":{"phone_number":"+442079460123","disposition":["completed","not do_not_call"]}}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			send, listed := optOutListen(t)
			if got := send(c.ctype, "", []byte(c.body)); got != http.StatusOK {
				t.Fatalf("answered %d, want 200", got)
			}
			on := listed()
			switch {
			case c.opts && (len(on) != 1 || on[number].Number != number):
				t.Errorf("the do-not-call list holds %v, want %s alone", on, number)
			case !c.opts && len(on) != 0:
				t.Errorf("the do-not-call list holds %v, want nothing", on)
			}
		})
	}
}
