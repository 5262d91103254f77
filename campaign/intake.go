package campaign

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/campaign/phone"
	"github.com/callrun/callrun/report/store"
)

// Intake takes a campaign's webhook deliveries into its store, as
// `callrun listen` (and run --sandbox's receiver) receives them: it
// stores each durably, puts the number of an opt-out on the store's
// do-not-call list and records a conversation for an answered call, all
// before the delivery may be acknowledged. Its methods are safe for
// concurrent use.
type Intake struct {
	f *File
	o IntakeOptions

	mu sync.Mutex
	// ours are call ids the journal was found to hold, or whose service
	// start is recorded: a call's later deliveries (its call.answered,
	// its call.ended, their retries) read the journal no more to tell
	// that callrun placed it, or count it again. At most
	// maxOurs, then forgotten at once (read again as needed).
	ours map[string]bool
}

// maxOurs bounds Intake.ours: a million call ids of some tens of bytes.
const maxOurs = 1 << 20

// IntakeOptions are where an [Intake] puts what it takes.
type IntakeOptions struct {
	// Deliveries is where the deliveries are stored.
	Deliveries *store.Deliveries
	// DoNotCall is the store's do-not-call list, where opt-outs go; nil
	// when the campaign has no outcomes.opt_out.
	DoNotCall store.DoNotCallList
	// Starts are the store's call starts, where conversations go; nil
	// for a rehearsal's receiver, whose answered calls phoned nobody.
	Starts store.CallStarts
	// Now is the clock of the entries written; nil is time.Now.
	Now func() time.Time
	// Calls returns the contact of each call id of ids that callrun
	// placed for the campaign (store.CallKeysOf over its journal); nil
	// when none can be looked up.
	Calls func(ctx context.Context, ids map[string]bool) (map[string]store.Key, error)
}

// NewIntake returns the intake of campaign f.
func NewIntake(f *File, o IntakeOptions) *Intake {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Intake{f: f, o: o}
}

// Taken is what [Intake.Take] did with a delivery.
type Taken struct {
	Key string
	// New: the delivery was stored now; else it was stored already.
	New bool
	// Number is the delivery's number as [File.DeliveryNumber] reads it.
	Number DeliveryNumber
	// OptOut: the delivery says the person opted out; Listed are the
	// numbers that put on the do-not-call list now (none when they were
	// on it already).
	OptOut bool
	Listed []string
	// FlaggedBy is, for a delivery outcomes.opt_out does not take for an
	// opt-out, the path of the field that says do not call all the same
	// ([FlagsDoNotCall]), or of the summary or the person's turn of the
	// transcript that says it ([SaysDoNotCall]: the field and the turn,
	// never the words said): an opt-out.
	FlaggedBy string
	// ByCall is, for an opt-out that names a call callrun placed, that
	// call's contact's number, listed whatever number its fields hold
	// (with the numbers found, when none reads: it is held as ever).
	// Unlisted is the number its fields read as when that is another
	// (perhaps misread): not listed.
	ByCall, Unlisted string
	// Searched: the opt-out's number did not read by the delivery's
	// fields, and Found are the campaign's contacts' numbers found in its
	// values instead, each put on the list.
	Searched bool
	Found    []string
	// InArray: the sign is in an array of the delivery
	// ([Outcomes.ArraySaysDoNotCall]), of whom callrun cannot tell: the
	// contacts' numbers among its values and the delivery's own are
	// listed, and it is held.
	InArray bool
	// Held: the opt-out is held on the list's store (HeldNew: now, not by
	// a retry), and no run there starts a call until a person resolves
	// it: its number did not read, whatever numbers were found.
	Held, HeldNew bool
	// Erased: a number of the delivery is an erased person's, and it was
	// stored erased, under Key (its key's keyed hash).
	Erased bool
	// Behind is how far this machine's clock was behind the delivery's
	// own timestamp when it came, when more than
	// [apiclient.MaxClockOffset] (else 0): its conversation was recorded
	// at the timestamp ([conversationAt]), and listen says so.
	Behind time.Duration
}

// Take stores delivery d, received at an agent's webhook (agent) or the
// campaign's outcomes path, durably unless it is stored already, then puts the number of an opt-out on the do-not-call list and
// records a conversation for an answered call, each durably. Only when it
// returns nil may d be acknowledged; a retry of d finds each step done
// and does it no more.
func (in *Intake) Take(ctx context.Context, d apiclient.Delivery, agent bool, at time.Time) (Taken, error) {
	t := Taken{Key: d.Key(), Number: in.f.deliveryNumberOf(d)}
	sd := store.Delivery{Key: t.Key, At: at.UTC(), Event: d.Event, AgentID: d.AgentID, CallID: d.CallID, Fields: d.Fields, Raw: d.Raw}
	if agent {
		sd.Via = ViaAgent
	}
	if l := d.LegacyKey(); l != t.Key {
		sd.Legacy = l // a retry of a delivery stored before the upgrade
	}
	// The store commits a delivery of a person in its erased set in the
	// erased form, reading its numbers (Deliveries.ReadNumbersWith) only
	// once it has erased anyone.
	stored, isNew, err := in.o.Deliveries.Append(sd)
	if err != nil {
		return t, fmt.Errorf("storing a delivery: %w", err)
	}
	t.New, t.Erased, t.Key = isNew, stored.Erased, stored.Key
	if err := in.optOut(ctx, d, &t); err != nil {
		return t, fmt.Errorf("putting an opt-out on the do-not-call list: %w", err)
	}
	convAt, behind := conversationAt(d, at)
	t.Behind = behind
	if err := in.converse(ctx, d, t, convAt); err != nil {
		return t, fmt.Errorf("recording a conversation in the call starts: %w", err)
	}
	if err := in.serviceStart(ctx, d, t, at); err != nil {
		return t, fmt.Errorf("counting the service's own call in the call starts: %w", err)
	}
	return t, nil
}

// optOut puts the number of delivery d on the do-not-call list, durably,
// when d says the person opted out (outcomes.opt_out), or a field of it
// says do not call ([FlagsDoNotCall]), or its summary or the person's
// words in its transcript do ([SaysDoNotCall]). When d names a
// call callrun placed (its call id is in the journal), the number listed
// is that call's contact's, and a number its fields read as that is
// another is not listed (Taken.Unlisted, for listen to say). It fails
// closed: when the number does not read by the delivery's fields (or
// reads only from its caller_number, which is no contact's number), the
// contact of the call it names, if callrun placed it, and every value of
// the delivery that is a number of one of the campaign's contacts goes
// on the list, and the opt-out is held on the list's store
// (store.OptOutHold): no run there starts a call until a person finds
// whose it was and resolves it. A retry of d finds each step done.
func (in *Intake) optOut(ctx context.Context, d apiclient.Delivery, t *Taken) error {
	if in.o.DoNotCall == nil {
		return nil
	}
	var inArray []string // the values of the array that says it, its number in doubt
	if !in.f.Outcomes.OptsOut(d) {
		if t.FlaggedBy, _ = FlagsDoNotCall(d); t.FlaggedBy == "" {
			t.FlaggedBy = SaysDoNotCall(d)
		}
		if t.FlaggedBy == "" {
			t.FlaggedBy = TextSaysDoNotCall(d)
		}
		if t.FlaggedBy == "" {
			t.FlaggedBy = ToolCallSaysDoNotCall(d)
		}
		if t.FlaggedBy == "" {
			t.FlaggedBy, inArray = in.f.Outcomes.ArraySaysDoNotCall(d)
			t.InArray = t.FlaggedBy != ""
		}
		if t.FlaggedBy == "" {
			return nil
		}
	}
	t.OptOut = true
	numbers := []string{t.Number.E164}
	if t.InArray {
		// A sign in an array, of whom callrun cannot tell: the contacts'
		// numbers among its values and the delivery's own go on the
		// list, and it is held.
		found, err := in.contactNumbers(ctx, d.Fields, append(repeatedValues(d), inArray...))
		if err != nil {
			return fmt.Errorf("looking for the opt-out's number among the campaign's contacts: %w", err)
		}
		t.Searched, t.Found = true, found
		numbers = found
		if t.Number.E164 != "" && !t.Number.Caller && !slices.Contains(numbers, t.Number.E164) {
			numbers = append(slices.Clone(numbers), t.Number.E164)
		}
	}
	byCall, err := in.callNumber(ctx, d.CallID)
	if err != nil {
		return fmt.Errorf("looking for the call the opt-out names in the journal: %w", err)
	}
	switch {
	case t.InArray:
		if byCall != "" && !slices.Contains(numbers, byCall) {
			t.ByCall, numbers = byCall, append(numbers, byCall)
		}
	case byCall != "" && t.Number.E164 != "":
		// The call is one callrun placed: the person is its contact,
		// whatever number the delivery's fields read as (a national
		// number read in the campaign's region, say).
		t.ByCall, numbers = byCall, []string{byCall}
		if t.Number.E164 != byCall {
			t.Unlisted = t.Number.E164
		}
	case t.Number.E164 == "" || t.Number.Caller:
		found, err := in.contactNumbers(ctx, d.Fields, repeatedValues(d))
		if err != nil {
			return fmt.Errorf("looking for the opt-out's number among the campaign's contacts: %w", err)
		}
		t.Searched = !t.Number.Caller || !slices.Contains(found, t.Number.E164)
		switch {
		case !t.Searched:
			numbers = []string{t.Number.E164} // a caller_number that is a contact's
		default:
			numbers, t.Found = found, found
		}
		if byCall != "" && !slices.Contains(numbers, byCall) {
			// No number reads, and the call is one callrun placed: its
			// contact's goes on the list too; the opt-out is held as
			// ever.
			t.ByCall, numbers = byCall, append(slices.Clone(numbers), byCall)
		}
	}
	var unread []string // the person's other lines, or the Salesforce record's, that do not read
	if t.Number.E164 != "" && !t.Number.Caller && !t.InArray && d.Event != apiclient.SalesforceEvent {
		// The person's other lines beside the number read (a CRM
		// record's MobilePhone beside its Phone, HubSpot's mobilephone
		// beside phone): the person asked, on whichever line.
		for _, l := range in.f.otherLines(d, t.Number.From) {
			if l.e164 == "" {
				unread = append(unread, fmt.Sprintf("its %s, beside its number: %v", l.path, l.err))
				for _, r := range phone.Readings(l.raw, in.f.suppressionRegions()) {
					if !in.f.Outcomes.isOwn(r) && !slices.Contains(numbers, r) {
						numbers = append(slices.Clone(numbers), r)
					}
				}
				continue
			}
			if !in.f.Outcomes.isOwn(l.e164) && !slices.Contains(numbers, l.e164) {
				numbers = append(slices.Clone(numbers), l.e164)
			}
		}
	}
	if d.Event == apiclient.SalesforceEvent {
		// A Salesforce record's DoNotCall is the person's, on each of
		// their lines the record names, not on its Phone alone. A line
		// that does not read is the person's still: its readings go on
		// the list, as a suppression file's do, and the opt-out is held.
		add := func(n string) {
			if !in.f.Outcomes.isOwn(n) && !slices.Contains(numbers, n) {
				numbers = append(slices.Clone(numbers), n)
			}
		}
		for _, name := range salesforceLines {
			v := d.Fields[name]
			if v == "" {
				continue
			}
			n, err := in.f.ReadNumber(v)
			if err != nil {
				unread = append(unread, fmt.Sprintf("its %s: %v", name, err))
				for _, r := range phone.Readings(v, in.f.suppressionRegions()) {
					add(r)
				}
				continue
			}
			add(n)
		}
	}
	if t.Searched || len(unread) > 0 {
		why := "its number does not read"
		switch {
		case !t.Searched && d.Event != apiclient.SalesforceEvent:
			why = "a line of the person's beside its number does not read"
		case !t.Searched:
			why = "a line of the Salesforce record whose DoNotCall it reports does not read"
		case t.InArray:
			why = fmt.Sprintf("a do-not-call sign in its array %s, which may be of another person than its number", t.FlaggedBy)
			if t.Erased {
				why = "a do-not-call sign in one of its arrays (an erased person's delivery)"
			}
		case t.Erased:
			why += " (an erased person's delivery)" // its numbers are said nowhere
		case t.Number.Err != nil:
			why = t.Number.Err.Error()
		case t.Number.Caller:
			why = fmt.Sprintf("its only number, %s (%s), is no contact's of the campaign", t.Number.E164, t.Number.From)
		}
		if len(t.Found) > 0 && !t.Erased {
			why += fmt.Sprintf("; the contacts' numbers among its values are on the list: %s", strings.Join(t.Found, ", "))
		}
		if t.ByCall != "" && !t.Erased {
			why += fmt.Sprintf("; the contact of its call %s, %s, is on the list", d.CallID, t.ByCall)
		}
		if len(unread) > 0 && !t.Erased {
			why += " (" + strings.Join(unread, "; ") + "; its readings are on the list)"
		}
		t.Held = true
		var err error
		if t.HeldNew, err = in.o.DoNotCall.Hold(ctx, store.OptOutHold{Campaign: in.f.Name, Key: t.Key, At: in.o.Now(), Reason: why}); err != nil {
			return err
		}
	}
	if len(numbers) == 0 {
		return nil
	}
	entries := make([]store.DoNotCallEntry, len(numbers))
	for i, n := range numbers {
		entries[i] = store.DoNotCallEntry{Number: n, At: in.o.Now(), Source: fmt.Sprintf("delivery %s of campaign %s", t.Key, in.f.Name)}
	}
	wrote, err := in.o.DoNotCall.Add(ctx, entries)
	for _, e := range wrote {
		t.Listed = append(t.Listed, e.Number)
	}
	return err
}

// otherLine is a line of a delivery's person beside its number
// ([File.otherLines]): its path and value, and its E.164 number, or why
// it does not read.
type otherLine struct {
	path, raw, e164 string
	err             error
}

// otherLines returns the fields of delivery d beside its number's (the
// field at from: in the same object) that name another line of the
// person's own, as a sheet's phone column does ([phoneLineHeader]: a CRM
// record's MobilePhone, HomePhone and OtherPhone beside its Phone,
// HubSpot's mobilephone beside phone), not another person's nor a device
// no person answers (an assistant's, a fax: [phoneLineKind]) nor a
// company's switchboard, nor a field a delivery's number is read from
// (two of those that differ make it unreadable already). Those empty are
// left out; one of five digits or more that does not read is returned
// with its error.
func (f *File) otherLines(d apiclient.Delivery, from string) []otherLine {
	parent := ""
	if i := strings.LastIndexByte(from, '.'); i >= 0 {
		parent = from[:i+1]
	}
	var out []otherLine
	for _, path := range slices.Sorted(maps.Keys(d.Fields)) {
		name, ok := strings.CutPrefix(path, parent)
		if !ok || path == from || strings.Contains(name, ".") || f.isNumberField(path) || !phoneLineHeader(name) {
			continue
		}
		if k, _ := phoneLineKind(name); k == lineNotDialled || k == lineCompanyMain {
			continue
		}
		v := strings.TrimSpace(d.Fields[path])
		if v == "" || strings.HasPrefix(v, "[") || strings.HasPrefix(v, "{") {
			continue
		}
		e164, err := f.ReadNumber(v)
		switch {
		case err == nil:
			out = append(out, otherLine{path: path, raw: v, e164: e164})
		case digitsAtLeast(v, 5):
			out = append(out, otherLine{path: path, raw: v, err: err})
		}
	}
	return out
}

// salesforceRecords are the Salesforce objects of people and companies,
// whose Outbound Messages report a record changed, never a call.
var salesforceRecords = map[string]bool{"Lead": true, "Contact": true, "Account": true, "CampaignMember": true, "Opportunity": true}

// salesforceLines are the fields of a Salesforce Lead's or Contact's own
// lines (not its AssistantPhone, another person's): its DoNotCall puts
// each on the list.
var salesforceLines = []string{"Phone", "MobilePhone", "HomePhone", "OtherPhone"}

// callNumber returns the number of the contact whose call, placed by
// callrun for the campaign, has the service's call id id; "" when id is
// empty, is no call of the journal's, or its contact's number is one of
// the campaign's own (outcomes.own_numbers), never listed.
func (in *Intake) callNumber(ctx context.Context, id string) (string, error) {
	if id == "" || in.o.Calls == nil {
		return "", nil
	}
	keys, err := in.o.Calls(ctx, map[string]bool{id: true})
	if err != nil {
		return "", err
	}
	k, ok := keys[id]
	if ok {
		in.ourCall(id)
	}
	if !ok || k.Phone == "" || in.f.Outcomes.isOwn(k.Phone) {
		return "", nil
	}
	return k.Phone, nil
}

// contactNumbers returns, sorted, the numbers of the campaign's contacts
// that the values of fields hold: each value read as a number (a JSON
// array's strings each), kept when a row of the campaign's sheets has
// it, and not one of the campaign's own (outcomes.own_numbers).
func (in *Intake) contactNumbers(ctx context.Context, fields map[string]string, more []string) ([]string, error) {
	want := in.f.fieldNumbers(fields)
	for _, v := range more {
		for n := range in.f.fieldNumbers(map[string]string{"": v}) {
			want[n] = true
		}
	}
	for n := range want {
		if in.f.Outcomes.isOwn(n) {
			delete(want, n)
		}
	}
	if len(want) == 0 {
		return nil, nil
	}
	have, err := in.f.ContactNumbers(ctx, want)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(have))
	for n := range have {
		out = append(out, n)
	}
	slices.Sort(out)
	return out, nil
}

// deliveryNumberOf is the number of delivery d as [File.DeliveryNumber]
// reads its fields, unless a field of a number that d holds more than
// once (a form field sent twice, a JSON member named twice), whose
// Fields keep one value, gives another number in another value: then,
// as when two fields give different numbers, it does not read, and an
// opt-out of it is held rather than put on one of them.
func (f *File) deliveryNumberOf(d apiclient.Delivery) DeliveryNumber {
	n := f.DeliveryNumber(d.Fields)
	nums := f.repeatedNumbers(d)
	if len(nums) > 1 || len(nums) == 1 && n.E164 != "" && nums[0] != n.E164 {
		if n.E164 != "" && !slices.Contains(nums, n.E164) {
			nums = append([]string{n.E164}, nums...)
		}
		return DeliveryNumber{Raw: n.Raw, Err: fmt.Errorf("a field of its number, sent more than once, gives different numbers (%s)", strings.Join(nums, ", "))}
	}
	return n
}

// isNumberField reports whether a delivery's field at path is one a
// delivery's number is read from ([File.DeliveryNumber]).
func (f *File) isNumberField(path string) bool {
	probe := map[string]string{path: "x"}
	for _, name := range append(f.numberFields(), CallerNumberField) {
		if p, _ := apiclient.FieldValues(probe, name); len(p) > 0 {
			return true
		}
	}
	return false
}

// repeatedValues returns every value of d's fields sent more than once.
func repeatedValues(d apiclient.Delivery) []string {
	var out []string
	for _, vs := range d.Repeated {
		out = append(out, vs...)
	}
	return out
}

// DeliveryNumbers returns, sorted, the E.164 numbers a delivery's fields
// hold: its number as [File.DeliveryNumber] reads it, and each value
// that reads as a number (a JSON array's strings each). A delivery of an
// erased person is one that holds theirs: listen's intake and the
// erasure of stored deliveries (store.DeliveryEraseOptions) find them so.
func (f *File) DeliveryNumbers(fields map[string]string) []string {
	want := f.fieldNumbers(fields)
	if n := f.DeliveryNumber(fields); n.E164 != "" {
		want[n.E164] = true
	}
	out := make([]string, 0, len(want))
	for n := range want {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// fieldNumbers returns the E.164 numbers that the values of fields read
// as, a JSON array's strings each and the strings of its objects (a CRM
// record's phones, [{"phone": "+1...", "type": "mobile"}]), and each
// number of a value that lists several ([phone.Split]).
func (f *File) fieldNumbers(fields map[string]string) map[string]bool {
	want := map[string]bool{}
	var look func(v string)
	// inside reads the strings of an array's objects, nested up to depth,
	// those of five digits or more alone: a transcript's words, each an
	// object of a word and its timings, are not each read as a number.
	var inside func(x any, depth int)
	inside = func(x any, depth int) {
		switch x := x.(type) {
		case string:
			if digitsAtLeast(x, 5) {
				look(x)
			}
		case []any:
			if depth > 0 {
				for _, it := range x {
					inside(it, depth-1)
				}
			}
		case map[string]any:
			if depth > 0 {
				for _, it := range x {
					inside(it, depth-1)
				}
			}
		}
	}
	look = func(v string) {
		if strings.HasPrefix(v, "[") {
			var items []any
			if json.Unmarshal([]byte(v), &items) == nil {
				for _, it := range items {
					switch it := it.(type) {
					case string:
						look(it)
					case map[string]any, []any:
						inside(it, 4)
					}
				}
			}
			return
		}
		if e164, err := f.ReadNumber(v); err == nil {
			want[e164] = true
			return
		}
		// A value that lists several numbers on purpose ("+1 415 555
		// 0134; +1 415 555 0135"): each of them.
		for _, part := range phone.Split(v) {
			if e164, err := f.ReadNumber(part); err == nil {
				want[e164] = true
			}
		}
	}
	for _, v := range fields {
		look(v)
	}
	return want
}

// digitsAtLeast reports whether s holds n digits or more.
func digitsAtLeast(s string, n int) bool {
	for i := 0; i < len(s) && n > 0; i++ {
		if s[i] >= '0' && s[i] <= '9' {
			n--
		}
	}
	return n == 0
}

// international reports whether raw, a number as a delivery's field
// gives it, is written with its country code after a +, which reads
// the same whatever the campaign's region.
func international(raw string) bool {
	return strings.HasPrefix(strings.TrimLeft(raw, " \t\u00a0'\""), "+")
}

// mayBeConversation reports whether delivery d may report a
// conversation, failing closed: a call.answered does, and so does every
// delivery of its call but a call.started or one whose every duration
// (duration, or duration_seconds, the agents' completion's) is 0 (a
// call.ended, an agent's completion, a contact-only delivery with no
// event, an event callrun does not know), since none of them says that
// nobody answered. The service's account webhooks send the contact's form
// alone, no event: Reg F's hold must not wait for a call.answered that
// may never be told apart. A Salesforce Outbound Message of a record of
// a person or a company (a Lead, a Contact, an Account: a field of it
// changed, its DoNotCall say) reports no call at all; one of an activity
// (a Task, an Event) may log one, and counts.
func mayBeConversation(d apiclient.Delivery) bool {
	switch {
	case Answered(d.Event):
		return true
	case eventRank(d.Event) == rankStarted:
		return false
	case d.Event == apiclient.SalesforceEvent && salesforceRecords[d.Fields["sObjectType"]]:
		return false
	}
	// Every duration it gives must be 0: one in whole minutes is 0 for
	// a call of 25 seconds that its duration_seconds gives.
	zero := false
	for _, name := range []string{"duration", "duration_seconds"} {
		_, values := apiclient.FieldValues(d.Fields, name)
		for _, v := range values {
			if !zeroDuration(v) {
				return true
			}
			zero = true
		}
	}
	return !zero
}

// zeroDuration reports whether v, a delivery's duration, says the call
// lasted no time: "0", "0.0", "00:00", "0:00:00". Empty or unreadable
// is not zero.
func zeroDuration(v string) bool {
	v = strings.TrimSpace(v)
	if v == "" {
		return false
	}
	for _, part := range strings.Split(v, ":") {
		f, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil || f != 0 {
			return false
		}
	}
	return true
}

// conversationAt returns when the conversation delivery d may report
// took place, for Reg F's hold of 7 days after it: at, when d came by
// this machine's clock, unless d's own timestamp ([apiclient.Delivery.SentAt])
// is later by more than [apiclient.MaxClockOffset], when this machine's
// clock is behind the sender's and the hold would end early by as much:
// then the timestamp, up to 7 days past at (a sender's clock years
// ahead holds a week more, not for ever), and behind is the difference.
// An earlier timestamp (a retry hours later) leaves at: the later of the
// two holds longer.
func conversationAt(d apiclient.Delivery, at time.Time) (conv time.Time, behind time.Duration) {
	sent, ok := d.SentAt()
	if !ok || sent.Sub(at) <= apiclient.MaxClockOffset {
		return at, 0
	}
	if most := at.Add(store.RegFAfterConversation); sent.After(most) {
		sent = most
	}
	return sent, sent.Sub(at)
}

// converse records a conversation with the number of delivery d, received
// at, in the store's call starts, durably, when d may report one
// ([mayBeConversation]), so that a campaign with Reg F's rule never calls
// the number within 7 days of it. When d names a call callrun placed and
// its fields give no number written with its country code, or only a
// caller_number, the conversation is that call's contact's, as an
// opt-out is, whatever number its fields read as (a national number read
// in the campaign's region, say) or if none reads: else a person the
// campaign called would be called again within the 7 days. A retry of d
// records nothing more; a delivery whose number does not read and that
// names no call of the campaign's records none (no contact can have it).
func (in *Intake) converse(ctx context.Context, d apiclient.Delivery, t Taken, at time.Time) error {
	if in.o.Starts == nil || !mayBeConversation(d) {
		return nil
	}
	number := t.Number.E164
	switch {
	case t.ByCall != "":
		number = t.ByCall // optOut read the journal for it
	case number == "" || !international(t.Number.Raw) || t.Number.Caller:
		// The journal (which grows with the campaign) is read only
		// here, before listen answers: a number written with its
		// country code reads the same in any region, and a delivery
		// that names no call reads nothing (callNumber). One read from
		// caller_number may be either end of the call (the campaign's
		// caller ID that own_numbers does not list), as optOut has it:
		// the call's contact is the person.
		byCall, err := in.callNumber(ctx, d.CallID)
		if err != nil {
			return fmt.Errorf("looking for call %s, which the delivery names, in the journal, for the number of its conversation: %w", d.CallID, err)
		}
		if byCall != "" {
			number = byCall
		}
	}
	if number != "" {
		_, err := in.o.Starts.Converse(ctx, store.Conversation{Number: number, At: at.UTC(), Campaign: in.f.Name, Key: t.Key, Erased: t.Erased})
		return err
	}
	// A number in doubt because a number field sent more than once gives
	// two (deliveryNumberOf): the conversation was with one of them, so
	// each is held, as an opt-out in doubt holds each; each under a key
	// of its own, as a store keeps one conversation a campaign and key.
	for _, n := range in.f.repeatedNumbers(d) {
		if _, err := in.o.Starts.Converse(ctx, store.Conversation{Number: n, At: at.UTC(), Campaign: in.f.Name, Key: t.Key + "/" + n, Erased: t.Erased}); err != nil {
			return err
		}
	}
	return nil
}

// serviceStart counts, in the store's call starts, the call that delivery
// d (received at) names when callrun did not start it: a redial the
// agent's or the account's call handling made on its own, or another call
// the service placed for one request. Contact pressure then counts it
// for every campaign on the store, as it counts callrun's own. One call
// id is one start, however many deliveries name it (its call.started,
// call.answered, call.ended, and their retries); a call id of the
// campaign's journal is none (its intent counted it), looked up under
// the lock that the journal's outcome takes to give back a service start
// of its call (store.CallStarts.ServiceStarted), so a delivery that came
// before the call's answer reached the journal is not counted twice. A
// delivery that names no call id, whose number does not read (and that
// gives no numbers in doubt), or whose number is the campaign's own line,
// counts nothing: callrun cannot tell whom, or whether it was its own;
// nor does one that says its call came in ([inboundCall]).
func (in *Intake) serviceStart(ctx context.Context, d apiclient.Delivery, t Taken, at time.Time) error {
	if in.o.Starts == nil || d.CallID == "" || in.o.Calls == nil {
		return nil
	}
	if d.Event == apiclient.SalesforceEvent && salesforceRecords[d.Fields["sObjectType"]] {
		return nil // a record of a person, not a call
	}
	if inboundCall(d.Fields) {
		return nil // the person called in: no call to them
	}
	numbers := in.f.repeatedNumbers(d)
	if n := t.Number.E164; n != "" {
		numbers = []string{n}
	}
	in.mu.Lock()
	known := in.ours[d.CallID]
	in.mu.Unlock()
	if known {
		return nil // callrun's own call, counted by its intent
	}
	own := func() (bool, error) {
		keys, err := in.o.Calls(ctx, map[string]bool{d.CallID: true})
		if err != nil {
			return false, fmt.Errorf("looking for call %s, which the delivery names, in the journal: %w", d.CallID, err)
		}
		_, ok := keys[d.CallID]
		if ok {
			in.ourCall(d.CallID)
		}
		return ok, nil
	}
	if len(numbers) == 0 {
		return nil
	}
	// First without the starts' lock: most deliveries are of callrun's
	// own calls whose answer reached the journal before them, and the
	// journal, which grows with the campaign, is then not read under the
	// lock every run's batch of intents waits for. Only a call it does
	// not hold yet is looked up again under it.
	if mine, err := own(); err != nil || mine {
		return err
	}
	for _, n := range numbers {
		if in.f.Outcomes.isOwn(n) {
			continue
		}
		id := store.ServiceStartID(d.CallID)
		if len(numbers) > 1 {
			id += "/" + n // a number in doubt: each is held, each a start of its own
		}
		s := store.CallStart{Number: n, At: at.UTC(), ID: id, Campaign: in.f.Name, Agent: d.AgentID}
		if _, err := in.o.Starts.ServiceStarted(ctx, s, t.Erased, own); err != nil {
			return err
		}
	}
	in.ourCall(d.CallID) // counted now, or before: its later deliveries count nothing
	return nil
}

// ourCall remembers that the journal holds call id, or its service start
// is recorded.
func (in *Intake) ourCall(id string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.ours == nil || len(in.ours) >= maxOurs {
		in.ours = map[string]bool{}
	}
	in.ours[id] = true
}

// repeatedNumbers returns, sorted, the numbers, none of the campaign's
// own, that the values of d's number fields sent more than once read as
// ([File.deliveryNumberOf]); nil when it has none.
func (f *File) repeatedNumbers(d apiclient.Delivery) []string {
	seen := map[string]bool{}
	for path, vs := range d.Repeated {
		if !f.isNumberField(path) {
			continue
		}
		for _, v := range vs {
			if e164, err := f.ReadNumber(v); err == nil && !f.Outcomes.isOwn(e164) {
				seen[e164] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// Deliveries returns where the intake stores deliveries.
func (in *Intake) Deliveries() *store.Deliveries { return in.o.Deliveries }

// DoNotCall returns the do-not-call list the intake's opt-outs go to, nil
// when none.
func (in *Intake) DoNotCall() store.DoNotCallList { return in.o.DoNotCall }
