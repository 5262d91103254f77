package campaign

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/callrun/callrun/apiclient"
)

// TestFlagsDoNotCall: a delivery's field that says do not call as a
// sheet's column would is read whatever outcomes.opt_out says, in the
// shapes senders write: HighLevel's ContactDndUpdate (its global dnd, and
// the Call channel of its dndSettings), an account field of the
// service's form data, a form's field, a JSON array of tags. A no, an
// e-mail's DND and a plain call.ended say nothing.
func TestFlagsDoNotCall(t *testing.T) {
	const hlDnd = `{"type":"ContactDndUpdate","locationId":"ve9EPM428h8vShlRW1KT","id":"nmFmQEsNgz6AVpgLVUJ0","phone":"+14155550132","dnd":%s,` +
		`"dndSettings":{"Call":{"status":"%s","message":"","code":""},"SMS":{"status":"inactive","message":"","code":""},"Email":{"status":"%s","message":"","code":""}},` +
		`"inboundDndSettings":{"all":{"status":"inactive","message":""}},"tags":["nisi sint commodo amet","consequat"],"customFields":[]}`
	for _, tc := range []struct {
		name, contentType, body string
		field                   string
	}{
		{"HighLevel, dnd on", "application/json", fmt.Sprintf(hlDnd, "true", "active", "inactive"), "dnd"},
		{"HighLevel, calls off only", "application/json", fmt.Sprintf(hlDnd, "false", "permanent", "inactive"), "dndSettings.Call.status"},
		{"HighLevel, e-mail off only", "application/json", fmt.Sprintf(hlDnd, "false", "inactive", "active"), ""},
		{"HighLevel, all on", "application/json", fmt.Sprintf(hlDnd, "false", "inactive", "inactive"), ""},
		{"account field, Yes", "application/json", `{"event":"call.ended","call_id":"c1","phone_number":"+14155550132","first_name":"Ada","do_not_call":"Yes"}`, "do_not_call"},
		{"account field, No", "application/json", `{"event":"call.ended","call_id":"c1","phone_number":"+14155550132","first_name":"Ada","do_not_call":"No"}`, ""},
		{"account field, unreadable", "application/json", `{"event":"call.ended","call_id":"c1","phone_number":"+14155550132","DNC":"asked 3/4"}`, "DNC"},
		{"form", "application/x-www-form-urlencoded", "event=call.ended&phone_number=%2B14155550132&Do+Not+Call=1", "Do Not Call"},
		{"tags", "application/json", `{"event":"contact.tag","contact":{"phone":"+14155550132","tags":["lead","Do Not Call"]}}`, "contact.tags"},
		{"HighLevel, calls DND off by a user", "application/json", `{"type":"ContactDndUpdate","phone":"+14155550133","dnd":false,"dndSettings":{"Call":{"status":"inactive","message":"Updated by User at 2024-06-01","code":"103"}}}`, ""},
		{"HighLevel, call channel disabled", "application/json", `{"type":"ContactDndUpdate","phone":"+14155550133","dnd":false,"dndSettings":{"Call":{"enabled":false,"message":"Removed by user"}}}`, ""},
		{"HighLevel, inbound DND", "application/json", `{"type":"ContactDndUpdate","phone":"+14155550133","dnd":false,"inboundDndSettings":{"all":{"status":"active","message":"blocked"}}}`, ""},
		{"the date of a flag", "application/json", `{"phone":"+14155550133","customData":{"do_not_call_date":"2025-03-01"}}`, "customData.do_not_call_date"},
		{"the reason of a flag", "application/json", `{"phone":"+14155550133","customData":{"dnc_reason":"Customer asked not to be called"}}`, "customData.dnc_reason"},
		{"the reason of a flag that says no", "application/json", `{"phone":"+14155550133","dnd":false,"dnd_reason":"re-subscribed"}`, ""},
		{"tags as objects", "application/json", `{"phone":"+14155550133","tags":[{"id":"t1","name":"lead"},{"id":"t2","name":"DNC"}]}`, "tags"},
		{"HubSpot's property change", "application/json", `{"eventId":1,"subscriptionId":2,"portalId":3,"occurredAt":1733000000000,"subscriptionType":"contact.propertyChange","attemptNumber":0,"objectId":123,"changeSource":"CRM","propertyName":"hs_do_not_call","propertyValue":"true"}`, "propertyValue"},
		{"HubSpot's property change back", "application/json", `{"eventId":1,"subscriptionId":2,"portalId":3,"occurredAt":1733000000000,"subscriptionType":"contact.propertyChange","attemptNumber":0,"objectId":123,"changeSource":"CRM","propertyName":"hs_do_not_call","propertyValue":"false"}`, ""},
		{"HubSpot's change of another property", "application/json", `{"subscriptionType":"contact.propertyChange","objectId":123,"propertyName":"lifecyclestage","propertyValue":"customer"}`, ""},
		{"an agent's analysis: opt_out", "application/json", `{"event":"call_analyzed","call":{"call_id":"c1","to_number":"+14155550132","call_analysis":{"call_summary":"Short call.","custom_analysis_data":{"opt_out":true,"interested":false}}}}`, "call.call_analysis.custom_analysis_data.opt_out"},
		{"an agent's analysis: optOut", "application/json", `{"message":{"type":"end-of-call-report","call":{"id":"c1","customer":{"number":"+14155550132"}},"analysis":{"structuredData":{"optOut":"yes"}}}}`, "message.analysis.structuredData.optOut"},
		{"an agent's analysis: unsubscribe", "application/json", `{"phone_number":"+14155550132","unsubscribe":true}`, "unsubscribe"},
		{"an event that is the opt-out", "application/json", `{"event":"contact.opted_out","phone_number":"+14155550132"}`, "event"},
		{"an event type that is the opt-out", "application/json", `{"event_type":"contact.do_not_call","data":{"phone":"+14155550132"}}`, "event_type"},
		{"a topic that is the opt-out", "application/x-www-form-urlencoded", "topic=contacts%2Funsubscribed&phone=%2B14155550132", "topic"},
		{"an event of another channel's opt-out, read as a do-not-call phrase as a disposition's is", "application/json", `{"event":"email.unsubscribed","phone_number":"+14155550132"}`, "event"},
		{"an event of the call", "application/json", `{"event":"call.ended","phone_number":"+14155550132","disposition":"completed"}`, ""},
		{"an agent's analysis: opt_out false", "application/json", `{"event":"call_analyzed","call":{"call_id":"c1","to_number":"+14155550132","call_analysis":{"custom_analysis_data":{"opt_out":false}}}}`, ""},
		{"a flag's value nested under an envelope's data", "application/json", `{"event":"contact.updated","data":{"phone":"+14155550132","dndSettings":{"Call":{"status":"active","message":"","code":""},"Email":{"status":"inactive"}}}}`, "data.dndSettings.Call.status"},
		{"an e-mail flag's value nested under an envelope's data", "application/json", `{"event":"contact.updated","data":{"phone":"+14155550132","dndSettings":{"Call":{"status":"inactive"},"Email":{"status":"active"}}}}`, ""},
		{"ElevenLabs' data collection", "application/json", `{"type":"post_call_transcription","data":{"agent_id":"a1","conversation_id":"c1","analysis":{"data_collection_results":{"do_not_call":{"data_collection_id":"do_not_call","value":true,"rationale":"The user asked."}}}}}`, "data.analysis.data_collection_results.do_not_call.value"},
		{"ElevenLabs' data collection, no", "application/json", `{"type":"post_call_transcription","data":{"agent_id":"a1","conversation_id":"c1","analysis":{"data_collection_results":{"do_not_call":{"data_collection_id":"do_not_call","value":false,"rationale":"The user did not ask."}}}}}`, ""},
		// An evaluation criterion the call is judged by, named as a flag:
		// its result success is a yes, failure a no, unknown neither
		// (listed, as any value callrun cannot read).
		{"ElevenLabs' evaluation, success", "application/json", `{"type":"post_call_transcription","data":{"agent_id":"a1","conversation_id":"c1","analysis":{"evaluation_criteria_results":{"do_not_call_request":{"criteria_id":"do_not_call_request","result":"success","rationale":"The user asked."}},"call_successful":"success"}}}`, "data.analysis.evaluation_criteria_results.do_not_call_request.result"},
		{"ElevenLabs' evaluation, failure", "application/json", `{"type":"post_call_transcription","data":{"agent_id":"a1","conversation_id":"c1","analysis":{"evaluation_criteria_results":{"do_not_call_request":{"criteria_id":"do_not_call_request","result":"failure","rationale":"The user did not ask."}},"call_successful":"success"}}}`, ""},
		{"ElevenLabs' evaluation, unknown", "application/json", `{"type":"post_call_transcription","data":{"agent_id":"a1","conversation_id":"c1","analysis":{"evaluation_criteria_results":{"opt_out":{"criteria_id":"opt_out","result":"unknown","rationale":"The call was cut."}},"call_successful":"unknown"}}}`, "data.analysis.evaluation_criteria_results.opt_out.result"},
		{"ElevenLabs' evaluation of another thing", "application/json", `{"type":"post_call_transcription","data":{"agent_id":"a1","conversation_id":"c1","analysis":{"evaluation_criteria_results":{"booked_appointment":{"criteria_id":"booked_appointment","result":"success","rationale":"Booked."}},"call_successful":"success"}}}`, ""},
		{"an agent's analysis: optOut's value", "application/json", `{"message":{"type":"end-of-call-report","analysis":{"structuredData":{"optOut":{"value":true}}}}}`, "message.analysis.structuredData.optOut.value"},
		{"an e-mail opt-out", "application/json", `{"phone_number":"+14155550132","email_opt_out":true,"hs_email_optout":"true"}`, ""},
		{"an unsubscribe link", "application/json", `{"phone_number":"+14155550132","unsubscribe_url":"https://example.com/u/1"}`, ""},
		{"the call's outcome by another name", "application/json", `{"event":"call_analyzed","call":{"call_id":"c1","to_number":"+14155550132","call_analysis":{"custom_analysis_data":{"call_outcome":"Do Not Call"}}}}`, "call.call_analysis.custom_analysis_data.call_outcome"},
		{"a disposition", "application/x-www-form-urlencoded", "phone_number=%2B14155550132&Disposition=DNC", "Disposition"},
		{"a disposition that holds a phrase", "application/json", `{"phone_number":"+14155550132","disposition":"Do Not Call - Customer Request"}`, "disposition"},
		{"an outcome of a DNC request", "application/json", `{"event":"call_analyzed","call":{"call_id":"c1","to_number":"+14155550132","call_analysis":{"custom_analysis_data":{"call_outcome":"dnc_request"}}}}`, "call.call_analysis.custom_analysis_data.call_outcome"},
		{"an intent to opt out", "application/json", `{"message":{"type":"end-of-call-report","analysis":{"structuredData":{"intent":"opt_out"}}}}`, "message.analysis.structuredData.intent"},
		{"an intent to stop calls", "application/json", `{"message":{"type":"end-of-call-report","analysis":{"structuredData":{"intent":"stop_calls"}}}}`, "message.analysis.structuredData.intent"},
		{"an outcome of removal from the list", "application/json", `{"event":"call_analyzed","call":{"call_id":"c1","to_number":"+14155550132","call_analysis":{"custom_analysis_data":{"call_outcome":"Remove from list"}}}}`, "call.call_analysis.custom_analysis_data.call_outcome"},
		{"a disposition Remove", "application/json", `{"phone_number":"+14155550132","disposition":"Remove"}`, "disposition"},
		{"a disposition REMOVE", "application/x-www-form-urlencoded", "phone_number=%2B14155550132&Disposition=REMOVE", "Disposition"},
		{"a result that removes something else", "application/json", `{"phone_number":"+14155550132","result":"remove old address","removedAt":"2025-03-01"}`, ""},
		{"an outcome of an e-mail opt-out", "application/json", `{"phone_number":"+14155550132","call_outcome":"Opt out of newsletter"}`, ""},
		{"an e-mail's result", "application/json", `{"phone_number":"+14155550132","email_result":"opt_out"}`, ""},
		{"an outcome that denies a phrase", "application/json", `{"phone_number":"+14155550132","disposition":["completed","not do_not_call"],"call_outcome":"No DNC"}`, ""},
		{"a result that says another thing", "application/json", `{"phone_number":"+14155550132","result":"callback requested","intent":"interested"}`, ""},
		{"call ended", "application/json", `{"event":"call.ended","call_id":"c1","phone_number":"+14155550132","status":"completed","disposition":"interested"}`, ""},
	} {
		r := httptest.NewRequest("POST", "/hook", strings.NewReader(tc.body))
		r.Header.Set("Content-Type", tc.contentType)
		ds, err := apiclient.ReadDeliveries(r, apiclient.ReadOptions{})
		if err != nil || len(ds) != 1 {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got, _ := FlagsDoNotCall(ds[0]); got != tc.field {
			t.Errorf("%s: FlagsDoNotCall = %q, want %q", tc.name, got, tc.field)
		}
	}
}
