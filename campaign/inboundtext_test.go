package campaign

import (
	"testing"

	"github.com/callrun/callrun/apiclient"
)

// TestTextSaysDoNotCall: the body of a text message the person sent to
// the campaign's line (Twilio's incoming message, SmsStatus received;
// a message whose direction is inbound) says do not call when it is one
// of the keywords that revoke consent whole, or the words a person says
// on a call; the body of a message the campaign sent is never read.
func TestTextSaysDoNotCall(t *testing.T) {
	twilio := func(body string) map[string]string {
		return map[string]string{"SmsStatus": "received", "From": "+19175550404", "To": "+19175550400", "Body": body}
	}
	for _, tc := range []struct {
		name   string
		fields map[string]string
		want   string
	}{
		{"STOP", twilio("STOP"), "Body"},
		{"Stop.", twilio(" Stop. "), "Body"},
		{"stopall", twilio("STOPALL"), "Body"},
		{"cancel", twilio("Cancel"), "Body"},
		{"end", twilio("END"), "Body"},
		{"quit", twilio("quit"), "Body"},
		{"revoke", twilio("Revoke"), "Body"},
		{"opt out", twilio("Opt out"), "Body"},
		{"unsubscribe", twilio("UNSUBSCRIBE"), "Body"},
		{"words", twilio("Please stop calling me"), "Body"},
		{"remove me", twilio("Remove me from your list"), "Body"},
		{"a question", twilio("Can you call me back at 5?"), ""},
		{"stop by", twilio("I'll stop by on Tuesday"), ""},
		{"yes", twilio("Yes"), ""},
		{"empty", twilio(""), ""},
		// A status callback of a message the campaign sent: not received.
		{"delivered", map[string]string{"SmsStatus": "delivered", "To": "+19175550404", "From": "+19175550400", "Body": "STOP"}, ""},
		{"telnyx inbound", map[string]string{"data.payload.direction": "inbound", "data.payload.text": "STOP", "data.payload.from.phone_number": "+19175550407"}, "data.payload.text"},
		{"plivo", map[string]string{"From": "19175550404", "To": "19175550400", "Type": "sms", "Text": "STOP", "MessageUUID": "2a340179-0d6f-4d6b-9d0f-8e3c2cbcd8ff"}, "Text"},
		{"plivo status", map[string]string{"From": "19175550400", "To": "19175550404", "Status": "delivered", "MessageUUID": "2a340179-0d6f-4d6b-9d0f-8e3c2cbcd8ff", "Text": "STOP"}, ""},
		{"vonage sms", map[string]string{"msisdn": "19175550404", "to": "19175550400", "messageId": "0A0000000123ABCD1", "text": "Stop", "type": "text", "keyword": "STOP"}, "text"},
		{"vonage messages", map[string]string{"channel": "sms", "message_uuid": "aaaaaaaa-bbbb-cccc-dddd-0123456789ab", "to": "19175550400", "from": "19175550404", "text": "STOP", "message_type": "text"}, "text"},
		{"close inbound", map[string]string{"event.object_type": "activity.sms", "event.data.direction": "inbound", "event.data.text": "STOP", "event.data.remote_phone": "+19175550404"}, "event.data.text"},
		{"close outbound", map[string]string{"event.object_type": "activity.sms", "event.data.direction": "outbound", "event.data.text": "Reply STOP to opt out", "event.data.remote_phone": "+19175550404"}, ""},
		{"telnyx outbound", map[string]string{"data.payload.direction": "outbound", "data.payload.text": "Acme: reply STOP to opt out.", "data.payload.to": `[{"phone_number":"+19175550407"}]`}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := TextSaysDoNotCall(apiclient.Delivery{Fields: tc.fields}); got != tc.want {
				t.Errorf("TextSaysDoNotCall(%v) = %q, want %q", tc.fields, got, tc.want)
			}
		})
	}
}
