package campaign

import (
	"path/filepath"
	"strings"

	"github.com/callrun/callrun/campaign/phone"
	"github.com/callrun/callrun/report"
	"github.com/callrun/callrun/report/store"
)

// DeliveriesDir returns the directory of the deliveries `callrun listen`
// stores for the campaign, given the state directory dir of the campaign
// or of one of its shards: the campaign's own, which its shards share.
func (f *File) DeliveriesDir(dir string) string {
	if f.Shard.Sharded() {
		return filepath.Dir(dir)
	}
	return dir
}

// OutcomeIndex matches a campaign's stored deliveries to its contacts,
// for the report. A delivery belongs to the contact with the same
// normalised number and, where the delivery names its agent, the same
// agent, else (where both have one) the same ghl_contact_id; the first
// such contact the report meets takes it. The rest stay unmatched.
type OutcomeIndex struct {
	fields  []string
	all     []store.Delivery
	byPhone map[string][]int // normalised number -> indexes into all
	claimed []bool
}

// NewOutcomeIndex indexes the deliveries ds by their numbers, read with
// the campaign's region (the service sends E.164 numbers back; a number
// that cannot be read matches no contact).
func NewOutcomeIndex(f *File, norm *phone.Normalizer, ds []store.Delivery) *OutcomeIndex {
	x := &OutcomeIndex{fields: f.Outcomes.DetailFields(), all: ds, byPhone: map[string][]int{}, claimed: make([]bool, len(ds))}
	for i, d := range ds {
		e164, _, err := norm.Normalize(d.Fields["phone_number"], f.Region)
		if err != nil {
			continue
		}
		x.byPhone[e164] = append(x.byPhone[e164], i)
	}
	return x
}

// Outcome takes the deliveries of contact c, whose calls went through the
// service's agent agentID, and says what they tell: the latest event
// (ended after answered after started, whatever order they came in; a
// tie goes to the one received last), how many calls the service started,
// and the fields outcomes.fields names, each from the latest delivery
// that has it.
func (x *OutcomeIndex) Outcome(c *Contact, agentID string) report.Outcome {
	var mine []store.Delivery
	for _, i := range x.byPhone[c.Phone] {
		if x.claimed[i] || !x.belongs(x.all[i], c, agentID) {
			continue
		}
		x.claimed[i] = true
		mine = append(mine, x.all[i])
	}
	var o report.Outcome
	if len(mine) == 0 {
		return o
	}
	// Latest first by rank, then by arrival.
	latest := 0
	for i, d := range mine {
		switch eventRank(d.Event) {
		case eventRank(EventStarted):
			o.Starts++
		case eventRank(EventAnswered):
			o.Answered = true
		}
		if r, lr := eventRank(d.Event), eventRank(mine[latest].Event); r > lr || r == lr && !d.At.Before(mine[latest].At) {
			latest = i
		}
	}
	o.Event, o.At = outcomeName(mine[latest].Event), report.Timestamp(mine[latest].At)
	var detail []string
	for _, name := range x.fields {
		val, rank := "", -1
		for _, d := range mine {
			if v := d.Fields[name]; v != "" && eventRank(d.Event) >= rank {
				val, rank = v, eventRank(d.Event)
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
	ghl, mine := d.Fields["ghl_contact_id"], c.Fields[FieldGHLContactID]
	return ghl == "" || mine == "" || ghl == mine
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

// The service's account webhook events.
const (
	EventStarted  = "call.started"
	EventAnswered = "call.answered"
	EventEnded    = "call.ended"
)

// outcomeName is the report's name of a delivered event: started,
// answered, ended (also an agent webhook's completion), or other.
func outcomeName(event string) string {
	switch eventRank(event) {
	case 1:
		return "started"
	case 2:
		return "answered"
	case 3:
		return "ended"
	}
	return "other"
}

// eventRank orders events as a call goes through them; 0 for one callrun
// does not know.
func eventRank(event string) int {
	switch strings.TrimPrefix(strings.ToLower(event), "call.") {
	case "started":
		return 1
	case "answered":
		return 2
	case "ended", "completed":
		return 3
	}
	return 0
}
