package campaign

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSignalWordsTable: signalwords.yaml holds every list for each
// language a country column may be written in, and reads.
func TestSignalWordsTable(t *testing.T) {
	w, err := readSignalWords(signalWordsYAML)
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range signalLanguages {
		l, ok := w.languages[code]
		if !ok {
			t.Errorf("no words for %q", code)
			continue
		}
		v := reflect.ValueOf(l)
		for i := range v.NumField() {
			if v.Field(i).Len() == 0 {
				t.Errorf("%s has no %s", code, v.Type().Field(i).Tag.Get("yaml"))
			}
			for _, e := range v.Field(i).Interface().([]string) {
				if foldString(e) == "" {
					t.Errorf("%s %s: %q has no letter or digit", code, v.Type().Field(i).Tag.Get("yaml"), e)
				}
			}
		}
	}
	if _, err := readSignalWords([]byte("en: {yes: [yes]}\n")); err == nil || !strings.Contains(err.Error(), "no words for language") {
		t.Errorf("a table without every language: %v", err)
	}
}

// TestSignalWordsConflicts: a word that reads as yes in one language and
// as no (or a withdrawal) in another reads as neither, as a flag and as
// consent. The table holds one such word today: E, Turkish evet and
// Finnish ei. A word added to the table that reads two ways fails this
// test: take it out, or add it here knowing that it reads as neither.
func TestSignalWordsConflicts(t *testing.T) {
	var got []string
	for k := range words().conflicts {
		got = append(got, k)
	}
	slices.Sort(got)
	if want := []string{"e"}; !slices.Equal(got, want) {
		t.Errorf("words read two ways: %v, want %v (%v)", got, want, words().conflicts)
	}
	for _, cell := range []string{"E", "e", " E "} {
		if says := readFlagCell(cell); says != saysUnclear {
			t.Errorf("flag %q reads %v, want neither yes nor no", cell, says)
		}
		if ev, why := ReadConsent(cell, "TR", time.Now()); ev != "" || !strings.Contains(why, "no in fi; yes in tr") {
			t.Errorf("consent %q reads %q (%s), want no evidence, saying why", cell, ev, why)
		}
	}
	// The conflict guard itself: a table whose yes in one language is
	// another's no reads the word as neither.
	w, err := readSignalWords([]byte(strings.Replace(string(signalWordsYAML), `no: ["nein",`, `no: ["nein", "oui",`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := w.flag["oui"]; ok || w.conflicts["oui"] != "no in de; yes in fr" {
		t.Errorf("oui as yes in fr and no in de: flag %v, conflict %q", w.flag["oui"], w.conflicts["oui"])
	}
}

// TestSignalWordsEveryLanguage: each language's words read as the table
// says, as cells and in headers, one language at a time.
func TestSignalWordsEveryLanguage(t *testing.T) {
	w := words()
	now := time.Now()
	for _, code := range signalLanguages {
		l := w.languages[code]
		for _, y := range l.Yes {
			if readFlagCell(y) != saysYes && w.conflicts[foldString(y)] == "" {
				t.Errorf("%s: flag %q does not read yes", code, y)
			}
			if ev, _ := ReadConsent(strings.ToUpper(y), "", now); ev != "yes" && w.conflicts[foldString(y)] == "" {
				t.Errorf("%s: consent %q does not read yes", code, y)
			}
		}
		for _, n := range l.No {
			if readFlagCell(n) != saysNothing && w.conflicts[foldString(n)] == "" {
				t.Errorf("%s: flag %q does not read no", code, n)
			}
			if ev, _ := ReadConsent(n, "", now); ev != "" {
				t.Errorf("%s: consent %q reads as evidence %q", code, n, ev)
			}
		}
		for _, g := range l.Granted {
			if ev, _ := ReadConsent(g, "", now); ev != "yes" {
				t.Errorf("%s: consent %q does not read yes", code, g)
			}
			// A word of consent given read whole must not hide a
			// withdrawal or a do-not-call phrase: the cell would read
			// as a yes where its words withdraw.
			if w.withdraws(g) {
				t.Errorf("%s: consent %q holds a withdrawal or a do-not-call phrase", code, g)
			}
		}
		for _, p := range l.Pending {
			if ev, _ := ReadConsent(p, "", now); ev != "" || ConsentRevoked(p) || readScopeCell(scopeStatus, p, "").status != saysNo {
				t.Errorf("%s: pending %q reads as evidence %q, as withdrawn, or as no status", code, p, ev)
			}
		}
		// A refusal stops the calls as a withdrawal does, and is named a
		// refusal; a consent only not given is no evidence, and no
		// refusal.
		for _, d := range l.Denied {
			if ev, _ := ReadConsent(d, "", now); ev != "" || !ConsentRevoked(d) || !consentRefused(d) || readScopeCell(scopeStatus, d, "").status != saysWithdrawn {
				t.Errorf("%s: refusal %q reads as evidence %q, or not as a refusal that withdraws", code, d, ev)
			}
		}
		for _, d := range l.NotGiven {
			if ev, _ := ReadConsent(d, "", now); ev != "" || ConsentRevoked(d) || readScopeCell(scopeStatus, d, "").status != saysNo {
				t.Errorf("%s: consent not given %q reads as evidence %q, as withdrawn, or as no status", code, d, ev)
			}
		}
		for _, x := range l.Withdrawn {
			if !ConsentRevoked(x) {
				t.Errorf("%s: consent %q does not read as withdrawn", code, x)
			}
		}
		for _, p := range l.DoNotCall {
			if readFlagCell(p) != saysYes {
				t.Errorf("%s: flag %q does not read yes", code, p)
			}
			if says, _ := readValueCell("VIP ::: "+p, nil); says != saysYes {
				t.Errorf("%s: the tag %q does not say do not call", code, p)
			}
			if says, _ := readValueCell(p+" until May", nil); says != saysNothing || !mentionsPhrase(p+" until May", nil) {
				t.Errorf("%s: %q in free text is no mention", code, p)
			}
			if !ConsentRevoked(p) {
				t.Errorf("%s: consent %q does not read as withdrawn", code, p)
			}
			if !DoNotCallHeader(p) {
				t.Errorf("%s: header %q is no do-not-call flag", code, p)
			}
			if d := l.Dates[0]; DoNotCallHeader(p + " " + d) {
				t.Errorf("%s: header %q, about the flag, is taken for it", code, p+" "+d)
			}
		}
		call, text, other := l.Calls[0], l.Texts[0], l.OtherChannels[0]
		// A phone line's word names calls in a channel cell alone, and
		// beside texts or another channel names that one.
		for _, x := range l.Lines {
			if len(foldWords(x)) != 1 {
				t.Errorf("%s: line %q is not one word", code, x)
			}
			if readChannelCell(x) != channelCalls || readChannelCell(x+" "+text) != channelTexts || readChannelCell(x+" "+other) != channelOther {
				t.Errorf("%s: channel %q (alone, with %s, with %s) reads as %d, %d, %d", code, x, text, other,
					readChannelCell(x), readChannelCell(x+" "+text), readChannelCell(x+" "+other))
			}
			// Beside a fax, the line is still named: "Tel/Fax".
			for _, f := range l.Fax {
				if got := readChannelCell(x + "/" + f); got != channelCalls {
					t.Errorf("%s: channel %q reads as %d, not calls", code, x+"/"+f, got)
				}
			}
		}
		// A fax alone names no calls.
		for _, f := range l.Fax {
			if len(foldWords(f)) != 1 {
				t.Errorf("%s: fax %q is not one word", code, f)
			}
			if got := readChannelCell(f); got == channelCalls || readChannelCell(f+" "+text) != channelTexts {
				t.Errorf("%s: channel %q reads as %d", code, f, got)
			}
		}
		// namesCalls: an entry that names calls itself ("NIX-Telefon") is
		// of calls whatever channel a header also names.
		namesCalls := func(e string) bool { return readHeaderWords(e).has(w.calls) }
		for _, b := range l.Blocked {
			if !DoNotCallHeader(b) || !DoNotCallHeader(b+" "+call) || !DoNotCallHeader(text+" "+b) {
				t.Errorf("%s: header %q (alone, of calls or of texts) is no do-not-call flag", code, b)
			}
			if DoNotCallHeader(other+" "+b) && !namesCalls(b) {
				t.Errorf("%s: header %q, of another channel, is taken for a do-not-call flag", code, other+" "+b)
			}
		}
		for _, o := range l.OptOut {
			if !DoNotCallHeader(o+" "+call) || !DoNotCallHeader(text+" "+o) {
				t.Errorf("%s: header %q of calls or of texts is no do-not-call flag", code, o)
			}
			// Alone, an opt-out is a flag only where the table says so
			// (do_not_call, or blocked: "Opt Out" names no channel, but
			// "Unsubscribe" alone is a link's header); of e-mail, never.
			alone := DoNotCallHeader(o) && !slices.Contains(l.DoNotCall, o) && !slices.Contains(l.Blocked, o)
			if alone || DoNotCallHeader(other+" "+o) {
				t.Errorf("%s: header %q (alone or of %s) is taken for a do-not-call flag", code, o, other)
			}
		}
		for _, c := range l.Consent {
			if !isConsentHeader(c) || !isConsentHeader(c+" "+call) || !isConsentHeader(c+" "+l.Dates[0]) {
				t.Errorf("%s: header %q (alone, of calls, with a date) is no consent to be called", code, c)
			}
			if !namesCalls(c) && (isConsentHeader(c+" "+other) || consentChannel(c+" "+other) != "e-mails" || consentChannel(text+" "+c) != "texts") {
				t.Errorf("%s: %q of e-mails or texts: taken for consent to be called, or not told as the other channel", code, c)
			}
			if isConsentHeader(c+" "+l.Details[0]) || isConsentHeader(l.Negations[0]+" "+c) {
				t.Errorf("%s: %q with %q or %q is taken for consent", code, c, l.Details[0], l.Negations[0])
			}
		}
		for _, x := range l.Lists {
			if !isListHeader(x) {
				t.Errorf("%s: header %q is no column of labels", code, x)
			}
		}
	}
}

// TestReadValueCell: a cell of labels says do not call when the whole
// cell, or one whole tag, is a do-not-call phrase (or one of the
// column's own values), in any case and however it is spelt out; free
// text that holds one is a mention (mentionsPhrase).
func TestReadValueCell(t *testing.T) {
	extra := map[string]bool{foldString("Kein Kontakt erwünscht"): true}
	for _, tc := range []struct {
		cell string
		says cellSays
		tag  string
	}{
		{"* myContacts ::: Do not call", saysYes, " Do not call"},
		{"Do Not Call ::: * myContacts", saysYes, "Do Not Call "},
		{"lead, DNC", saysYes, " DNC"},
		{"lead;do-not-call;vip", saysYes, "do-not-call"},
		{"VIP | DoNotCall", saysYes, " DoNotCall"},
		{"vip\nnicht anrufen", saysYes, "nicht anrufen"},
		{"NE PAS APPELER", saysYes, "NE PAS APPELER"},
		{"Älä soita", saysYes, "Älä soita"},
		{"kein kontakt erwünscht", saysYes, "kein kontakt erwünscht"},
		{"do not call before 10am", saysMention, ""},
		{"Customer said: Do not call!", saysMention, ""},
		{"Called: do not call again?", saysMention, ""},
		{"Kein Kontakt erwünscht bis Mai", saysMention, ""},
		{"* myContacts ::: Customers", saysNothing, ""},
		{"lead,spring promo", saysNothing, ""},
		{"Called 3x, no answer", saysNothing, ""},
		{"", saysNothing, ""},
		{"Status: active", saysNothing, ""},
	} {
		says, tag := readValueCell(tc.cell, extra)
		if says == saysNothing && mentionsPhrase(tc.cell, extra) {
			says = saysMention
		}
		if says != tc.says || tag != tc.tag {
			t.Errorf("readValueCell(%q) = %v, %q; want %v, %q", tc.cell, says, tag, tc.says, tc.tag)
		}
	}
}

// TestSignalFold: the table's words and the cells are folded alike:
// case, accents, Polish ł, Danish ø, Turkish ı and İ, German ß.
func TestSignalFold(t *testing.T) {
	for in, want := range map[string]string{
		"Nicht stören": "nichtstoren", "FAŁSZ": "falsz", "Hayır": "hayir", "İZİN": "izin", "Særlig": "saerlig",
		"Straße": "strasse", "Ø": "o", "Do-Not-Call": "donotcall", "do not call": "donotcall", "1.0": "10",
	} {
		if got := foldString(in); got != want {
			t.Errorf("foldString(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string][]string{
		"DoNotCall": {"do", "not", "call"}, "SMS_BLACKLISTED": {"sms", "blacklisted"}, "HasOptedOutOfPhone": {"has", "opted", "out", "of", "phone"},
		"DNCFlag": {"dnc", "flag"}, "Phone 1 - Label": {"phone", "1", "label"}, "Don't Call": {"don't", "call"},
	} {
		if got := foldWords(in); !slices.Equal(got, want) && !(in == "Don't Call" && slices.Equal(got, []string{"dont", "call"})) {
			t.Errorf("foldWords(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestAsciiWordsAsFoldWords: the words of an ASCII cell are split alike
// by the reader of every row (asciiWords) and by the one of any text
// (foldWords).
func TestAsciiWordsAsFoldWords(t *testing.T) {
	for _, s := range []string{"do not call before 10am", "DoNotCall", "DNCFlag", "SMS_BLACKLISTED", "Don't call!", "lead,spring promo",
		"HasOptedOutOfPhone", "a1B2c", "  ", "x", "ABCDef", "call-me-maybe", "Ne pas appeler ::: VIP"} {
		var got []string
		asciiWords(s, func(i, j int) bool {
			if k := foldString(s[i:j]); k != "" {
				got = append(got, k)
			}
			return true
		})
		if want := foldWords(s); !slices.Equal(got, want) {
			t.Errorf("%q: asciiWords %q, foldWords %q", s, got, want)
		}
	}
	if asciiWords("Älä soita", func(int, int) bool { t.Error("asciiWords called fn on text that is not ASCII"); return true }) {
		t.Error("asciiWords read text that is not ASCII")
	}
}
