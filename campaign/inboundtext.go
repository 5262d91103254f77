package campaign

import (
	"maps"
	"slices"
	"strings"

	"github.com/callrun/callrun/apiclient"
)

// MessageBodyFields are the fields that hold the words of a text message
// a person sent: Twilio's Body, Telnyx's and Vonage's text, Plivo's Text.
var MessageBodyFields = []string{"body", "text"}

// optOutKeywords are the replies to a text that revoke consent whole, as
// the FCC's rule of 2024 names them (47 CFR 64.1200(a)(10): "stop",
// "quit", "end", "revoke", "opt out", "cancel", "unsubscribe") and
// Twilio's opt-out keywords add ("stopall", "optout"), as [foldString]
// writes them.
var optOutKeywords = map[string]bool{"stop": true, "stopall": true, "quit": true, "end": true, "revoke": true,
	"optout": true, "cancel": true, "unsubscribe": true}

// TextSaysDoNotCall returns the path of the body of a text message that
// delivery d says the person sent to the campaign's line ([inboundCall]:
// Twilio's incoming message, a message whose direction is inbound) when
// it asks not to be called or texted again: one of the keywords that
// revoke consent whole ("STOP", "Cancel", "opt out"), or words a person
// says on a call that [spokenDoNotCall] reads ("Stop calling me",
// "please don't call me again"). "" when d is no such message, or its
// body says no such thing. The body of a message the campaign sent (its
// direction outbound: "Reply STOP to opt out") is never read.
func TextSaysDoNotCall(d apiclient.Delivery) string {
	says := func(v string) bool {
		if v = strings.TrimSpace(v); v == "" || strings.HasPrefix(v, "{") || strings.HasPrefix(v, "[") {
			return false
		}
		return optOutKeywords[foldString(v)] || spokenDoNotCall(v)
	}
	if inboundCall(d.Fields) {
		for _, name := range MessageBodyFields {
			paths, vals := apiclient.ShallowestValues(d.Fields, name)
			for i, v := range vals {
				if says(v) {
					return paths[i]
				}
			}
		}
	}
	// A message nested in an event, its direction beside its text, as
	// Close's SMS activity (event.data.direction, event.data.text).
	for _, path := range slices.Sorted(maps.Keys(d.Fields)) {
		i := strings.LastIndexByte(path, '.')
		if i < 0 || !slices.Contains(MessageBodyFields, normName(path[i+1:])) {
			continue
		}
		dir := strings.ToLower(strings.TrimSpace(d.Fields[path[:i+1]+"direction"]))
		if (dir == "inbound" || dir == "incoming") && says(d.Fields[path]) {
			return path
		}
	}
	return ""
}
