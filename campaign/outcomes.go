package campaign

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/campaign/phone"
	"github.com/callrun/callrun/report"
	"github.com/callrun/callrun/report/store"
)

// DeliveriesDir returns the directory of the deliveries file of the
// campaign, given the state directory dir of the campaign or of one of
// its shards: the campaign's own, which its shards share. run --sandbox's
// receiver stores there.
func (f *File) DeliveriesDir(dir string) string {
	if f.Shard.Sharded() {
		return filepath.Dir(dir)
	}
	return dir
}

// OpenOutcomes reads the campaign's deliveries from the store the journal
// st was read from (its state directory's file, or its PostgreSQL table)
// and indexes them for one pass over its contacts in sheet order, with
// st, which calls [OutcomeIndex.Add] for each contact: for the report,
// status and `callrun outcomes`. It returns nil when the campaign collects
// no outcomes.
func OpenOutcomes(ctx context.Context, f *File, st *store.State) (*OutcomeIndex, error) {
	if f.Outcomes == nil {
		return nil, nil
	}
	ds, err := st.Deliveries(ctx)
	if err != nil {
		return nil, err
	}
	x := NewOutcomeIndex(f, ds)
	if err := x.byCall(st); err != nil {
		return nil, err
	}
	x.byRedial(f, st)
	if f.Dedupe != "campaign" {
		x.Share(st)
	}
	x.f, x.st = f, st
	return x, nil
}

// Add fills row.Outcome, the report row of contact c, from the
// deliveries that are c's, if c was called. A nil index adds nothing.
// Only an index OpenOutcomes made has Add.
func (x *OutcomeIndex) Add(c *Contact, row *report.Row) {
	if x == nil || row.Attempts == 0 {
		return
	}
	key, _ := SettledKey(x.f, x.st, c)
	row.Outcome = x.Outcome(c, row.Sheet, key, row.AgentID)
}

// Deliveries returns the deliveries indexed, in the order they were
// stored; [OutcomeIndex.Taken] says which contact took each.
func (x *OutcomeIndex) Deliveries() []store.Delivery { return x.all }

// Detail is d's outcome_detail alone: name=value of the fields
// outcomes.fields names that d has.
func (x *OutcomeIndex) Detail(d store.Delivery) string {
	var detail []string
	for _, name := range x.fields {
		if v := apiclient.Field(d.Fields, name); v != "" {
			detail = append(detail, name+"="+v)
		}
	}
	return strings.Join(detail, "; ")
}

// OutcomeIndex matches a campaign's stored deliveries to its contacts,
// for the report, status and `callrun outcomes`. A delivery belongs, by
// the first rule that holds:
//
//  1. to the contact whose call it names: its call_id is the one the
//     service's answer gave that contact's call start (the journal keeps
//     it);
//  2. to the contact with its number ([File.DeliveryNumber]) and, where
//     it names its agent, the same agent, else (where both have one) the
//     same ghl_contact_id. Where several contacts share the number
//     (dedupe: agent or none), [OutcomeIndex.Share] gives it to the one
//     whose call started last before it came; else the first such
//     contact met takes it;
//  3. where it names an agent that is none of the campaign's (the agent
//     the service redials through), to the one contact with its number
//     whose call started within pace.call_length before it came;
//  4. where its number does not read, to the contact with its
//     ghl_contact_id.
//
// The rest stay unmatched.
type OutcomeIndex struct {
	fields  []string
	all     []store.Delivery
	byPhone map[string][]int // normalised number -> indexes into all
	byGHL   map[string][]int // ghl_contact_id of a delivery whose number does not read -> indexes
	claimed []bool
	// owner is, for a delivery that may be one contact's alone (the call
	// it names, the one contact a redial can be, the one of a shared
	// number Share gave it to), that contact's journal key.
	owner map[int]store.Key
	// how says, for each delivery taken, by which rule: one of the
	// Matched values.
	how []string
	// taker is, for each delivery taken, the contact that took it.
	taker []Taker
	f     *File        // for Add
	st    *store.State // for Add
}

// How a delivery was matched to its contact, as `callrun outcomes` says.
const (
	MatchedByCallID      = "matched-by-call-id"
	MatchedByNumberAgent = "matched-by-number-and-agent"
	MatchedByNumber      = "matched-by-number"
	MatchedByGHL         = "matched-by-ghl-contact-id"
)

// Taker is the contact a delivery was matched to: its sheet and row.
type Taker struct {
	Sheet string
	Row   int
}

// NewOutcomeIndex indexes the deliveries ds by their numbers, as
// [File.DeliveryNumber] reads them, and those whose number does not read
// by their ghl_contact_id.
func NewOutcomeIndex(f *File, ds []store.Delivery) *OutcomeIndex {
	x := &OutcomeIndex{fields: f.Outcomes.DetailFields(), all: ds, byPhone: map[string][]int{}, byGHL: map[string][]int{},
		claimed: make([]bool, len(ds)), owner: map[int]store.Key{}, how: make([]string, len(ds)), taker: make([]Taker, len(ds))}
	for i, d := range ds {
		if n := f.DeliveryNumber(d.Fields); n.E164 != "" {
			x.byPhone[n.E164] = append(x.byPhone[n.E164], i)
		} else if ghl := apiclient.Field(d.Fields, "ghl_contact_id"); ghl != "" {
			x.byGHL[ghl] = append(x.byGHL[ghl], i)
		}
	}
	return x
}

// byCall gives each delivery that names a call of the journal st (the
// call id the service's answer gave a call start) to that call's
// contact alone, whatever number it holds.
func (x *OutcomeIndex) byCall(st *store.State) error {
	ids := map[string]bool{}
	for _, d := range x.all {
		if d.CallID != "" {
			ids[d.CallID] = true
		}
	}
	if len(ids) == 0 {
		return nil
	}
	keys, err := st.CallKeys(ids)
	if err != nil {
		return err
	}
	for i, d := range x.all {
		k, ok := keys[d.CallID]
		if !ok {
			continue
		}
		x.owner[i] = k
		x.how[i] = MatchedByCallID
		if !slices.Contains(x.byPhone[k.Phone], i) {
			x.byPhone[k.Phone] = append(x.byPhone[k.Phone], i)
		}
	}
	return nil
}

// defaultRedialWindow is how long before a redial agent's delivery the
// call it reports may have started, for a campaign without
// pace.call_length.
const defaultRedialWindow = 30 * time.Minute

// byRedial gives each delivery that names an agent none of the journal
// st's contacts were called through (the service's "Redial Agent"), and
// that no call id gave already, to the one contact with its number whose
// call started within pace.call_length before the delivery came; when
// none or several did, to nobody.
func (x *OutcomeIndex) byRedial(f *File, st *store.State) {
	window := f.Pace.CallLength
	if window <= 0 {
		window = defaultRedialWindow
	}
	var ours map[string]bool // the campaign's agent ids, read when first needed
	phones := map[string]bool{}
	var redials []int
	for p, is := range x.byPhone {
		for _, i := range is {
			if d := x.all[i]; d.AgentID != "" && x.how[i] == "" {
				phones[p] = true
				redials = append(redials, i)
			}
		}
	}
	if len(redials) == 0 {
		return
	}
	ours = campaignAgentIDs(st)
	keys := st.KeysWithPhone(phones)
	for _, i := range redials {
		d := x.all[i]
		if ours[d.AgentID] {
			continue
		}
		n := f.DeliveryNumber(d.Fields).E164
		var found []store.Key
		for _, k := range keys[n] {
			e, ok := st.Lookup(k)
			if !ok || e.Attempts == 0 {
				continue
			}
			start := callStart(e)
			if !start.After(d.At) && d.At.Sub(start) <= window {
				found = append(found, k)
			}
		}
		if len(found) == 1 {
			x.owner[i] = found[0]
			x.how[i] = MatchedByNumber
		}
	}
}

// campaignAgentIDs returns the service's ids of the agents the journal
// st's calls went through: each agent's, as its first contact's last
// record names it.
func campaignAgentIDs(st *store.State) map[string]bool {
	ids := map[string]bool{}
	for _, k := range st.AgentKeys() {
		if e, ok := st.Lookup(k); ok && e.AgentID != "" {
			ids[e.AgentID] = true
		}
	}
	return ids
}

// callStart is when the call of a journal entry is taken to have
// started: the earliest it can have, its last answer less callStartSpan,
// or its first attempt if that came later.
func callStart(e store.Entry) time.Time {
	start := e.FirstAt
	if lo := e.LastAt.Add(-callStartSpan); lo.After(start) {
		start = lo
	}
	return start
}

// callStartSpan is how long before its answer a call start may have
// reached the service: the longest a call start's request lasts (the
// run's default request timeout).
const callStartSpan = defaultRequestTimeout

// Share gives each delivery whose number several contacts of the journal
// st share (dedupe: agent or none) to the one whose call started last
// before the delivery came, of those with the agent the delivery names;
// to the first called if none started before it (the clocks of two
// machines disagree). A call is taken to have started at the earliest
// it can have (callStart). Outcome then gives the delivery to that
// contact alone. A delivery given already (by its call id, or as a
// redial) is left as it is. Call it once, before Outcome.
func (x *OutcomeIndex) Share(st *store.State) {
	phones := make(map[string]bool, len(x.byPhone))
	for p := range x.byPhone {
		phones[p] = true
	}
	type call struct {
		key     store.Key
		start   time.Time
		agentID string
	}
	for phone, keys := range st.KeysWithPhone(phones) {
		if len(keys) < 2 {
			continue
		}
		var calls []call
		for _, k := range keys {
			e, ok := st.Lookup(k)
			if !ok || e.Attempts == 0 {
				continue
			}
			calls = append(calls, call{k, callStart(e), e.AgentID})
		}
		for _, i := range x.byPhone[phone] {
			if _, given := x.owner[i]; given {
				continue
			}
			d := x.all[i]
			var best, first *call
			for j := range calls {
				c := &calls[j]
				if d.AgentID != "" && c.agentID != d.AgentID {
					continue
				}
				if first == nil || c.start.Before(first.start) {
					first = c
				}
				if !c.start.After(d.At) && (best == nil || c.start.After(best.start)) {
					best = c
				}
			}
			if best == nil {
				best = first
			}
			if best != nil {
				x.owner[i] = best.key
			}
		}
	}
}

// Outcome takes the deliveries of contact c, whose calls stand in the
// journal under key and went through the service's agent agentID, and
// says what they tell: the latest event (ended after answered after
// started, whatever order they came in; a tie goes to the one received
// last), how many calls the service started (a call counted once,
// however many call.started deliveries name it), and the fields
// outcomes.fields names, each from the latest delivery that has it. Two
// deliveries of one call and event that say different things are both
// stored (apiclient's Delivery.Key): the one received last gives the
// outcome's time and its fields.
func (x *OutcomeIndex) Outcome(c *Contact, sheet string, key store.Key, agentID string) report.Outcome {
	var mine []store.Delivery
	take := func(i int, how string) {
		x.claimed[i] = true
		x.taker[i] = Taker{Sheet: sheet, Row: c.Row}
		if x.how[i] == "" {
			x.how[i] = how
		}
		mine = append(mine, x.all[i])
	}
	for _, i := range x.byPhone[c.Phone] {
		if x.claimed[i] {
			continue
		}
		if owner, ok := x.owner[i]; ok {
			if owner == key {
				take(i, MatchedByNumberAgent)
			}
			continue
		}
		if x.belongs(x.all[i], c, agentID) {
			take(i, MatchedByNumberAgent)
		}
	}
	if ghl := c.Fields[FieldGHLContactID]; ghl != "" {
		for _, i := range x.byGHL[ghl] {
			if d := x.all[i]; !x.claimed[i] && (d.AgentID == "" || d.AgentID == agentID) {
				take(i, MatchedByGHL)
			}
		}
	}
	var o report.Outcome
	if len(mine) == 0 {
		return o
	}
	// Latest first by rank, then by arrival.
	latest := 0
	started := map[string]bool{} // the calls counted, by id
	for i, d := range mine {
		switch deliveryRank(d) {
		case rankStarted:
			if d.CallID == "" || !started[d.CallID] {
				o.Starts++
			}
			if d.CallID != "" {
				started[d.CallID] = true
			}
		case rankAnswered:
			o.Answered = true
		}
		if r, lr := deliveryRank(d), deliveryRank(mine[latest]); r > lr || r == lr && !d.At.Before(mine[latest].At) {
			latest = i
		}
	}
	o.Event, o.At = outcomeName(deliveryRank(mine[latest])), report.Timestamp(mine[latest].At)
	var detail []string
	for _, name := range x.fields {
		val, rank := "", -1
		for _, d := range mine {
			if v := apiclient.Field(d.Fields, name); v != "" && deliveryRank(d) >= rank {
				val, rank = v, deliveryRank(d)
			}
		}
		if val != "" {
			detail = append(detail, name+"="+val)
		}
	}
	o.Detail = strings.Join(detail, "; ")
	return o
}

// belongs reports whether delivery d may be contact c's, beyond its
// number: the same agent where d names one, else the same ghl_contact_id
// where both have one.
func (x *OutcomeIndex) belongs(d store.Delivery, c *Contact, agentID string) bool {
	if d.AgentID != "" {
		return d.AgentID == agentID
	}
	ghl, mine := apiclient.Field(d.Fields, "ghl_contact_id"), c.Fields[FieldGHLContactID]
	return ghl == "" || mine == "" || ghl == mine
}

// Taken returns the contact that took the i-th delivery and by which
// rule (a Matched value), and false if none did (yet).
func (x *OutcomeIndex) Taken(i int) (Taker, string, bool) {
	if !x.claimed[i] {
		return Taker{}, "", false
	}
	return x.taker[i], x.how[i], true
}

// Unmatched returns how many deliveries no contact took.
func (x *OutcomeIndex) Unmatched() int {
	n := 0
	for _, c := range x.claimed {
		if !c {
			n++
		}
	}
	return n
}

// Answered reports whether a delivery's event says its call was
// answered (call.answered): a conversation, which Reg F's contact
// pressure holds the number for.
func Answered(event string) bool { return eventRank(event) == rankAnswered }

// What a delivery tells of its call, in the order a call goes through
// them: the report's outcome of a contact is its deliveries' highest.
const (
	rankOther    = iota // an event callrun does not know
	rankReported        // the service reported the call, at no known point of it
	rankStarted
	rankAnswered
	rankEnded
)

// Via values of a stored delivery: where it was delivered.
const (
	// ViaAgent: to an agent's weebhook_endpoint, the outcomes URL's path
	// with [AgentPathSuffix] that callrun gives the agents it creates.
	ViaAgent = "agent"
)

// deliveryRank is what delivery d tells of its call, by one rule that the
// report, status and pacing share: its event, when it names one; when it
// names none, the call's completion if it came to an agent's webhook
// (which the service calls "when the agent completes a call"), else, an
// account webhook's contact-only delivery, only that the service reported
// the call (rankReported), which never ends it.
func deliveryRank(d store.Delivery) int {
	switch {
	case d.Event != "":
		return eventRank(d.Event)
	case d.Via == ViaAgent:
		return rankEnded
	}
	return rankReported
}

// outcomeName is the report's name of what a delivery tells, one of
// [report.OutcomeNames].
func outcomeName(rank int) string {
	return [...]string{rankOther: "other", rankReported: "reported", rankStarted: "started", rankAnswered: "answered", rankEnded: "ended"}[rank]
}

// eventRank orders events as a call goes through them; rankOther for one
// callrun does not know. Events are compared in any case, with _ - or a
// space for the dot, as apiclient.ServiceEvent folds them, with or
// without "call.";
// call.completed, what the service's agents send, is an end. Other senders' events (Retell's
// call_analyzed, Vapi's end-of-call-report) are other: what they say of
// the call is theirs.
func eventRank(event string) int {
	folded := strings.NewReplacer("_", ".", "-", ".", " ", ".").Replace(strings.ToLower(strings.TrimSpace(event)))
	switch strings.TrimPrefix(folded, "call.") {
	case "started":
		return rankStarted
	case "answered":
		return rankAnswered
	case "ended", "completed":
		return rankEnded
	}
	return rankOther
}

// OptsOut reports whether delivery d says "do not call me":
// outcomes.opt_out's field (matched as [apiclient.Field] matches keys,
// wherever it is nested) holds one of its values, compared folded
// ([foldString]: in any case, without spaces, _, - or other marks, so
// "Do Not Call" and "do-not-call" are do_not_call). Every value counts:
// each of a form field sent more than once, and each string of a JSON
// array. `callrun listen` then puts the number on the do-not-call list.
func (o *Outcomes) OptsOut(d apiclient.Delivery) bool {
	if o == nil || o.OptOut == nil {
		return false
	}
	wants := make([]string, 0, len(o.OptOut.Values))
	for _, w := range o.OptOut.Values {
		wants = append(wants, strings.TrimSpace(w))
	}
	says := func(v string) bool {
		v = strings.TrimSpace(v)
		fv := foldString(v)
		for _, w := range wants {
			// A value of no letters or digits folds to nothing: it is
			// compared as written, in any case.
			if fw := foldString(w); fw != "" && fv == fw || fw == "" && v != "" && strings.EqualFold(v, w) {
				return true
			}
		}
		return false
	}
	for _, v := range d.Values(o.OptOut.Field) {
		if says(v) {
			return true
		}
		var items []any
		if strings.HasPrefix(strings.TrimSpace(v), "[") && json.Unmarshal([]byte(v), &items) == nil {
			for _, it := range items {
				if s, ok := it.(string); ok && says(s) {
					return true
				}
			}
		}
	}
	return false
}

// ReadNumber reads a number given by hand (`callrun suppress`) or in a
// delivery, with the campaign's region for one written without its
// country code, into E.164. The error names the number.
func (f *File) ReadNumber(raw string) (string, error) {
	e164, _, err := phone.Normalize(raw, f.Region)
	return e164, err // the error names raw; e164 is "" with it
}

// NumberFields are the fields a delivery names the called person's
// number by, in order, as [apiclient.Field] matches them (any case, at
// the top or nested in data, contact, customer, lead, call or message):
// the service's phone_number, and the names its peers give it.
// outcomes.phone_field names one more, looked at first. ElevenLabs'
// post-call webhook names the person by its call's external_number
// (data.metadata.phone_call; its agent_number is the campaign's line).
var NumberFields = []string{"phone_number", "to_number", "customer.number", "customer_number", "contact_number", "phone", "to", "mobile", "metadata.phone_call.external_number"}

// CallerNumberField is the service's envelope's number of the call's
// other end (data.caller_number). For a call callrun started it is the
// called person, unless it is one of the campaign's own numbers
// (outcomes.own_numbers, its local-presence numbers among them); it is
// read only when no field of [NumberFields] holds a number.
const CallerNumberField = "caller_number"

// DeliveryNumber is the number of the person a delivery is about, as
// [File.DeliveryNumber] reads it.
type DeliveryNumber struct {
	E164 string // "" when unreadable
	// From is the path of the field it was read from; Raw is that
	// field's value as the sender wrote it (when none reads, the first
	// value of those fields).
	From, Raw string
	// Caller: it was read from caller_number, which a sender may fill
	// with either end of the call: it is the person's only if it is a
	// number the campaign called.
	Caller bool
	// Err says why no number was read: no field holds one, two fields
	// give different ones, caller_number is the campaign's own.
	Err error
}

// DeliveryNumber reads the number of the person a delivery (its fields)
// is about: from the fields outcomes.phone_field and [NumberFields]
// name, and, when none holds one, from caller_number unless it is one of
// the campaign's own numbers. A number of the campaign's own is never
// the person's, whatever field holds it, and nor is the called number
// (to_number, to) of a call the delivery says was inbound ([inboundCall]): when the fields give only such
// a number, the person is the call's other end ([OtherEndFields]), and
// with none there the number does not read. Of one name, the shallowest
// fields are read (a message's own customer, not its call's). Two fields that give
// different numbers make it unreadable: a delivery whose number is in
// doubt is nobody's.
// The report, status, pacing and listen read a delivery's number through
// it.
func (f *File) DeliveryNumber(fields map[string]string) DeliveryNumber {
	var got DeliveryNumber
	seen := false
	raw := ""
	for _, name := range append(f.numberFields(), CallerNumberField) {
		if _, vals := apiclient.ShallowestValues(fields, name); raw == "" && len(vals) > 0 {
			raw = vals[0]
		}
	}
	var own *DeliveryNumber // the first of the campaign's own numbers read, never the person's
	inbound := inboundCall(fields)
	for _, name := range f.numberFields() {
		paths, vals := apiclient.ShallowestValues(fields, name)
		for i, v := range vals {
			e164, err := f.ReadNumber(v)
			if err != nil {
				continue
			}
			switch {
			case f.Outcomes != nil && f.Outcomes.isOwn(e164),
				inbound && calledFields[normName(name)]:
				if own == nil {
					own = &DeliveryNumber{E164: e164, From: paths[i], Raw: v}
				}
			case !seen:
				got, seen = DeliveryNumber{E164: e164, From: paths[i], Raw: v}, true
			case got.E164 != e164:
				return DeliveryNumber{Raw: raw, Err: fmt.Errorf("two of its fields give different numbers (%s: %s, %s: %s)", got.From, got.E164, paths[i], e164)}
			}
		}
	}
	if seen {
		return got
	}
	if own != nil {
		// The number it gives is callrun's own (an inbound call's
		// to_number, say): the person is the call's other end.
		return f.otherEnd(fields, *own)
	}
	paths, vals := apiclient.ShallowestValues(fields, CallerNumberField)
	for i, v := range vals {
		e164, err := f.ReadNumber(v)
		if err != nil {
			continue
		}
		if f.Outcomes != nil && f.Outcomes.isOwn(e164) {
			return DeliveryNumber{Raw: v, Err: fmt.Errorf("its only number, %s (%s), is one of the campaign's own (outcomes.own_numbers)", e164, paths[i])}
		}
		return DeliveryNumber{E164: e164, From: paths[i], Raw: v, Caller: true}
	}
	return DeliveryNumber{Raw: raw, Err: fmt.Errorf("none of its fields holds a number that reads (%s)", strings.Join(append(f.numberFields(), CallerNumberField), ", "))}
}

// calledFields are the fields of [NumberFields], as [normName] writes
// them, that name the number a call went to: on an inbound call, the
// campaign's line, never the person's.
var calledFields = map[string]bool{"tonumber": true, "to": true}

// inboundCall reports whether a delivery's fields say its call, or its
// text message, came in to the campaign's line (Retell's and Twilio's
// direction "inbound", Telnyx's "incoming", Bland's inbound true,
// Twilio's incoming message's SmsStatus "received", a text message with
// no status of delivery, as Plivo and Vonage send one received): its called number is then
// the campaign's, whether or not outcomes.own_numbers lists it, and the
// person is the call's other end ([OtherEndFields]).
func inboundCall(fields map[string]string) bool {
	outbound := false
	for _, name := range []string{"direction", "call_direction"} {
		_, vals := apiclient.ShallowestValues(fields, name)
		for _, v := range vals {
			if v = strings.ToLower(strings.TrimSpace(v)); v == "inbound" || v == "incoming" {
				return true
			}
			outbound = outbound || strings.HasPrefix(strings.ToLower(strings.TrimSpace(v)), "outbound")
		}
	}
	_, vals := apiclient.ShallowestValues(fields, "inbound")
	for _, v := range vals {
		if strings.EqualFold(strings.TrimSpace(v), "true") {
			return true
		}
	}
	// A text message the person sent to the campaign's line, as Twilio's
	// incoming message webhook says it (SmsStatus received): its To is
	// the campaign's line, its From the person.
	for _, name := range []string{"SmsStatus", "MessageStatus"} {
		_, vals := apiclient.ShallowestValues(fields, name)
		for _, v := range vals {
			if strings.EqualFold(strings.TrimSpace(v), "received") {
				return true
			}
		}
	}
	// A text message with no status, as Plivo's incoming message webhook
	// (From, To, Text, MessageUUID) and Vonage's (msisdn or from, to,
	// text, messageId or message_uuid) send it: a status callback of a
	// message the campaign sent has a status, and no text.
	return !outbound && anyField(fields, messageIDFields) && anyField(fields, MessageBodyFields) &&
		!anyField(fields, messageStatusFields) && !anyField(fields, callIDFields)
}

// messageIDFields name a text message's id, messageStatusFields its
// status of delivery, in the webhooks of Twilio, Plivo and Vonage.
var (
	messageIDFields     = []string{"MessageSid", "SmsSid", "MessageUUID", "message_uuid", "messageId"}
	messageStatusFields = []string{"status", "SmsStatus", "MessageStatus"}
	// callIDFields name a call's id: a delivery of a call is no text
	// message, whatever else it holds.
	callIDFields = []string{"call_id", "call.id", "CallSid", "CallUUID"}
)

// anyField reports whether fields hold a value for one of names, at their
// shallowest ([apiclient.ShallowestValues]).
func anyField(fields map[string]string, names []string) bool {
	for _, name := range names {
		if _, vals := apiclient.ShallowestValues(fields, name); slices.ContainsFunc(vals, func(v string) bool { return strings.TrimSpace(v) != "" }) {
			return true
		}
	}
	return false
}

// OtherEndFields name the number of a call's other end, read only when
// the delivery's number ([NumberFields]) is one of the campaign's own
// (outcomes.own_numbers): a call to callrun's number, whose caller is the
// person.
// Vonage's msisdn is the person's in its SMS API's webhooks, sender of an
// incoming message and recipient of a receipt alike.
var OtherEndFields = []string{"from_number", "from", CallerNumberField, "msisdn"}

// otherEnd reads the number of a delivery whose number is own, one of the
// campaign's own: from [OtherEndFields], the first number that is none of
// the campaign's own. Two that differ, or none, make it unreadable: own
// is never the person's.
func (f *File) otherEnd(fields map[string]string, own DeliveryNumber) DeliveryNumber {
	var got DeliveryNumber
	for _, name := range OtherEndFields {
		paths, vals := apiclient.ShallowestValues(fields, name)
		for i, v := range vals {
			e164, err := f.ReadNumber(v)
			switch {
			case err != nil, f.Outcomes.isOwn(e164), e164 == own.E164:
			case got.E164 == "":
				got = DeliveryNumber{E164: e164, From: paths[i], Raw: v}
			case got.E164 != e164:
				return DeliveryNumber{Raw: own.Raw, Err: fmt.Errorf("its number, %s (%s), is the campaign's own (outcomes.own_numbers, or the called number of an inbound call), and two fields of the call's other end give different numbers (%s: %s, %s: %s)", own.E164, own.From, got.From, got.E164, paths[i], e164)}
			}
		}
	}
	if got.E164 == "" {
		return DeliveryNumber{Raw: own.Raw, Err: fmt.Errorf("its only number, %s (%s), is the campaign's own (outcomes.own_numbers, or the called number of an inbound call)", own.E164, own.From)}
	}
	return got
}

// ContactNumbers returns which of the E.164 numbers want a row of the
// campaign's sheets holds, reading the sheets: listen asks it of an
// opt-out whose number no field gives.
func (f *File) ContactNumbers(ctx context.Context, want map[string]bool) (map[string]bool, error) {
	have := map[string]bool{}
	err := f.NewContactReader(nil).Each(ctx, func(c *Contact) error {
		if want[c.Phone] {
			have[c.Phone] = true
		}
		return nil
	})
	return have, err
}

// numberFields are the fields a delivery's number is read from, in order.
func (f *File) numberFields() []string {
	if f.Outcomes != nil && f.Outcomes.PhoneField != "" {
		return append([]string{f.Outcomes.PhoneField}, NumberFields...)
	}
	return NumberFields
}

// FlagsDoNotCall returns the first field of delivery d (its path, and
// the value) that says do not call as a sheet's column would, whatever
// outcomes.opt_out says: a field named as a do-not-call flag (dnd,
// do_not_call, DoNotCall, opted_out, or a field nested under one, as
// dndSettings.Call.status; [DoNotCallHeader]) whose value is no "no"
// ([readFlagCell]: a yes, or a value callrun cannot read either way), or
// a field of labels, tags or a status whose value, or a string
// of its JSON array, is a do-not-call phrase. A CRM's webhook that a
// contact's DND was set (HighLevel's ContactDndUpdate: "dnd": true), or
// an account field the agent sets on the call, says so. listen's intake
// takes such a delivery for an opt-out; so is a change of such a flag
// named in a value (HubSpot's propertyName and propertyValue). A
// delivery with no such flag
// whose field names the date or the reason of one (do_not_call_date,
// dnc_reason) with a value is one too. Fields are visited in the order of
// their paths; "" when none says it.
func FlagsDoNotCall(d apiclient.Delivery) (field, value string) {
	paths := slices.Sorted(maps.Keys(d.Fields))
	sawFlag := false
	for _, path := range paths {
		name := path[strings.LastIndexByte(path, '.')+1:]
		if strings.Contains(strings.ToLower(path), "inbound") {
			continue // a block of what the person sends (HighLevel's inboundDndSettings), not of calls to them
		}
		// A flag nested under its name: dndSettings.Call.status, whose
		// message and code beside it are no flag.
		flag := deliveryFlagName(name) || name != path && flagLeaves[normName(name)] && deliveryFlagName(nestedFlagName(path))
		list := deliveryListName(name)
		if !flag && !list {
			continue
		}
		outcome := list && !isListHeader(name) && !readHeaderWords(name).has(words().other)
		sawFlag = sawFlag || flag
		values := d.Repeated[path]
		if values == nil {
			values = []string{d.Fields[path]}
		}
		for _, v := range values {
			if flag && readDeliveryFlag(v) != saysNothing {
				return path, v
			}
			if !list {
				continue
			}
			items := []string{v}
			var arr []any
			if strings.HasPrefix(strings.TrimSpace(v), "[") && json.Unmarshal([]byte(v), &arr) == nil {
				items = items[:0]
				for _, it := range arr {
					if s, ok := it.(string); ok {
						items = append(items, s)
					}
				}
			}
			for _, it := range items {
				if says, _ := readValueCell(it, nil); says == saysYes || outcome && outcomeSaysDoNotCall(it) {
					return path, v
				}
			}
			if len(items) == 0 && strings.HasPrefix(strings.TrimSpace(v), "[") {
				// Tags as objects: [{"name": "DNC"}].
				var objs []map[string]any
				if json.Unmarshal([]byte(v), &objs) == nil {
					for _, o := range objs {
						for _, k := range []string{"name", "label", "value", "tag", "title"} {
							if s, ok := o[k].(string); ok {
								if says, _ := readValueCell(s, nil); says == saysYes {
									return path, v
								}
							}
						}
					}
				}
			}
		}
	}
	// A change of a property, named in a value (HubSpot's
	// contact.propertyChange: propertyName hs_do_not_call, propertyValue
	// true).
	for _, path := range paths {
		if normName(path[strings.LastIndexByte(path, '.')+1:]) != "propertyname" || !DoNotCallHeader(d.Fields[path]) {
			continue
		}
		value := strings.TrimSuffix(path, path[strings.LastIndexByte(path, '.')+1:]) + "propertyValue"
		for _, p := range paths {
			if strings.EqualFold(p, value) && readDeliveryFlag(d.Fields[p]) != saysNothing {
				return p, d.Fields[p]
			}
		}
	}
	if sawFlag {
		return "", ""
	}
	// No flag: the date or the reason of one is set when it is
	// (do_not_call_date, dnc_reason), as a sheet's column is read.
	for _, path := range paths {
		name := path[strings.LastIndexByte(path, '.')+1:]
		if v := d.Fields[path]; doNotCallAboutHeader(name) && readFlagCell(v) != saysNothing {
			return path, v
		}
	}
	return "", ""
}

// nestedFlagName returns the name of the flag a field nested under one
// holds (data.dndSettings.Call.status, optOut.value), read from the
// nearest of its containers that is named as a flag ([deliveryFlagName])
// to its end, "dndSettings Call status": the containers above that name
// nothing of the flag, and a word of theirs ("data", a date in
// Portuguese; structuredData, custom_analysis_data) must not unmake it.
// With no such container it is the whole path.
func nestedFlagName(path string) string {
	segs := strings.Split(path, ".")
	for i := len(segs) - 2; i >= 0; i-- {
		if deliveryFlagName(segs[i]) {
			return strings.Join(segs[i:], " ")
		}
	}
	return strings.ReplaceAll(path, ".", " ")
}

// deliveryFlagName reports whether a delivery's field is named as a
// do-not-call flag: as a sheet's column is ([DoNotCallHeader]), or by an
// opt-out alone ("opt_out", "optOut", "unsubscribe": a field a voice
// agent's analysis sets on the call), which in a sheet names a flag only
// beside a word of calls, since an export's "Opt Out" is often its
// e-mails'. A name of another channel ("email_opt_out") or of the
// opt-out's date or reason is none.
func deliveryFlagName(name string) bool {
	if DoNotCallHeader(name) {
		return true
	}
	w, t := words(), readHeaderWords(name)
	return t.has(w.optOut) && !t.has(w.other) && !t.has(w.details) && !t.has(w.dates)
}

// deliveryListName reports whether a delivery's field is read for a
// do-not-call phrase as a sheet's labels, tags or status are
// ([isListHeader]), or is the call's outcome by another name than
// outcomes.opt_out's field: an outcome, a result, a disposition, an
// intent or a classification ("call_outcome": "Do Not Call").
func deliveryListName(name string) bool {
	if isListHeader(name) {
		return true
	}
	t := readHeaderWords(name)
	return slices.ContainsFunc(t.words, func(x string) bool { return outcomeWords[x] })
}

// outcomeSaysDoNotCall reports whether the value of a delivery's field of
// the call's outcome ([outcomeWords]) says do not call other than as a
// tag would: a do-not-call phrase among its words ("Do Not Call -
// Customer Request", "dnc_request"), as a note's, or an opt-out's words
// ("opt_out", "Unsubscribe"), which in a call's outcome are the call's,
// unless it names another channel ("Opt-out: e-mail"). A do-not-call
// phrase counts whatever channel is named beside it ("Opted out of
// e-mails", an event "email.unsubscribed"): a delivery that says so is
// held to say it of calls too. A phrase whole after a negation alone
// ("not do_not_call", "No DNC") is a no.
func outcomeSaysDoNotCall(v string) bool {
	w := words()
	if ws := foldWords(v); len(ws) > 1 && slices.Contains(w.negations, ws[0]) && w.phrases[strings.Join(ws[1:], "")] {
		return false
	}
	if mentionsIn(strings.NewReplacer("_", " ", "-", " ").Replace(v), nil, true) {
		return true
	}
	t := readHeaderWords(v)
	return t.has(w.optOut) && !t.has(w.other)
}

// outcomeWords name a delivery's field of the call's outcome, as
// [foldWords] writes them, or of the delivery's event, whose name may be
// the opt-out itself ("event": "contact.opted_out").
var outcomeWords = map[string]bool{"outcome": true, "outcomes": true, "result": true, "results": true, "disposition": true,
	"dispositions": true, "intent": true, "classification": true, "resolution": true, "event": true, "topic": true}

// flagLeaves are the names of the field that holds a flag nested under
// the flag's name (dndSettings.Call.status), as [normName] writes them.
// An evaluation of the call named as a flag holds it in its result
// (ElevenLabs' data.analysis.evaluation_criteria_results.do_not_call.result:
// success, failure or unknown).
var flagLeaves = map[string]bool{"status": true, "enabled": true, "active": true, "state": true, "value": true, "result": true}

// normName is a field's name lower case, without _, - or spaces.
func normName(s string) string {
	return strings.NewReplacer("_", "", "-", "", " ", "").Replace(strings.ToLower(s))
}

// readDeliveryFlag reads the value of a delivery's do-not-call flag as
// [readFlagCell] reads a sheet's, and the words senders write for a flag's
// state (HighLevel's DND: active and permanent, inactive; enabled,
// disabled; an evaluation's success and failure, ElevenLabs' result of
// a criterion the call is judged by): what a sheet's flag column never
// holds. An evaluation's "unknown" reads neither way, and lists the
// number, as any value callrun cannot read.
func readDeliveryFlag(v string) cellSays {
	switch normName(strings.TrimSpace(v)) {
	case "active", "enabled", "permanent", "success", "succeeded", "passed":
		return saysYes
	case "inactive", "disabled", "failure", "failed":
		return saysNothing
	}
	return readFlagCell(v)
}

// isOwn reports whether the E.164 number is one of outcomes.own_numbers.
func (o *Outcomes) isOwn(e164 string) bool {
	return o != nil && slices.Contains(o.own, e164)
}
