package main

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
// records nothing more; call.started and call.ended record none; a
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
	send := func(event, phone string) int {
		t.Helper()
		resp, err := http.PostForm(hook, url.Values{"event": {event}, "phone_number": {phone}})
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
		if got := send(ev, "(415) 555-0132"); got != 200 || len(talked()) != 0 {
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
