package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/callrun/callrun/apiclient/sandbox"
)

// optOutShapes are opt-outs as senders write them that callrun once read
// as no opt-out: each a body, its Content-Type, and the person it is of.
var optOutShapes = []struct {
	name, ctype, body, person string
	query                     string // the hook's query, if any
}{
	// A JSON object that names a member twice (a hand-written template of
	// a CRM workflow or a relay that adds disposition once more): every
	// value counts, as every value of a form field sent twice does.
	{"json-duplicate-member", "application/json",
		`{"event":"call.ended","phone_number":"+19175550301","disposition":"do_not_call","disposition":"completed"}`, "+19175550301", ""},
	// A relay that forwards the sender's JSON as a string: Amazon SNS's
	// notification (its Message), a relay's "payload" member, and a form
	// whose payload field holds the JSON.
	{"sns-message-string", "text/plain; charset=UTF-8",
		`{"Type":"Notification","MessageId":"5a3b","TopicArn":"arn:aws:sns:us-east-1:123456789012:calls","Message":"{\"event\":\"call.ended\",\"phone_number\":\"+19175550302\",\"disposition\":\"do_not_call\"}","Timestamp":"2026-11-29T20:00:00.000Z","SignatureVersion":"1"}`, "+19175550302", ""},
	{"json-payload-string", "application/json",
		`{"payload":"{\"event\":\"call.ended\",\"data\":{\"phone_number\":\"+19175550303\",\"disposition\":\"do_not_call\"}}"}`, "+19175550303", ""},
	{"form-payload-json", "application/x-www-form-urlencoded",
		"payload=%7B%22event%22%3A%22call.ended%22%2C%22phone_number%22%3A%22%2B19175550304%22%2C%22disposition%22%3A%22do_not_call%22%7D", "+19175550304", ""},
	// A form sent as JSON (a Content-Type header set by hand on a form's
	// webhook): the mirror of JSON sent as a form.
	{"form-sent-as-json", "application/json",
		"event=call.ended&phone_number=%2B19175550305&disposition=do_not_call", "+19175550305", ""},
	// A summary in French, "ne m’appelez plus", in another charset than
	// UTF-8: a form in Windows-1252, with its charset named and without,
	// a JSON body in Windows-1252, and one in UTF-16 with its byte order
	// mark.
	{"form-windows-1252", "application/x-www-form-urlencoded; charset=windows-1252",
		"event=call.ended&phone_number=%2B19175550306&summary=Le+client+a+dit+%3A+ne+m%92appelez+plus.", "+19175550306", ""},
	{"form-latin-bytes-no-charset", "application/x-www-form-urlencoded",
		"event=call.ended&phone_number=%2B19175550307&summary=Le+client+a+dit+%3A+ne+m%92appelez+plus.", "+19175550307", ""},
	{"json-windows-1252", "application/json; charset=windows-1252",
		"{\"event\":\"call.ended\",\"phone_number\":\"+19175550308\",\"summary\":\"Le client a dit : ne m\x92appelez plus.\"}", "+19175550308", ""},
	{"json-utf-16", "application/json",
		utf16LE("{\"event\":\"call.ended\",\"phone_number\":\"+19175550309\",\"summary\":\"Le client a dit : ne m’appelez plus.\"}"), "+19175550309", ""},
	// JSON in UTF-8, as JSON is, under a Content-Type that names another
	// charset (a sender's default label, ISO-8859-1): its bytes are
	// UTF-8, and read from ISO-8859-1 its "m’appelez" is "mâ€™appelez".
	{"json-utf-8-labelled-latin-1", "application/json; charset=ISO-8859-1",
		"{\"event\":\"call.ended\",\"phone_number\":\"+19175550316\",\"summary\":\"Le client a dit : ne m’appelez plus.\"}", "+19175550316", ""},
	// A summary whose text is a JSON object (a relay's or an LLM's
	// structured summary, stringified): read as an object, its words
	// are still the summary's.
	{"json-summary-object-string", "application/json",
		`{"event":"call.ended","phone_number":"+19175550317","summary":"{\"text\":\"The customer asked not to be called again.\",\"sentiment\":\"negative\"}"}`, "+19175550317", ""},
	{"form-summary-object", "application/x-www-form-urlencoded",
		"event=call.ended&phone_number=%2B19175550318&summary=%7B%22text%22%3A%22The+customer+asked+not+to+be+called+again.%22%7D", "+19175550318", ""},
	// JSON encoded twice: a relay that stringifies what it forwards.
	{"json-encoded-twice", "application/json",
		`"{\"event\":\"call.ended\",\"phone_number\":\"+19175550315\",\"disposition\":\"do_not_call\"}"`, "+19175550315", ""},
	// An object that wraps an array of deliveries, as batching senders
	// write it: a "data" array beside the batch's own fields; Svix
	// Stream's batch of events, each its payload
	// (https://docs.svix.com/stream/sinks/segment: input.events[].payload);
	// an items array inside a payload object.
	{"wrapped-data-array", "application/json",
		`{"object":"list","has_more":false,"data":[{"event":"call.started","phone_number":"+14155550132"},{"event":"call.ended","phone_number":"+19175550323","disposition":"do_not_call"}]}`, "+19175550323", ""},
	{"wrapped-events-payload", "application/json",
		`{"events":[{"eventType":"call.ended","payload":{"event":"call.ended","phone_number":"+19175550324","disposition":"do_not_call"}}],"sink":"strm_30XKA2tCdjHue2qLkTgc0"}`, "+19175550324", ""},
	{"wrapped-payload-items", "application/json",
		`{"payload":{"count":1,"items":[{"call_id":"c_9","to_number":"+19175550325","status":"completed","summary":"The customer asked not to be called again."}]}}`, "+19175550325", ""},
	// Newline-delimited JSON (JSON Lines): a batching sender's deliveries
	// one a line, once refused 400 for ever.
	{"ndjson", "application/x-ndjson",
		"{\"event\":\"call.started\",\"phone_number\":\"+14155550132\"}\n{\"event\":\"call.ended\",\"phone_number\":\"+19175550330\",\"disposition\":\"do_not_call\"}\n", "+19175550330", ""},
	// A Salesforce Outbound Message (SOAP; the outbound messaging WSDL's
	// notifications, each a record's sObject) of a Lead whose DoNotCall
	// was set, its Phone and MobilePhone in national forms (its DoNotCall
	// is on both: the person's), and a Contact in the same
	// message whose DoNotCall is false. Once refused 400 on every
	// attempt, until Salesforce dropped it.
	{"salesforce-outbound-message", "text/xml; charset=utf-8", salesforceDoNotCall, "+19175550331", ""},
	{"salesforce-outbound-message-mobile", "text/xml; charset=utf-8", salesforceDoNotCall, "+19175550333", ""},
	// A CampaignMember's record (Salesforce's object reference: its
	// DoNotCall, Phone and MobilePhone are the Lead's or Contact's, and
	// its Type says which), whose Type is no event of a delivery.
	{"salesforce-campaign-member-mobile", "text/xml; charset=utf-8", salesforceCampaignMember, "+19175550337", ""},
	// A form of nested fields in brackets, as PHP and Rails write them,
	// and Mailchimp's webhooks (type=...&data[merges][PHONE]=...,
	// https://mailchimp.com/developer/marketing/guides/sync-audience-data-webhooks/):
	// data[phone_number] is data.phone_number.
	{"form-brackets", "application/x-www-form-urlencoded",
		"event=call.ended&data%5Bphone_number%5D=%2B19175550334&data%5Bdisposition%5D=do_not_call", "+19175550334", ""},
	// A summary that reports the opt-out in the third person, as an AI's
	// summary in Spanish, Portuguese, French or German writes it.
	{"summary-spanish-third-person", "application/json",
		`{"event":"call.ended","phone_number":"+19175550319","summary":"El cliente pidió que no lo llamen más."}`, "+19175550319", ""},
	{"summary-portuguese-third-person", "application/json",
		`{"event":"call.ended","phone_number":"+19175550320","summary":"O cliente pediu para não ligarem mais."}`, "+19175550320", ""},
	{"summary-french-third-person", "application/json",
		`{"event":"call.ended","phone_number":"+19175550321","summary":"Le client ne veut plus être appelé."}`, "+19175550321", ""},
	{"summary-german-third-person", "application/json",
		`{"event":"call.ended","phone_number":"+19175550322","summary":"Der Kunde möchte nicht mehr angerufen werden."}`, "+19175550322", ""},
	// An agent's completion POSTed with its fields in the URL's query
	// and no body, as a GET would send them.
	{name: "post-query-no-body", ctype: "application/x-www-form-urlencoded", person: "+19175550310",
		query: "event=call.ended&phone_number=%2B19175550310&disposition=do_not_call"},
}

// salesforceDoNotCall is a Salesforce Outbound Message of two
// notifications, in the envelope of the outbound messaging WSDL
// (http://soap.sforce.com/2005/09/outbound; its shape as
// aspnet/WebHooks' Salesforce receiver tests read it): a Lead whose
// DoNotCall is true, and a Contact whose DoNotCall is false.
const salesforceDoNotCall = `<?xml version="1.0" encoding="UTF-8"?>
<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
 <soapenv:Body>
  <notifications xmlns="http://soap.sforce.com/2005/09/outbound">
   <OrganizationId>00D000000000062EAA</OrganizationId>
   <ActionId>04k000000000002AAA</ActionId>
   <SessionId xsi:nil="true"/>
   <EnterpriseUrl>https://example.my.salesforce.com/services/Soap/c/59.0/00D000000000062</EnterpriseUrl>
   <PartnerUrl>https://example.my.salesforce.com/services/Soap/u/59.0/00D000000000062</PartnerUrl>
   <Notification>
    <Id>04l000000000001AAA</Id>
    <sObject xsi:type="sf:Lead" xmlns:sf="urn:sobject.enterprise.soap.sforce.com">
     <sf:Id>00Q000000000001AAA</sf:Id>
     <sf:DoNotCall>true</sf:DoNotCall>
     <sf:HasOptedOutOfEmail>false</sf:HasOptedOutOfEmail>
     <sf:MobilePhone>917-555-0333</sf:MobilePhone>
     <sf:Phone>(917) 555-0331</sf:Phone>
    </sObject>
   </Notification>
   <Notification>
    <Id>04l000000000002AAA</Id>
    <sObject xsi:type="sf:Contact" xmlns:sf="urn:sobject.enterprise.soap.sforce.com">
     <sf:Id>003000000000001AAA</sf:Id>
     <sf:DoNotCall>false</sf:DoNotCall>
     <sf:MobilePhone>+14155550132</sf:MobilePhone>
     <sf:Phone>+14155550132</sf:Phone>
    </sObject>
   </Notification>
  </notifications>
 </soapenv:Body>
</soapenv:Envelope>
`

// salesforceCampaignMember is a Salesforce Outbound Message of a
// CampaignMember whose DoNotCall is true: its fields as
// https://developer.salesforce.com/docs/atlas.en-us.api.meta/api/sforce_api_objects_campaignmember.htm
// lists them (Type: Lead or Contact; Status: a campaign's member status),
// in the envelope of salesforceDoNotCall.
const salesforceCampaignMember = `<?xml version="1.0" encoding="UTF-8"?>
<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
 <soapenv:Body>
  <notifications xmlns="http://soap.sforce.com/2005/09/outbound">
   <OrganizationId>00D000000000062EAA</OrganizationId>
   <ActionId>04k000000000003AAA</ActionId>
   <Notification>
    <Id>04l000000000003AAA</Id>
    <sObject xsi:type="sf:CampaignMember" xmlns:sf="urn:sobject.enterprise.soap.sforce.com">
     <sf:Id>00v000000000001AAA</sf:Id>
     <sf:CampaignId>701000000000001AAA</sf:CampaignId>
     <sf:LeadId>00Q000000000002AAA</sf:LeadId>
     <sf:DoNotCall>true</sf:DoNotCall>
     <sf:MobilePhone>917-555-0337</sf:MobilePhone>
     <sf:Phone>(917) 555-0336</sf:Phone>
     <sf:Status>Responded</sf:Status>
     <sf:Type>Lead</sf:Type>
    </sObject>
   </Notification>
  </notifications>
 </soapenv:Body>
</soapenv:Envelope>
`

// heldOptOutShapes are opt-outs whose number is in doubt, each naming two
// people: both must stay uncalled (listed, or every run held).
var heldOptOutShapes = []struct {
	name, ctype, body string
	people            []string
}{
	// A form field, or a JSON member, of the number sent twice with two
	// numbers: as two fields that give different numbers, it does not
	// read.
	{"form-number-twice", "application/x-www-form-urlencoded",
		"event=call.ended&phone_number=%2B19175550311&phone_number=%2B19175550312&disposition=do_not_call", []string{"+19175550311", "+19175550312"}},
	{"json-number-twice", "application/json",
		`{"event":"call.ended","phone_number":"+19175550313","phone_number":"+19175550314","disposition":"do_not_call"}`, []string{"+19175550313", "+19175550314"}},
	// A do-not-call sign in an array whose elements callrun does not
	// read as deliveries, so whose person it is cannot be told: a
	// Segment batch (https://segment.com/docs/connections/sources/catalog/libraries/server/http-api/#batch:
	// {"batch": [track calls], "sentAt", "writeKey"}) whose track call's
	// properties say do_not_call, and a list of contacts one of whom has
	// a do-not-disturb flag set (HighLevel's "dnd").
	{"segment-batch", "application/json",
		`{"batch":[{"type":"track","userId":"u_326","event":"Call Ended","properties":{"phone":"+19175550326","disposition":"do_not_call"}},{"type":"track","userId":"u_327","event":"Call Ended","properties":{"phone":"+19175550327","disposition":"completed"}}],"sentAt":"2026-11-29T20:00:00.000Z","writeKey":"wk_9"}`,
		[]string{"+19175550326", "+19175550327"}},
	{"contacts-dnd", "application/json",
		`{"event":"list.updated","contacts":[{"mobile":"+19175550328","dnd":true},{"mobile":"+19175550329","dnd":false}]}`,
		[]string{"+19175550328", "+19175550329"}},
	// The service's own envelope (/work/shared/design.md: {event,
	// timestamp, data: {call_id, agent_id, caller_number, ...}}) of a
	// call this store has no record of, holding an array of its call's
	// legs that each name a number and a status: one delivery, its
	// caller_number in doubt, not the wrapper of its legs, whose
	// disposition was dropped and the person called.
	{"envelope-caller-number-with-legs", "application/json",
		`{"event":"call.ended","timestamp":"2026-11-29T20:00:00Z","data":{"call_id":"legs-1","caller_number":"+19175550335","disposition":"do_not_call","legs":[{"to":"+19175550399","status":"completed"}]}}`,
		[]string{"+19175550335"}},
	// A Salesforce Lead whose DoNotCall is true and whose MobilePhone
	// does not read: a '+' typed before its national number, which in a
	// US campaign reads as no number (+91 75550339 is too short for
	// India). Its Phone is listed; its mobile, the same person's, was
	// passed over in silence and called.
	{"salesforce-line-does-not-read", "text/xml; charset=utf-8",
		strings.NewReplacer("(917) 555-0331", "(917) 555-0338", "917-555-0333", "+(917) 555-0339", "04l000000000001AAA", "04l000000000009AAA").Replace(salesforceDoNotCall),
		[]string{"+19175550338", "+19175550339"}},
}

// TestHeldOptOutShapesKeepBothUncalled posts each of heldOptOutShapes to
// listen, on a store of its own, and runs another campaign with both its
// people and Ada: neither person is called (Ada may be, or the run held).
func TestHeldOptOutShapesKeepBothUncalled(t *testing.T) {
	const ada = "+14155550132"
	for _, s := range heldOptOutShapes {
		t.Run(s.name, func(t *testing.T) {
			ctx := context.Background()
			addr := freePort(t)
			srv := sandbox.NewServer(sandbox.Options{CallDuration: 10 * time.Millisecond})
			t.Cleanup(srv.Close)
			newCampaign := campaignsOnOneStore(t, srv.URL, e2eDatabase(t, "files"))
			first := newCampaign("first", "region: US\noutcomes:\n  url: http://"+addr+"/callrun/first/"+hookSecret+
				"\n  opt_out: {field: disposition, values: [do_not_call]}\n")
			var logs e2eBuffer
			_, stop := startListenOn(t, &logs, addr, first)
			postDelivery200(t, "http://"+addr+"/callrun/first/"+hookSecret, s.ctype, s.body)
			if err := stop(); err != nil {
				t.Errorf("listen: %v", err)
			}
			sheet := "Phone,First Name\n" + ada + ",Ada\n"
			for i, p := range s.people {
				sheet += fmt.Sprintf("%s,Person%d\n", p, i)
			}
			other := newCampaign("other", "region: US\npressure: {off: true}\n")
			writeContacts(t, other, sheet)
			runCampaign(ctx, nolog, runOptions{Path: other}, io.Discard) //nolint:errcheck // a run held by the opt-out fails
			for _, p := range s.people {
				if n := placedTo(srv, p); n != 0 {
					t.Errorf("%s was placed %d times, want none: the opt-out may be theirs", p, n)
				}
			}
		})
	}
}

// utf16LE is s in UTF-16, little-endian, after its byte order mark.
func utf16LE(s string) string {
	b := []byte{0xff, 0xfe}
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return string(b)
}

// TestOptOutShapesKeepThePersonUncalled posts each of optOutShapes to
// listen, each a person's opt-out, answered 200; then another campaign
// on the store with those people and Ada runs, with contact pressure
// off: the sandbox's ledger must show no call to any of them, and one to
// Ada.
func TestOptOutShapesKeepThePersonUncalled(t *testing.T) {
	const ada = "+14155550132"
	ctx := context.Background()
	addr := freePort(t)
	srv := sandbox.NewServer(sandbox.Options{CallDuration: 10 * time.Millisecond})
	t.Cleanup(srv.Close)
	newCampaign := campaignsOnOneStore(t, srv.URL, e2eDatabase(t, "files"))
	first := newCampaign("first", "region: US\noutcomes:\n  url: http://"+addr+"/callrun/first/"+hookSecret+
		"\n  opt_out: {field: disposition, values: [do_not_call]}\n")
	var logs e2eBuffer
	_, stop := startListenOn(t, &logs, addr, first)
	hook := "http://" + addr + "/callrun/first/" + hookSecret
	sheet := "Phone,First Name\n" + ada + ",Ada\n"
	for i, s := range optOutShapes {
		at := hook
		if s.query != "" {
			at += "?" + s.query
		}
		postDelivery200(t, at, s.ctype, s.body)
		sheet += fmt.Sprintf("%s,Person%d\n", s.person, i)
	}
	if err := stop(); err != nil {
		t.Errorf("listen: %v", err)
	}
	other := newCampaign("other", "region: US\npressure: {off: true}\n")
	writeContacts(t, other, sheet)
	if err := runCampaign(ctx, nolog, runOptions{Path: other}, io.Discard); err != nil {
		t.Fatalf("the other campaign: %v\nlisten:\n%s", err, logs.String())
	}
	for _, s := range optOutShapes {
		if n := placedTo(srv, s.person); n != 0 {
			t.Errorf("%s: %s was placed %d times, want none: they said do not call", s.name, s.person, n)
		}
	}
	if n := placedTo(srv, ada); n != 1 {
		t.Errorf("Ada was placed %d times, want 1", n)
	}
}
