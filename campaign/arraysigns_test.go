package campaign

import "testing"

// TestArraySaysDoNotCall: a do-not-call sign in an array callrun does not
// read as deliveries is found, and named by its path and element; the
// agent's own set-up, the turns of the agent in a transcript under a
// name callrun does not know, outcomes.opt_out's own field, and arrays
// that say nothing are not.
func TestArraySaysDoNotCall(t *testing.T) {
	o := &Outcomes{OptOut: &OptOut{Field: "disposition", Values: []string{"do_not_call"}}}
	for _, c := range []struct{ name, body, want string }{
		{"a Segment batch's track properties", `{"batch":[{"type":"track","event":"Call Ended","properties":{"phone":"+14155550132","disposition":"do_not_call"}}],"sentAt":"2026-11-29T20:00:00.000Z"}`, "batch[0].properties.disposition"},
		{"a contact's dnd", `{"contacts":[{"mobile":"+14155550132","dnd":false},{"mobile":"+14155550133","dnd":true}]}`, "contacts[1].dnd"},
		{"a string that says it", `{"event":"note.added","notes":["Called twice.","Customer asked not to be called again."]}`, "notes[string 1]"},
		{"turns under a name not known, the person asks", `{"event":"call.ended","phone_number":"+14155550132","dialog":[{"role":"agent","text":"Hi Ada."},{"role":"user","text":"Please stop calling me."}]}`, "dialog[1]"},
		{"turns under a name not known, the agent offers", `{"event":"call.ended","phone_number":"+14155550132","dialog":[{"role":"agent","text":"Say stop to be put on our do not call list."},{"role":"user","text":"Okay, call me next week."}]}`, ""},
		{"the agent's tools", `{"message":{"type":"end-of-call-report","customer":{"number":"+14155550132"},"assistant":{"model":{"tools":[{"type":"function","function":{"name":"add_to_dnc","description":"Put the caller on the do not call list when they ask not to be called again."}}]}}}}`, ""},
		{"another value of the opt-out field", `{"event":"call.ended","data":{"phone_number":"+442079460123","disposition":["completed","not do_not_call"]}}`, ""},
		{"a call's legs", `{"body":{"parties":[{"from":{"phoneNumber":"+14155550132"},"status":{"code":"Disconnected"}}]}}`, ""},
	} {
		if got, _ := o.ArraySaysDoNotCall(readDelivery(t, c.body)); got != c.want {
			t.Errorf("%s: ArraySaysDoNotCall = %q, want %q", c.name, got, c.want)
		}
	}
}
