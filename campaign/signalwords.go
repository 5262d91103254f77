package campaign

import (
	_ "embed"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
	"gopkg.in/yaml.v3"
)

// signalWordsYAML is the table of the words of do-not-call and consent
// signals, per language: see the file's own comment for what each list
// is.
//
//go:embed signalwords.yaml
var signalWordsYAML []byte

// signalLanguage is one language's lists in signalwords.yaml.
type signalLanguage struct {
	Yes           []string `yaml:"yes"`
	No            []string `yaml:"no"`
	NotAllowed    []string `yaml:"not_allowed"`
	Allowed       []string `yaml:"allowed"`
	DoNotCall     []string `yaml:"do_not_call"`
	Blocked       []string `yaml:"blocked"`
	OptOut        []string `yaml:"opt_out"`
	Calls         []string `yaml:"calls"`
	Lines         []string `yaml:"lines"`
	Fax           []string `yaml:"fax"`
	Texts         []string `yaml:"texts"`
	OtherChannels []string `yaml:"other_channels"`
	Consent       []string `yaml:"consent"`
	OptIn         []string `yaml:"opt_in"`
	Granted       []string `yaml:"granted"`
	Denied        []string `yaml:"denied"`
	NotGiven      []string `yaml:"not_given"`
	Withdrawn     []string `yaml:"withdrawn"`
	Lists         []string `yaml:"lists"`
	Details       []string `yaml:"details"`
	Notes         []string `yaml:"notes"`
	Dates         []string `yaml:"dates"`
	Negations     []string `yaml:"negations"`
	Expiry        []string `yaml:"expiry"`
	Suppression   []string `yaml:"suppression"`
	Channel       []string `yaml:"channel"`
	Pending       []string `yaml:"pending"`
	Status        []string `yaml:"status"`
	Captured      []string `yaml:"captured"`
}

// cellSays is what a cell of a signal column says.
type cellSays uint8

const (
	saysNothing   cellSays = iota // a flag's no, or a cell of labels with no do-not-call label
	saysYes                       // do not call (a flag's yes, a do-not-call label)
	saysNo                        // a consent cell's no
	saysWithdrawn                 // a consent cell's withdrawal, or its refusal ("Denied")
	saysUnclear                   // a flag cell that reads neither yes nor no
	saysMention                   // free text that holds a do-not-call phrase
)

// signalWords is signalwords.yaml, folded ([appendFold]) and merged over
// the languages for reading.
type signalWords struct {
	languages map[string]signalLanguage
	// flag reads a do-not-call flag cell: saysYes (a yes word, a
	// not_allowed word, a do_not_call phrase) or saysNothing (a no or
	// allowed word). consent reads a consent cell: saysYes, saysNo or
	// saysWithdrawn.
	flag, consent map[string]cellSays
	// conflicts are the words that read one way in one language and
	// another in another, with the languages that disagree: they read as
	// neither anywhere.
	conflicts map[string]string
	// phrases are the do_not_call phrases, folded; firstWords indexes
	// them by their first word, each as its words, for the free text
	// that mentions one.
	phrases    map[string]bool
	firstWords map[string][][]string
	// withdrawals indexes the withdrawn and opt_out entries, and
	// refusals the denied ones, as firstWords does the phrases, for a
	// consent cell of text that holds one ([ConsentRevoked],
	// [consentRefused]).
	withdrawals, refusals map[string][][]string
	// The header lists, folded, over every language, and lines and fax,
	// the words of a phone line and of a fax a consent's channel cell is
	// read by.
	dnc, blocked, optOut, notAllowed, calls, lines, fax, texts, other, consentHeader, optIn, withdrawnHeader, deniedHeader, lists, notes, details, dates,
	negations, expiry, suppression, channel, status, captured []string
}

// signalLanguages are the languages signalwords.yaml must hold: those
// whose country names a country_column: may be written in.
var signalLanguages = []string{"en", "fr", "de", "es", "pt", "it", "nl", "sv", "da", "no", "pl", "fi", "cs", "tr"}

// words returns the table, read once.
var words = sync.OnceValue(func() *signalWords {
	w, err := readSignalWords(signalWordsYAML)
	if err != nil {
		panic(fmt.Sprintf("campaign: signalwords.yaml: %v", err)) // the file is part of the build; its test reads it
	}
	return w
})

// readSignalWords reads and folds the table.
func readSignalWords(data []byte) (*signalWords, error) {
	var langs map[string]signalLanguage
	if err := yaml.Unmarshal(data, &langs); err != nil {
		return nil, err
	}
	for _, l := range signalLanguages {
		if _, ok := langs[l]; !ok {
			return nil, fmt.Errorf("no words for language %q", l)
		}
	}
	w := &signalWords{languages: langs, flag: map[string]cellSays{}, consent: map[string]cellSays{}, conflicts: map[string]string{},
		phrases: map[string]bool{}, firstWords: map[string][][]string{}, withdrawals: map[string][][]string{}, refusals: map[string][][]string{}}
	codes := slices.Sorted(maps.Keys(langs))
	// readings are, for each word of the cells of a table (flag or
	// consent), what it says in the languages that have it, and which.
	type readings map[string]map[cellSays][]string
	flag, consent := readings{}, readings{}
	addKey := func(r readings, k string, says cellSays, code string) {
		if r[k] == nil {
			r[k] = map[cellSays][]string{}
		}
		if !slices.Contains(r[k][says], code) {
			r[k][says] = append(r[k][says], code)
		}
	}
	add := func(r readings, list []string, says cellSays, code string) {
		for _, e := range list {
			addKey(r, foldString(e), says, code)
		}
	}
	// addPairs adds each of firsts followed by each of seconds: folded,
	// the two folded one after the other.
	addPairs := func(r readings, firsts, seconds []string, says cellSays, code string) {
		second := make([]string, len(seconds))
		for i, b := range seconds {
			second[i] = foldString(b)
		}
		for _, a := range firsts {
			first := foldString(a)
			for _, b := range second {
				addKey(r, first+b, says, code)
			}
		}
	}
	for _, code := range codes {
		l := langs[code]
		add(flag, l.Yes, saysYes, code)
		add(flag, l.NotAllowed, saysYes, code)
		add(flag, l.DoNotCall, saysYes, code)
		add(flag, l.No, saysNothing, code)
		add(flag, l.Allowed, saysNothing, code)
		add(consent, l.Yes, saysYes, code)
		add(consent, l.Granted, saysYes, code)
		add(consent, l.No, saysNo, code)
		// A refusal is the person's no to being asked: it stops the
		// calls to the number as a withdrawal does. A consent only not
		// given ("not given", "nicht erteilt") may be that nobody asked.
		add(consent, l.Denied, saysWithdrawn, code)
		add(consent, l.NotGiven, saysNo, code)
		add(consent, l.Pending, saysNo, code)
		add(consent, l.Withdrawn, saysWithdrawn, code)
		add(consent, l.OptOut, saysWithdrawn, code)
		add(consent, l.DoNotCall, saysWithdrawn, code)
		// A consent cell may put a yes, or the language's word for consent,
		// before its word of consent given ("Yes - confirmed", "Yes, PEWC",
		// "Zustimmung erteilt", "Consent: Yes"), and the word for consent
		// before a no, a refusal or a consent not yet given ("Zustimmung
		// nicht erteilt", "Consent - Declined"): read as the second word
		// says, a refusal as a withdrawal. Only one language's words are
		// put together, whole, in that order; a yes of one letter ("x",
		// "j") is not put before anything.
		// A cell that holds anything more, or a yes beside a no ("Yes? no",
		// "Yes - not confirmed"), is none of them.
		var yes []string
		for _, y := range l.Yes {
			if len(foldString(y)) > 1 {
				yes = append(yes, y)
			}
		}
		addPairs(consent, slices.Concat(yes, l.Consent), l.Granted, saysYes, code)
		addPairs(consent, l.Consent, l.Yes, saysYes, code)
		addPairs(consent, l.Consent, slices.Concat(l.No, l.NotGiven, l.Pending), saysNo, code)
		addPairs(consent, l.Consent, l.Denied, saysWithdrawn, code)
		for _, p := range slices.Concat(l.Withdrawn, l.OptOut) {
			if ws := foldWords(p); len(ws) > 0 {
				w.withdrawals[ws[0]] = append(w.withdrawals[ws[0]], ws)
			}
		}
		for _, p := range l.Denied {
			if ws := foldWords(p); len(ws) > 0 {
				w.refusals[ws[0]] = append(w.refusals[ws[0]], ws)
			}
		}
		for _, p := range l.DoNotCall {
			ws := foldWords(p)
			k := strings.Join(ws, "")
			if k == "" || w.phrases[k] {
				continue
			}
			w.phrases[k] = true
			w.firstWords[ws[0]] = append(w.firstWords[ws[0]], ws)
			if len(ws) > 1 {
				w.firstWords[k] = append(w.firstWords[k], []string{k}) // "DoNotCall" written as one word
			}
		}
		for _, h := range []struct {
			into *[]string
			list []string
		}{
			{&w.dnc, l.DoNotCall}, {&w.blocked, l.Blocked}, {&w.optOut, l.OptOut}, {&w.notAllowed, l.NotAllowed},
			{&w.calls, l.Calls}, {&w.lines, l.Lines}, {&w.fax, l.Fax}, {&w.texts, l.Texts}, {&w.other, l.OtherChannels}, {&w.consentHeader, l.Consent}, {&w.optIn, l.OptIn},
			{&w.withdrawnHeader, l.Withdrawn}, {&w.lists, l.Lists}, {&w.details, l.Details}, {&w.notes, l.Notes}, {&w.dates, l.Dates},
			{&w.negations, l.Negations}, {&w.deniedHeader, slices.Concat(l.Denied, l.NotGiven)}, {&w.expiry, l.Expiry}, {&w.suppression, l.Suppression},
			{&w.channel, l.Channel}, {&w.status, l.Status}, {&w.captured, l.Captured},
		} {
			for _, e := range h.list {
				if k := foldString(e); k != "" && !slices.Contains(*h.into, k) {
					*h.into = append(*h.into, k)
				}
			}
		}
	}
	// A word read two ways, in one language or two, reads as neither.
	settle := func(r readings, into map[string]cellSays) {
		for k, by := range r {
			if len(by) == 1 {
				for says := range by {
					into[k] = says
				}
				continue
			}
			var parts []string
			for says, codes := range by {
				parts = append(parts, fmt.Sprintf("%s in %s", saysWord(says), strings.Join(codes, ", ")))
			}
			sort.Strings(parts)
			w.conflicts[k] = strings.Join(parts, "; ")
		}
	}
	settle(flag, w.flag)
	settle(consent, w.consent)
	return w, nil
}

// saysWord names what a word of the table says, for the conflicts.
func saysWord(s cellSays) string {
	switch s {
	case saysYes:
		return "yes"
	case saysWithdrawn:
		return "a withdrawal"
	}
	return "no"
}

// appendFold appends s folded to dst: lower case, accents dropped (ł, ø,
// æ, œ, ß, ı and đ spelled as their plain letters), and only letters and
// digits kept. ASCII is folded without allocating: the contact reader
// folds a cell of each signal column of every row.
func appendFold(dst []byte, s string) []byte {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		for i := 0; i < len(s); i++ {
			switch c := s[i]; {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
				dst = append(dst, c)
			case 'A' <= c && c <= 'Z':
				dst = append(dst, c+'a'-'A')
			}
		}
		return dst
	}
	for _, r := range norm.NFD.String(s) {
		r = unicode.ToLower(r)
		switch r {
		case 'ł':
			r = 'l'
		case 'ø':
			r = 'o'
		case 'đ':
			r = 'd'
		case 'ı':
			r = 'i'
		case 'æ':
			dst = append(dst, "ae"...)
			continue
		case 'œ':
			dst = append(dst, "oe"...)
			continue
		case 'ß':
			dst = append(dst, "ss"...)
			continue
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			dst = utf8.AppendRune(dst, r)
		}
	}
	return dst
}

// foldString is appendFold into a new string.
func foldString(s string) string { return string(appendFold(nil, s)) }

// foldWords splits s into words (runs of letters and digits, and
// camelCase: "DoNotCall", "SMSOptOut") and folds each.
func foldWords(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if k := foldString(string(cur)); k != "" {
			out = append(out, k)
		}
		cur = cur[:0]
	}
	rs := []rune(s)
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r) && r != '\'' && r != '’' {
			flush()
			continue
		}
		if unicode.IsUpper(r) && len(cur) > 0 {
			prev := cur[len(cur)-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return out
}

// header is a column's header as the signal lists read it: its words,
// and its letters run together.
type header struct {
	words  []string
	joined string
}

func readHeaderWords(h string) header {
	ws := foldWords(h)
	return header{words: ws, joined: strings.Join(ws, "")}
}

// has reports whether the header holds an entry of list: an entry of
// five letters or more anywhere in its letters run together ("donotcall"
// in "HasOptedOutDoNotCall", "robinson" in "robinsonlist"), a shorter
// one, or one that begins other words ([wholeHeaderWords]), as a whole
// word ("dnc", "sms", "tag", "remove").
func (h header) has(list []string) bool {
	for _, e := range list {
		if len(e) >= 5 && !wholeHeaderWords[e] {
			if strings.Contains(h.joined, e) {
				return true
			}
		} else if slices.Contains(h.words, e) {
			return true
		}
	}
	return false
}

// isListHeader reports whether a header names a column of labels, tags,
// statuses, groups or lists ("Labels", "Tags", "Lead Status",
// "Schlagwörter"): a word of it is one of the table's lists words. The
// label of a numbered phone or e-mail of Google's and Outlook's exports
// ("Phone 1 - Label", "E-mail 2 - Type") is the kind of that number, not
// one.
func isListHeader(h string) bool {
	w, t := words(), readHeaderWords(h)
	numbered := slices.ContainsFunc(t.words, func(x string) bool { return strings.Trim(x, "0123456789") == "" })
	if numbered && (t.has(w.calls) || t.has(w.other)) {
		return false
	}
	return slices.ContainsFunc(t.words, func(x string) bool { return slices.Contains(w.lists, x) })
}

// readFlagCell reads a cell of a do-not-call flag column: saysYes,
// saysNothing (a no, or empty), or saysUnclear. The numbers 1 and 0 may be
// written 1.0 and 0.0 (pandas writes a 0/1 column with blanks so); a check
// mark (with or without the emoji variation selector) is a yes and an
// empty box a no; so is a date (the day the flag was set).
func readFlagCell(cell string) cellSays {
	c := strings.TrimSpace(cell)
	switch c {
	case "":
		return saysNothing
	case "1", "1.0":
		return saysYes
	case "0", "0.0":
		return saysNothing
	}
	switch strings.TrimRight(c, "\ufe0e\ufe0f") {
	case "✓", "✔", "☑", "✅", "☒", "✗", "✘":
		return saysYes
	case "☐":
		return saysNothing
	}
	var buf [64]byte
	k := appendFold(buf[:0], c)
	if len(k) == 0 {
		return saysUnclear
	}
	if says, ok := words().flag[string(k)]; ok {
		return says
	}
	if _, ok := consentDate(strings.ToLower(strings.Join(strings.Fields(c), " ")), ""); ok {
		return saysYes // the date the flag was set ("DNC Date")
	}
	return saysUnclear
}

// readValueCell reads a cell of a column of labels, tags or a status: it
// says yes when the whole cell, or one whole tag of it, is a do-not-call
// phrase of the table or one of extra (folded), and returns that tag;
// else it says nothing. Tags are separated by ",", ";", "|", " ::: "
// (Google Contacts) or a line break.
func readValueCell(cell string, extra map[string]bool) (cellSays, string) {
	c := strings.TrimSpace(cell)
	if c == "" {
		return saysNothing, ""
	}
	w := words()
	var buf [128]byte
	for rest := c; rest != ""; {
		tag := rest
		if i, n := nextTagBreak(rest); i >= 0 {
			tag, rest = rest[:i], rest[i+n:]
		} else {
			rest = ""
		}
		k := appendFold(buf[:0], tag)
		if len(k) > 0 && (w.phrases[string(k)] || extra[string(k)]) {
			return saysYes, tag
		}
	}
	return saysNothing, ""
}

// mentionsPhrase reports whether a cell that is no do-not-call phrase
// ([readValueCell]) holds one, or one of extra (folded), in its text ("do
// not call before 10am"): a mention, which plan reports for a column of
// labels the campaign maps.
func mentionsPhrase(cell string, extra map[string]bool) bool {
	return mentionsIn(cell, extra, false)
}

// wholeHeaderWords are the entries of five letters or more that a header
// holds only as a whole word: they begin words that say something else
// ("RemovedAt", "Removal Date"; "unsub", Mailchimp's UNSUB_TIME, begins
// "unsubscribe", which names no flag alone).
var wholeHeaderWords = map[string]bool{"remove": true, "unsub": true}

// ordinaryWords are the do-not-call phrases of one word that free text
// uses for other things ("Will stop by Tuesday", "Met Mrs Robinson",
// "remove the old address"): a note mentions do not call with them only
// inside a longer phrase ("stop calling", "remove me"). A whole cell, or
// a tag, that is one still says it (a disposition "Remove").
var ordinaryWords = map[string]bool{"stop": true, "robinson": true, "remove": true}

// mentionsIn is [mentionsPhrase]; text says that the cell is free text
// (a note), where [ordinaryWords] alone mention nothing.
func mentionsIn(cell string, extra map[string]bool, text bool) bool {
	c := strings.TrimSpace(cell)
	if c == "" {
		return false
	}
	if words().mentions(c, text) {
		return true
	}
	if len(extra) > 0 {
		joined := foldString(c)
		for v := range extra {
			if strings.Contains(joined, v) {
				return true
			}
		}
	}
	return false
}

// maxMentionWords bounds the words of an ASCII cell w.mentions reads
// without allocating; a longer cell is read as any other text is.
const maxMentionWords = 32

// mentions reports whether text c holds a do-not-call phrase of the table
// as words ("do not call before 10am"). A cell of a column of labels is
// read so on every row, so ASCII text is split into words, folded and
// looked up without allocating.
func (w *signalWords) mentions(c string, text bool) bool {
	skip := func(p []string) bool { return text && len(p) == 1 && ordinaryWords[p[0]] }
	var bounds [maxMentionWords][2]int
	n := 0
	if !asciiWords(c, func(i, j int) bool {
		if strings.Trim(c[i:j], "'") == "" {
			return true // no letter, no word (as foldWords drops it)
		}
		if n == len(bounds) {
			return false
		}
		bounds[n] = [2]int{i, j}
		n++
		return true
	}) {
		ws := foldWords(c)
		for i, x := range ws {
			for _, p := range w.firstWords[x] {
				if len(ws)-i >= len(p) && slices.Equal(ws[i:i+len(p)], p) && !skip(p) {
					return true
				}
			}
		}
		return false
	}
	var buf, next [64]byte
	for a := range n {
		k := appendFold(buf[:0], c[bounds[a][0]:bounds[a][1]])
		for _, p := range w.firstWords[string(k)] {
			if n-a < len(p) || skip(p) {
				continue
			}
			same := true
			for j := 1; j < len(p) && same; j++ {
				same = string(appendFold(next[:0], c[bounds[a+j][0]:bounds[a+j][1]])) == p[j]
			}
			if same {
				return true
			}
		}
	}
	return false
}

// asciiWords calls fn with the bounds of each word of s, split as
// foldWords splits it (runs of letters, digits and apostrophes, and
// camelCase), while fn returns true. It reports false when s is not
// ASCII (fn is called for no word) or when fn stopped it.
func asciiWords(s string, fn func(i, j int) bool) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	isWord := func(c byte) bool {
		return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '\''
	}
	upper := func(c byte) bool { return 'A' <= c && c <= 'Z' }
	lower := func(c byte) bool { return 'a' <= c && c <= 'z' }
	start := -1
	for i := 0; i <= len(s); i++ {
		if i == len(s) || !isWord(s[i]) {
			if start >= 0 && !fn(start, i) {
				return false
			}
			start = -1
			continue
		}
		if start >= 0 && upper(s[i]) {
			prev := s[i-1]
			nextLower := i+1 < len(s) && lower(s[i+1])
			if lower(prev) || ('0' <= prev && prev <= '9') || (upper(prev) && nextLower) {
				if !fn(start, i) {
					return false
				}
				start = i
			}
		}
		if start < 0 {
			start = i
		}
	}
	return true
}

// withdraws reports whether text c holds, as words, a withdrawn,
// opt_out or denied entry of the table ("withdrawn 2024-06-01", "x
// (widerrufen)", "Declined by phone") or a do-not-call phrase ("Yes - do
// not call").
func (w *signalWords) withdraws(c string) bool {
	ws := foldWords(c)
	return holdsEntry(ws, w.withdrawals) || holdsEntry(ws, w.refusals) || w.mentions(c, false)
}

// refuses reports whether text c holds, as words, a denied entry of the
// table ("Denied", "Consent - Declined", "non acconsento") and no
// withdrawn or opt_out entry nor do-not-call phrase: a refusal, not a
// withdrawal, which the reasons name as such.
func (w *signalWords) refuses(c string) bool {
	ws := foldWords(c)
	return holdsEntry(ws, w.refusals) && !holdsEntry(ws, w.withdrawals) && !w.mentions(c, false)
}

// holdsEntry reports whether words ws hold, one after the other, an
// entry of index (entries as their words, by their first).
func holdsEntry(ws []string, index map[string][][]string) bool {
	for i, x := range ws {
		for _, p := range index[x] {
			if len(ws)-i >= len(p) && slices.Equal(ws[i:i+len(p)], p) {
				return true
			}
		}
	}
	return false
}

// nextTagBreak returns where the next break between tags of a cell is,
// and its length; -1 when there is none.
func nextTagBreak(s string) (int, int) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ',', ';', '|', '\n':
			return i, 1
		case ':':
			if strings.HasPrefix(s[i:], ":::") {
				return i, 3
			}
		}
	}
	return -1, 0
}

// readConsentWord reads a consent cell that is a word of the table:
// saysYes, saysNo or saysWithdrawn, and whether it was one.
func readConsentWord(cell string) (cellSays, bool) {
	if !hasLetter(cell) {
		// The fold drops signs and punctuation: "-1" (a system's
		// "unknown", or Access's true), "+1", "(1)" would read as "1", a
		// yes. Of the cells without a letter only 1 and 0 are words.
		if t := strings.TrimSpace(cell); t != "1" && t != "0" {
			return saysUnclear, false
		}
	}
	var buf [64]byte
	k := appendFold(buf[:0], cell)
	says, ok := words().consent[string(k)]
	if ok && says == saysYes && strings.ContainsAny(cell, "?¿？") {
		// "Yes?", "Consent: Yes?": the fold drops the question mark,
		// but a yes asked is not a yes given; the cell says nothing
		// callrun can call on.
		return saysUnclear, false
	}
	return says, ok
}

// conflict returns, for a cell whose word the table reads two ways, how
// ("yes in tr; no in fi"); "" otherwise.
func conflict(cell string) string {
	return words().conflicts[foldString(cell)]
}

// isNotesHeader reports whether a header names a column of free text:
// notes, comments, a description ("Notes", "Call Comments",
// "Bemerkungen"), whose cells the pass reads for do-not-call phrases.
func isNotesHeader(h string) bool {
	w, t := words(), readHeaderWords(h)
	return slices.ContainsFunc(t.words, func(x string) bool { return slices.Contains(w.notes, x) })
}
