package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
)

// senderOptOuts are deliveries as the senders a team points at listen
// write them (text-message webhooks, voice agents' post-call webhooks,
// CRM records), each a person's "do not call me" that listen once
// answered 200 and lost, or put on another number than the person's.
// people must never be called after it (listed, or every run held);
// called are people the same delivery does not opt out, called once;
// listed, that its people are on the do-not-call list, not only held;
// held, that it is held as an opt-out that cannot be read, so that no
// run on the store calls anyone (Ada included) until a person resolves
// it, where else Ada, whom it does not name, is called once.
var senderOptOuts = []struct {
	name, ctype, body string
	people, called    []string
	listed, held      bool
}{
	// Twilio's incoming message webhook
	// (https://www.twilio.com/docs/messaging/guides/webhook-request: a
	// form with SmsStatus=received, Body, From the sender, To the
	// Twilio number that received it) of a person who texts STOP to
	// the campaign's caller ID. Its To (the campaign's line, which
	// outcomes.own_numbers does not list) was taken for the person's
	// number and its Body was never read: the person who texted STOP
	// was called.
	{"twilio-incoming-sms-stop", "application/x-www-form-urlencoded",
		"ToCountry=US&ToState=CA&SmsMessageSid=SM1f0e8ae6ade43cb3c0ce4525424e404f&NumMedia=0&ToCity=&FromZip=10001&SmsSid=SM1f0e8ae6ade43cb3c0ce4525424e404f&FromState=NY&SmsStatus=received&FromCity=NEW+YORK&Body=STOP&FromCountry=US&To=%2B19175550400&ToZip=&NumSegments=1&MessageSid=SM1f0e8ae6ade43cb3c0ce4525424e404f&AccountSid=AC00000000000000000000000000000000&From=%2B19175550404&ApiVersion=2010-04-01",
		[]string{"+19175550404"}, nil, true, false},
	// The same with Advanced Opt-Out on its Messaging Service
	// (https://www.twilio.com/docs/messaging/tutorials/advanced-opt-out:
	// OptOutType=STOP is added): the opt-out was read, and its To, the
	// campaign's own line, went on the list instead of the person.
	{"twilio-incoming-sms-opt-out-type", "application/x-www-form-urlencoded",
		"ToCountry=US&SmsMessageSid=SM2&NumMedia=0&SmsSid=SM2&SmsStatus=received&Body=Stop&FromCountry=US&To=%2B19175550400&MessagingServiceSid=MG00000000000000000000000000000000&NumSegments=1&MessageSid=SM2&AccountSid=AC00000000000000000000000000000000&From=%2B19175550405&OptOutType=STOP&ApiVersion=2010-04-01",
		[]string{"+19175550405"}, nil, true, false},
	// A reply in the person's words rather than a keyword.
	{"twilio-incoming-sms-words", "application/x-www-form-urlencoded",
		"SmsMessageSid=SM3&NumMedia=0&SmsSid=SM3&SmsStatus=received&Body=Please+stop+calling+me&To=%2B19175550400&NumSegments=1&MessageSid=SM3&AccountSid=AC00000000000000000000000000000000&From=%2B19175550406&ApiVersion=2010-04-01",
		[]string{"+19175550406"}, nil, true, false},
	// Telnyx's message.received webhook
	// (https://developers.telnyx.com/docs/messaging/messages/receiving-webhooks:
	// data.payload with direction inbound, from.phone_number, to[],
	// text): its text was never read.
	{"telnyx-message-received-stop", "application/json",
		`{"data":{"event_type":"message.received","id":"b301ed3f-1490-491f-995f-6e64e69674d4","occurred_at":"2026-11-29T20:00:00.000+00:00","payload":{"completed_at":null,"cost":null,"direction":"inbound","encoding":"GSM-7","errors":[],"from":{"carrier":"T-Mobile USA","line_type":"Wireless","phone_number":"+19175550407"},"id":"84cca175-9755-4859-b67f-4730d7f58aa3","media":[],"messaging_profile_id":"740572b6-099c-44a1-89b9-6c92163bc68d","parts":1,"received_at":"2026-11-29T20:00:00.000+00:00","record_type":"message","text":"STOP","to":[{"carrier":"Telnyx","line_type":"Wireless","phone_number":"+19175550400","status":"webhook_delivered"}],"type":"SMS"},"record_type":"event"},"meta":{"attempt":1,"delivered_to":"https://hooks.example.com"}}`,
		[]string{"+19175550407"}, nil, true, true},
	// Plivo's incoming message webhook
	// (https://www.plivo.com/docs/messaging/concepts/inbound-message:
	// From, To, Type, Text, MessageUUID, numbers without their +): its
	// To, the campaign's line, was the person's.
	{"plivo-incoming-sms-stop", "application/x-www-form-urlencoded",
		"From=19175550414&To=19175550400&Type=sms&Text=STOP&MessageUUID=2a340179-0d6f-4d6b-9d0f-8e3c2cbcd8ff&TotalRate=0.00000&TotalAmount=0.00000&Units=1",
		[]string{"+19175550414"}, nil, true, false},
	// Vonage's SMS API inbound message
	// (https://developer.vonage.com/messaging/sms/guides/inbound-sms:
	// to is "your virtual number", msisdn the sender).
	{"vonage-inbound-sms-stop", "application/json",
		`{"msisdn":"19175550415","to":"19175550400","messageId":"0A0000000123ABCD1","text":"Stop","type":"text","keyword":"STOP","api-key":"abcd1234","message-timestamp":"2026-11-29 20:00:00"}`,
		[]string{"+19175550415"}, nil, true, false},
	// Twilio's Event Streams webhook sink, a CloudEvents batch
	// (https://www.twilio.com/docs/events/event-types/messaging/inbound-message:
	// data.messageSid, from, to, body).
	{"twilio-event-streams-inbound-stop", "application/json",
		`[{"specversion":"1.0","type":"com.twilio.messaging.inbound-message.received","source":"AB00000000000000000000000001","id":"NO00000000000000000000000001","dataschema":"https://events-schemas.twilio.com/Messaging.InboundMessageV1/6","datacontenttype":"application/json","time":"2026-11-29T20:00:00.000Z","data":{"messageSid":"SM0000000000000000000000000000001","timestamp":"2026-11-29T20:00:00.000Z","accountSid":"AC0000000000000000000000000000001","eventName":"com.twilio.messaging.inbound-message.received","from":"+19175550416","to":"+19175550400","numMedia":0,"body":"STOP","toCountry":"US","fromCountry":"US","messagingServiceSid":"MG0000000000000000000000000000001"}}]`,
		[]string{"+19175550416"}, nil, true, false},
	// Close's SMS activity webhook (event.object_type activity.sms,
	// event.data.direction inbound, text; its remote_phone, which no
	// rule reads: held, the contact's number listed), as
	// github.com/nneessen/close-chat-bot's WEBHOOK_SETUP.md shows it.
	{"close-sms-activity-inbound-stop", "application/json",
		`{"subscription_id":"whsub_2","event":{"id":"ev_2","object_type":"activity.sms","action":"created","lead_id":"lead_2","data":{"id":"acti_1","lead_id":"lead_2","direction":"inbound","text":"STOP","local_phone":"+19175550400","remote_phone":"+19175550417","status":"inbox"}}}`,
		[]string{"+19175550417"}, nil, true, true},
	// HighLevel's InboundMessage webhook
	// (https://highlevel.stoplight.io/docs/integrations/: type,
	// locationId, body, contactId, conversationId, direction inbound,
	// messageType SMS), which names the contact by its id alone: held,
	// every run stopped until a person finds whose it was.
	{"ghl-inbound-message-stop", "application/json",
		`{"type":"InboundMessage","locationId":"l1gVv2bwBpD2NcEqXmlS","attachments":[],"body":"STOP","contactId":"cI08i1Bls3iTB9bKgFJh","contentType":"text/plain","conversationId":"fcanlLgpbQgQhderivVs","dateAdded":"2026-11-29T20:00:00.000Z","direction":"inbound","messageType":"SMS","status":"delivered"}`,
		nil, nil, false, true},
	// A message the campaign sent (message.sent, direction outbound),
	// whose text offers STOP: no one's opt-out, and Ada is called.
	{"telnyx-message-sent-offers-stop", "application/json",
		`{"data":{"event_type":"message.sent","id":"c301ed3f-1490-491f-995f-6e64e69674d5","occurred_at":"2026-11-29T20:00:00.000+00:00","payload":{"direction":"outbound","from":{"carrier":"Telnyx","line_type":"Wireless","phone_number":"+19175550400"},"id":"94cca175-9755-4859-b67f-4730d7f58aa4","parts":1,"record_type":"message","text":"Acme: your appointment is on Tuesday. Reply STOP to opt out.","to":[{"carrier":"T-Mobile USA","line_type":"Wireless","phone_number":"+14155550132","status":"sent"}],"type":"SMS"},"record_type":"event"},"meta":{"attempt":1,"delivered_to":"https://hooks.example.com"}}`,
		nil, []string{"+14155550132"}, false, false},
	// ElevenLabs' post_call_transcription webhook
	// (https://elevenlabs.io/docs/eleven-agents/workflows/post-call-webhooks:
	// data.analysis.evaluation_criteria_results, each criterion's
	// result success, failure or unknown) of an agent judged by a
	// criterion named do_not_call_request: its success, the person asked,
	// was read as no sign at all. Its number is in
	// metadata.phone_call.external_number, which was read by no rule
	// (the opt-out held every run) and is now a number field: listed,
	// and no hold. A criterion that failed is no opt-out: Ada, whose
	// call it reports, is called.
	{"elevenlabs-evaluation-success", "application/json",
		`{"type":"post_call_transcription","event_timestamp":1739537297,"data":{"agent_id":"xyz","conversation_id":"abc","status":"done","transcript":[{"role":"agent","message":"Hi, this is Sam from Acme. Is now a good time?","time_in_call_secs":0},{"role":"user","message":"I am driving, I cannot talk.","time_in_call_secs":2}],"metadata":{"start_time_unix_secs":1739537297,"call_duration_secs":22,"cost":296,"phone_call":{"direction":"outbound","phone_number_id":"pn_1","agent_number":"+19175550400","external_number":"+19175550408","type":"twilio","call_sid":"CA1"}},"analysis":{"evaluation_criteria_results":{"do_not_call_request":{"criteria_id":"do_not_call_request","result":"success","rationale":"The user said they were driving and would not take calls from Acme."}},"data_collection_results":{},"call_successful":"success","transcript_summary":"The agent introduced Acme; the call was short."}}}`,
		[]string{"+19175550408"}, nil, true, false},
	{"elevenlabs-evaluation-failure", "application/json",
		`{"type":"post_call_transcription","event_timestamp":1739537298,"data":{"agent_id":"xyz","conversation_id":"abd","status":"done","transcript":[{"role":"agent","message":"Hi, this is Sam from Acme.","time_in_call_secs":0},{"role":"user","message":"Hi Sam, go on.","time_in_call_secs":2}],"metadata":{"phone_call":{"direction":"outbound","agent_number":"+19175550400","external_number":"+14155550132","type":"twilio","call_sid":"CA2"}},"analysis":{"evaluation_criteria_results":{"do_not_call_request":{"criteria_id":"do_not_call_request","result":"failure","rationale":"The user did not ask."}},"call_successful":"success","transcript_summary":"Ada listened to the offer."}}}`,
		nil, []string{"+14155550132"}, false, false},
	// An agent that invokes its do-not-call tool when the person asks,
	// the person's words not read as a request: Vapi's tool-calls
	// server message (https://docs.vapi.ai/server-url/events:
	// message.toolCallList, each a function's name and arguments), and
	// Retell's call_ended whose transcript_with_tool_calls holds the
	// invocation (https://docs.retellai.com/features/webhook-overview:
	// role tool_call_invocation, name, arguments). Read as nothing.
	{"vapi-tool-calls-dnc", "application/json",
		`{"message":{"timestamp":1764446400000,"type":"tool-calls","toolCallList":[{"id":"toolu_01DTPAzUm5Gk3zxrpJ969oMF","type":"function","function":{"name":"add_to_do_not_call_list","arguments":{"reason":"asked on the call"}}}],"call":{"id":"vapi-call-9","orgId":"org-1","type":"outboundPhoneCall"},"customer":{"number":"+19175550429"}}}`,
		[]string{"+19175550429"}, nil, true, false},
	{"retell-transcript-tool-invocation", "application/json",
		`{"event":"call_ended","call":{"call_id":"retell-call-9","agent_id":"agent-x","call_status":"ended","from_number":"+19175550400","to_number":"+19175550430","direction":"outbound","disconnection_reason":"agent_hangup","transcript":"Agent: Hi, this is Sam from Acme.\nUser: Hmm, I'd rather you didn't.\n","transcript_with_tool_calls":[{"role":"agent","content":"Hi, this is Sam from Acme."},{"role":"user","content":"Hmm, I'd rather you didn't."},{"role":"tool_call_invocation","tool_call_id":"tc_1","name":"mark_do_not_call","arguments":"{}"},{"role":"tool_call_result","tool_call_id":"tc_1","content":"done"}]}}`,
		[]string{"+19175550430"}, nil, true, false},
	// A Vapi end-of-call-report whose assistant is set up with that tool
	// (message.assistant.model.tools) and invoked only end_call: no
	// opt-out, Ada is called.
	{"vapi-report-tool-defined-not-invoked", "application/json",
		`{"message":{"type":"end-of-call-report","endedReason":"assistant-ended-call","call":{"id":"vapi-call-10","type":"outboundPhoneCall"},"customer":{"number":"+14155550132"},"assistant":{"model":{"provider":"openai","model":"gpt-4o","tools":[{"type":"function","function":{"name":"add_to_do_not_call_list","description":"Use when the customer asks not to be called."}}]}},"artifact":{"messages":[{"role":"bot","message":"Hi Ada, this is Sam from Acme."},{"role":"user","message":"Hi Sam, go on."},{"role":"tool_calls","toolCalls":[{"id":"tc_2","type":"function","function":{"name":"end_call","arguments":"{}"}}]}]},"analysis":{"summary":"Ada listened to the offer."}}}`,
		nil, []string{"+14155550132"}, false, false},
	// A Salesforce Lead sent as JSON (its REST representation,
	// https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/dome_get_field_values.htm:
	// attributes, then its fields by their API names, as a Flow's HTTP
	// callout or Apex's JSON.serialize sends a record; the Lead's fields,
	// https://developer.salesforce.com/docs/atlas.en-us.object_reference.meta/object_reference/sforce_api_objects_lead.htm)
	// whose DoNotCall is set: its Phone was listed, and its MobilePhone,
	// the same person's, called. Its AssistantPhone is another person's,
	// called.
	{"salesforce-json-lead-mobile", "application/json",
		`{"attributes":{"type":"Lead","url":"/services/data/v59.0/sobjects/Lead/00Q5e00000ABCDEAAA"},"Id":"00Q5e00000ABCDEAAA","FirstName":"Pat","LastName":"Doe","Company":"Acme","Phone":"(917) 555-0409","MobilePhone":"917.555.0410","AssistantPhone":"(917) 555-0411","DoNotCall":true,"HasOptedOutOfEmail":false}`,
		[]string{"+19175550409", "+19175550410"}, []string{"+19175550411"}, true, false},
	// HubSpot's workflow action "Send a webhook" with a request body of
	// the properties chosen
	// (https://knowledge.hubspot.com/workflows/how-do-i-use-webhooks-with-hubspot-workflows:
	// "Customize request body"): phone and mobilephone, HubSpot's
	// internal names, beside the team's do-not-call property.
	{"hubspot-workflow-mobilephone", "application/json",
		`{"hs_object_id":"51","firstname":"Pat","phone":"+1 917 555 0412","mobilephone":"+1 917 555 0413","do_not_call":"true"}`,
		[]string{"+19175550412", "+19175550413"}, nil, true, false},
	// Shapes listen read before: kept here so that they stay read.
	//
	// HighLevel's workflow webhook, its standard data
	// (https://periodic-tables.pages.dev/ghl-features/webhooks-and-api, as
	// testdata/webhooks/ghl-workflow-standard.http), tags a string joined
	// by commas.
	{"ghl-workflow-tags-string", "application/json",
		`{"contact_id":"ghl-pat-1","first_name":"Pat","full_name":"Pat Doe","phone":"+19175550420","tags":"ai-call,dnc","contact_type":"lead","workflow":{"id":"78559bb3-b920-461e-b010-7b2a2816d2a9","name":"AI call outcome"},"customData":{"call_status":"completed"}}`,
		[]string{"+19175550420"}, nil, true, false},
	// Bland's post-call webhook (https://docs.bland.ai/tutorials/post-call-webhooks):
	// a disposition tag, and a variable the agent set.
	{"bland-disposition-tag", "application/json",
		`{"call_id":"9d404c1b-6a23-4426-953a-a52c392ff8f1","c_id":"9d404c1b-6a23-4426-953a-a52c392ff8f1","to":"+19175550421","from":"+19175550400","completed":true,"call_length":0.6,"answered_by":"human","status":"completed","disposition_tag":"DO_NOT_CALL","variables":{"now":"Friday"},"summary":"Short call."}`,
		[]string{"+19175550421"}, nil, true, false},
	{"bland-variables-do-not-call", "application/json",
		`{"call_id":"9d404c1b-6a23-4426-953a-a52c392ff8f2","to":"+19175550422","from":"+19175550400","completed":true,"call_length":1.2,"answered_by":"human","status":"completed","variables":{"do_not_call":"true","now":"Friday"},"summary":"Short call."}`,
		[]string{"+19175550422"}, nil, true, false},
	// Synthflow's post-call webhook (https://docs.synthflow.ai/post-call-webhook):
	// an information extractor's return_value.
	{"synthflow-executed-actions", "application/json",
		`{"status":"completed","lead":{"name":"Pat","phone_number":"+19175550423","prompt_variables":{}},"call":{"status":"completed","end_call_reason":"human_goodbye","call_id":"2f1e3d4c-0000-4000-8000-000000000001","duration":40},"executed_actions":{"extract_dnc":{"name":"Extract DNC","return_value":{"do_not_call":"yes"}}}}`,
		[]string{"+19175550423"}, nil, true, false},
	// Vapi's end-of-call-report (https://docs.vapi.ai/server-url/events):
	// a structured data's outcome.
	{"vapi-structured-data-outcome", "application/json",
		`{"message":{"type":"end-of-call-report","endedReason":"customer-ended-call","call":{"id":"vapi-call-1","type":"outboundPhoneCall"},"customer":{"number":"+19175550424"},"phoneNumber":{"number":"+19175550400"},"analysis":{"summary":"Short call.","structuredData":{"callOutcome":"Not Interested - Remove From List"},"successEvaluation":"false"}}}`,
		[]string{"+19175550424"}, nil, true, false},
	// Retell's call_analyzed (https://docs.retellai.com/features/webhook-overview):
	// a custom analysis field of the team's.
	{"retell-custom-analysis-remove", "application/json",
		`{"event":"call_analyzed","call":{"call_id":"retell-call-1","agent_id":"agent-x","call_status":"ended","from_number":"+19175550400","to_number":"+19175550425","direction":"outbound","disconnection_reason":"user_hangup","call_analysis":{"call_summary":"Short call.","user_sentiment":"Negative","call_successful":false,"custom_analysis_data":{"wants_callback":false,"remove_from_list":true}}}}`,
		[]string{"+19175550425"}, nil, true, false},
	// A Salesforce change data capture event of a Lead whose DoNotCall
	// changed (https://developer.salesforce.com/docs/atlas.en-us.change_data_capture.meta/change_data_capture/cdc_message_structure.htm):
	// its changed fields alone, no number: held.
	{"salesforce-cdc-donotcall", "application/json",
		`{"schema":"IeRuaY6cbI_HsV8Rv1Mc5g","payload":{"ChangeEventHeader":{"entityName":"Lead","recordIds":["00Q5e00000ABCDEAAA"],"changeType":"UPDATE","changeOrigin":"com/salesforce/api/soap/59.0","transactionKey":"0002343d-9d90-e395-ed20-cf416ba652ad","sequenceNumber":1,"commitTimestamp":1764446400000,"commitUser":"005000000000001AAA","commitNumber":10714476127009,"changedFields":["DoNotCall","LastModifiedDate"]},"DoNotCall":true,"LastModifiedDate":"2026-11-29T20:00:00.000Z"},"event":{"replayId":7}}`,
		nil, nil, false, true},
	// HubSpot's workflow webhook of a contact with its properties
	// (https://legacydocs.hubspot.com/docs/methods/contacts/contacts-overview:
	// properties.NAME.value), a team's do_not_call among them: its
	// number, properties.phone.value, does not read: held, listed.
	{"hubspot-contact-properties", "application/json",
		`{"vid":1251,"canonical-vid":1251,"portal-id":62515,"is-contact":true,"properties":{"firstname":{"value":"Pat"},"phone":{"value":"+1 917 555 0426"},"do_not_call":{"value":"true"},"lastmodifieddate":{"value":"1764446400000"}}}`,
		[]string{"+19175550426"}, nil, true, true},
	// Pipedrive's person.updated webhook (v1, as
	// github.com/PipedreamHQ/pipedream's components/pipedrive/sources/updated-person-instant/test-event.mjs):
	// its phones an array of objects, a label saying do not call.
	{"pipedrive-person-label", "application/json",
		`{"v":1,"meta":{"action":"updated","object":"person","id":11,"is_bulk_update":false,"webhook_id":"1234567890"},"current":{"id":11,"name":"Pat Doe","phone":[{"value":"+1 917 555 0427","primary":true,"label":"work"},{"value":"(917) 555-0428","primary":false,"label":"mobile"}],"label":"Do not call","update_time":"2026-11-29 20:00:00"},"previous":{"id":11,"label":null}}`,
		[]string{"+19175550427", "+19175550428"}, nil, true, true},
	// A CRM's contact whose own fields say do not call beside the array
	// of its phones, Close's contact
	// (https://developer.close.com/resources/contacts/: phones, each
	// {phone, phone_formatted, type}) in its webhook event
	// (https://developer.close.com/resources/webhooks/: event.data),
	// its custom field forwarded by name as a relay (Make, Zapier)
	// writes it. Each phone, a number and a type, read as a delivery of
	// its own, made the contact a wrapper of deliveries: its
	// do_not_call was dropped with it, both phones stored and
	// acknowledged, and both called.
	{"close-contact-phones-do-not-call", "application/json",
		`{"subscription_id":"whsub_1","event":{"id":"ev_1","date_created":"2026-11-29T20:00:00.000000","object_type":"contact","action":"updated","lead_id":"lead_1","data":{"id":"cont_1","lead_id":"lead_1","name":"Pat Doe","title":"","phones":[{"phone":"+19175550401","phone_formatted":"+1 917-555-0401","type":"office"},{"phone":"+19175550402","phone_formatted":"+1 917-555-0402","type":"mobile"}],"emails":[],"do_not_call":true},"changed_fields":["do_not_call"]}}`,
		[]string{"+19175550401", "+19175550402"}, nil, true, true},
}

// TestSenderOptOutsKeepThePeopleUncalled posts each of senderOptOuts to
// listen, answered 200, on a store of its own, then runs another
// campaign on that store with its people, its called and Ada: the
// sandbox's ledger must show no call to its people, and one to each of
// called.
func TestSenderOptOutsKeepThePeopleUncalled(t *testing.T) {
	const ada = "+14155550132"
	for _, s := range senderOptOuts {
		t.Run(s.name, func(t *testing.T) {
			ctx := context.Background()
			addr := freePort(t)
			srv := sandbox.NewServer(sandbox.Options{CallDuration: 10 * time.Millisecond})
			t.Cleanup(srv.Close)
			newCampaign := campaignsOnOneStore(t, srv.URL, e2eDatabase(t, "files"))
			first := newCampaign("first", "region: US\noutcomes:\n  url: http://"+addr+"/callrun/first/"+hookSecret+
				"\n  opt_out: {field: disposition, values: [do_not_call]}\n")
			// The list's people are the first campaign's contacts, as the
			// deliveries' people were called by it.
			sheet := "Phone,First Name\n" + ada + ",Ada\n"
			for i, p := range append(slices.Clone(s.people), s.called...) {
				if p != ada {
					sheet += fmt.Sprintf("%s,Person%d\n", p, i)
				}
			}
			writeContacts(t, first, sheet)
			var logs e2eBuffer
			_, stop := startListenOn(t, &logs, addr, first)
			postDelivery200(t, "http://"+addr+"/callrun/first/"+hookSecret, s.ctype, s.body)
			if err := stop(); err != nil {
				t.Errorf("listen: %v", err)
			}
			if s.listed {
				on := onTheList(t, first)
				for _, p := range s.people {
					if !on[p] {
						t.Errorf("%s is not on the do-not-call list: %v", p, on)
					}
				}
			}
			other := newCampaign("other", "region: US\npressure: {off: true}\n")
			writeContacts(t, other, sheet)
			runCampaign(ctx, nolog, runOptions{Path: other}, io.Discard) //nolint:errcheck // a run held by the opt-out fails
			for _, p := range s.people {
				if n := placedTo(srv, p); n != 0 {
					t.Errorf("%s was placed %d times, want none: they said do not call\nlisten:\n%s", p, n, logs.String())
				}
			}
			if n, want := placedTo(srv, ada), 1; slices.Contains(s.people, ada) || s.held {
				if n != 0 {
					t.Errorf("Ada was placed %d times, want none: every run is held", n)
				}
			} else if n != want {
				t.Errorf("Ada was placed %d times, want %d", n, want)
			}
			for _, p := range s.called {
				if n := placedTo(srv, p); n != 1 {
					t.Errorf("%s was placed %d times, want 1: the delivery is no opt-out\nlisten:\n%s", p, n, logs.String())
				}
			}
		})
	}
}
