package campaign

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/callrun/callrun/apiclient"
)

// What an artificial voice must offer on every call, and what the called
// person says in the tests below.
const (
	agentOffers = "Hi Ada, this is Sam from Acme Dental. If you'd rather not get these calls, say stop and we'll put you on our do not call list."
	userAsks    = "Please don't call me again."
	userLater   = "I'd like you to call me back tomorrow."
)

// q is s as a JSON string.
func q(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// readDelivery reads a JSON body as listen reads it.
func readDelivery(t testing.TB, body string) apiclient.Delivery {
	t.Helper()
	r := httptest.NewRequest("POST", "/hook", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	ds, err := apiclient.ReadDeliveries(r, apiclient.ReadOptions{})
	if err != nil || len(ds) != 1 {
		t.Fatalf("reading %s: %v", body, err)
	}
	return ds[0]
}

// transcriptShapes are deliveries as real senders write them, trimmed,
// made of what the agent says and what the person says, each with where
// SaysDoNotCall finds the person's words.
var transcriptShapes = []struct {
	name, body, at string
}{
	// Retell's call_ended: https://docs.retellai.com/features/webhook-overview
	// (transcript "Agent: ...\nUser: ...", transcript_object of {role,
	// content, words}, transcript_with_tool_calls with the tool calls'
	// turns between).
	{"Retell call_ended, transcript",
		`{"event":"call_ended","call":{"call_type":"phone_call","from_number":"+14155550100","to_number":"+14155550132","direction":"outbound","call_id":"Jabr9TXYYJHfvl6Syypi88rdAHYHmcq6","agent_id":"agent_1","call_status":"ended","disconnection_reason":"user_hangup","transcript":%[3]s}}`,
		"call.transcript line 2"},
	{"Retell call_ended, transcript_object",
		`{"event":"call_ended","call":{"call_id":"Jabr9TXYYJHfvl6Syypi88rdAHYHmcq6","to_number":"+14155550132","transcript_object":[{"role":"agent","content":%[1]s,"words":[{"word":"Hi","start":0.52,"end":0.7}]},{"role":"user","content":%[2]s,"words":[{"word":"Please","start":6.1,"end":6.4}]},{"role":"agent","content":"Understood. Goodbye.","words":[]}]}}`,
		"call.transcript_object[1]"},
	{"Retell call_ended, transcript_with_tool_calls",
		`{"event":"call_ended","call":{"call_id":"Jabr9TXYYJHfvl6Syypi88rdAHYHmcq6","to_number":"+14155550132","transcript_with_tool_calls":[{"role":"agent","content":%[1]s},{"role":"tool_call_invocation","tool_call_id":"t1","name":"check_calendar","arguments":"{}"},{"role":"tool_call_result","tool_call_id":"t1","content":"{\"free\":true}"},{"role":"user","content":%[2]s},{"role":"agent","content":"Understood. Goodbye."}]}}`,
		"call.transcript_with_tool_calls[3]"},
	// Vapi's end-of-call-report: https://docs.vapi.ai/server-url/end-of-call-report
	// (artifact.transcript "AI: ...\nUser: ...", artifact.messages of
	// {role: system, bot, user, tool_calls; message}, the older
	// message.transcript).
	{"Vapi end-of-call-report, artifact.transcript",
		`{"message":{"type":"end-of-call-report","endedReason":"customer-ended-call","call":{"id":"9a8b7c6d","type":"outboundPhoneCall","customer":{"number":"+14155550132"}},"customer":{"number":"+14155550132"},"artifact":{"transcript":%[4]s,"recordingUrl":"https://storage.vapi.ai/rec.wav"},"analysis":{"summary":"A short call.","successEvaluation":"false"}}}`,
		"message.artifact.transcript line 2"},
	{"Vapi end-of-call-report, artifact.messages",
		`{"message":{"type":"end-of-call-report","endedReason":"customer-ended-call","customer":{"number":"+14155550132"},"artifact":{"messages":[{"role":"system","message":"You are Sam, a scheduling assistant. Offer the do not call list.","time":1740848580000,"secondsFromStart":0},{"role":"bot","message":%[1]s,"time":1740848581000,"endTime":1740848586000,"secondsFromStart":1.2,"duration":5000},{"role":"user","message":%[2]s,"time":1740848587000,"endTime":1740848589000,"secondsFromStart":7.4,"duration":2000}]}}}`,
		"message.artifact.messages[2]"},
	{"Vapi end-of-call-report, message.transcript",
		`{"message":{"type":"end-of-call-report","endedReason":"customer-ended-call","customer":{"number":"+14155550132"},"transcript":%[4]s}}`,
		"message.transcript line 2"},
	{"Vapi end-of-call-report, artifact.messagesOpenAIFormatted with content parts",
		`{"message":{"type":"end-of-call-report","endedReason":"customer-ended-call","customer":{"number":"+14155550132"},"artifact":{"messagesOpenAIFormatted":[{"role":"system","content":"You are Sam. Offer the do not call list."},{"role":"assistant","content":[{"type":"text","text":%[1]s}]},{"role":"user","content":[{"type":"text","text":%[2]s}]}]}}}`,
		"message.artifact.messagesOpenAIFormatted[2]"},
	// Bland's post-call webhook: https://docs.bland.ai/api-v1/get/calls-id
	// (concatenated_transcript "user: ... \n assistant: ...", transcripts
	// of {id, created_at, text, user: user, assistant, robot or
	// agent-action}).
	{"Bland, concatenated_transcript",
		`{"call_id":"7d5a3b2c","to":"+14155550132","from":"+14155550100","completed":true,"answered_by":"human","status":"completed","concatenated_transcript":%[5]s}`,
		"concatenated_transcript line 2"},
	{"Bland, transcripts",
		`{"call_id":"7d5a3b2c","to":"+14155550132","from":"+14155550100","completed":true,"transcripts":[{"id":1,"created_at":"2025-03-01T17:03:03Z","text":%[1]s,"user":"assistant"},{"id":2,"created_at":"2025-03-01T17:03:09Z","text":%[2]s,"user":"user"},{"id":3,"created_at":"2025-03-01T17:03:10Z","text":"Ended call","user":"agent-action"}]}`,
		"transcripts[1]"},
	// Synthflow's post-call webhook: https://docs.synthflow.ai/webhooks
	// (call.transcript "\nbot: ... \nhuman: ...", starting on a blank
	// line; the number in lead.phone_number).
	{"Synthflow, call.transcript",
		`{"status":"completed","error_message":"agent_goodbye","lead":{"name":"Ada","phone_number":"+14155550132"},"call":{"status":"completed","end_call_reason":"human_goodbye","model_id":"1711241656808x745681686585854500","timezone":"Europe/Berlin","call_id":"1711646262471x768387119913843100","duration":32,"transcript":%[7]s,"diversion":null,"external_id":"row_41"},"executed_actions":{}}`,
		"call.transcript line 3"},
	// The service's envelope, whose data.transcript's format the
	// documentation leaves open: text, or a JSON array of turns as
	// ElevenLabs' post_call_transcription sends ({role: agent, user;
	// message}).
	{"envelope, data.transcript",
		`{"event":"call.ended","data":{"call_id":"call_41","agent_id":"agent_1","caller_number":"+14155550132","duration":31,"status":"completed","transcript":%[6]s}}`,
		"data.transcript line 2"},
	{"envelope, data.transcript as turns",
		`{"event":"call.ended","data":{"call_id":"call_41","caller_number":"+14155550132","status":"completed","transcript":[{"role":"agent","message":%[1]s,"time_in_call_secs":0},{"role":"user","message":%[2]s,"time_in_call_secs":6}]}}`,
		"data.transcript[1]"},
}

// shape is a transcript shape's body with agent's and user's words.
func shape(body, agent, user string) string {
	return fmt.Sprintf(body, q(agent), q(user),
		q("Agent: "+agent+"\nUser: "+user+"\nAgent: Understood. Goodbye."),
		q("AI: "+agent+"\nUser: "+user+"\nAI: Understood. Goodbye."),
		q("assistant: "+agent+" \n user: "+user+" \n assistant: Understood. Goodbye."),
		q("Agent: "+agent+"\nCustomer: "+user+"\nAgent: Understood. Goodbye."),
		q("\nbot: "+agent+" \nhuman: "+user+"\nbot: Understood. Goodbye."))
}

// TestSaysDoNotCallTranscripts: in each sender's shape, the called
// person's turn that asks not to be called again is found, and named by
// its field and turn; the same transcript where only the agent offers the
// do-not-call list, as an artificial voice must on every call, and the
// person asks to be called back, says nothing.
func TestSaysDoNotCallTranscripts(t *testing.T) {
	for _, s := range transcriptShapes {
		if got := SaysDoNotCall(readDelivery(t, shape(s.body, agentOffers, userAsks))); got != s.at {
			t.Errorf("%s, the person asks: SaysDoNotCall = %q, want %q", s.name, got, s.at)
		}
		if got := SaysDoNotCall(readDelivery(t, shape(s.body, agentOffers, userLater))); got != "" {
			t.Errorf("%s, only the agent says it: SaysDoNotCall = %q, want none", s.name, got)
		}
		if got := SaysDoNotCall(readDelivery(t, shape(s.body, "Hi Ada, this is Sam from Acme Dental.", userLater))); got != "" {
			t.Errorf("%s, a call back asked for: SaysDoNotCall = %q, want none", s.name, got)
		}
	}
}

// TestSaysDoNotCallSummaries: an AI's summary of the call is read whole:
// Retell's call_analysis.call_summary, Vapi's analysis.summary and older
// message.summary, Bland's summary, ElevenLabs' analysis.transcript_summary.
// Retell's custom_analysis_data is
// read as any field is, by FlagsDoNotCall.
func TestSaysDoNotCallSummaries(t *testing.T) {
	const retell = `{"event":"call_analyzed","call":{"call_id":"Jabr9TXYYJHfvl6Syypi88rdAHYHmcq6","to_number":"+14155550132","transcript":"Agent: Hi Ada.\nUser: Hi.","call_analysis":{"call_summary":%s,"in_voicemail":false,"user_sentiment":"Negative","call_successful":false,"custom_analysis_data":{%s}}}}`
	for _, c := range []struct {
		name, body, at string
	}{
		{"Retell call_analyzed", fmt.Sprintf(retell, q("The user asked not to be called again and the agent ended the call."), ""), "call.call_analysis.call_summary"},
		{"Retell call_analyzed, asked to be removed", fmt.Sprintf(retell, q("Ada asked to be removed from the calling list."), ""), "call.call_analysis.call_summary"},
		{"Retell call_analyzed, no further contact", fmt.Sprintf(retell, q("The customer requested no further contact."), ""), "call.call_analysis.call_summary"},
		{"Retell call_analyzed, stop receiving calls", fmt.Sprintf(retell, q("User asked to stop receiving calls from the company."), ""), "call.call_analysis.call_summary"},
		{"Retell call_analyzed, no more calls", fmt.Sprintf(retell, q("Ada said she doesn't want any more calls."), ""), "call.call_analysis.call_summary"},
		{"Retell call_analyzed, asked to be removed, whole", fmt.Sprintf(retell, q("Customer asked to be removed."), ""), "call.call_analysis.call_summary"},
		{"Retell call_analyzed, asked to be removed from the list", fmt.Sprintf(retell, q("The customer asked to be removed from the list."), ""), "call.call_analysis.call_summary"},
		{"Retell call_analyzed, requested removal", fmt.Sprintf(retell, q("Ada requested removal."), ""), "call.call_analysis.call_summary"},
		{"Retell call_analyzed, wants to opt out", fmt.Sprintf(retell, q("The user wants to opt out."), ""), "call.call_analysis.call_summary"},
		{"Retell call_analyzed, removed the old address", fmt.Sprintf(retell, q("Ada asked to remove her old address and confirmed Tuesday."), ""), ""},
		{"Retell call_analyzed, a call back", fmt.Sprintf(retell, q("Ada asked to be called back tomorrow at 10."), ""), ""},
		{"Vapi analysis.summary", `{"message":{"type":"end-of-call-report","customer":{"number":"+14155550132"},"analysis":{"summary":"The customer said to stop calling them.","structuredData":{"callback":false}}}}`, "message.analysis.summary"},
		{"Vapi message.summary", `{"message":{"type":"end-of-call-report","customer":{"number":"+14155550132"},"summary":"The customer requested to be put on the do-not-call list."}}`, "message.summary"},
		{"Vapi, a neutral summary", `{"message":{"type":"end-of-call-report","customer":{"number":"+14155550132"},"analysis":{"summary":"Ada confirmed her appointment and will stop by on Tuesday."}}}`, ""},
		{"ElevenLabs transcript_summary", `{"type":"post_call_transcription","event_timestamp":1739537297,"data":{"agent_id":"a1","conversation_id":"c1","status":"done","transcript":[{"role":"agent","message":"Hi Ada."},{"role":"user","message":"Hi."}],"analysis":{"evaluation_criteria_results":{},"data_collection_results":{},"call_successful":"success","transcript_summary":"The user asked not to be called again."}}}`, "data.analysis.transcript_summary"},
		{"Bland summary", `{"call_id":"7d5a3b2c","to":"+14155550132","summary":"The person said they were not interested and asked us to never call again.","concatenated_transcript":"assistant: Hi \n user: Bye"}`, "summary"},
	} {
		if got := SaysDoNotCall(readDelivery(t, c.body)); got != c.at {
			t.Errorf("%s: SaysDoNotCall = %q, want %q", c.name, got, c.at)
		}
	}
	d := readDelivery(t, fmt.Sprintf(retell, q("A short call."), `"do_not_call_requested":true`))
	if got, _ := FlagsDoNotCall(d); got != "call.call_analysis.custom_analysis_data.do_not_call_requested" {
		t.Errorf("Retell's custom_analysis_data: FlagsDoNotCall = %q", got)
	}
}

// transcriptCase is a transcript and where SaysDoNotCall finds, in it
// as data.transcript, the person's words: " line n", "[i]", or "" for
// nowhere.
type transcriptCase struct {
	name, transcript, at string
}

// checkTranscripts checks each case's transcript as data.transcript.
func checkTranscripts(t *testing.T, cases []transcriptCase) {
	t.Helper()
	for _, c := range cases {
		d := apiclient.Delivery{Fields: map[string]string{"data.transcript": c.transcript}}
		want := ""
		if c.at != "" {
			want = "data.transcript" + c.at
		}
		if got := SaysDoNotCall(d); got != want {
			t.Errorf("%s: SaysDoNotCall = %q, want %q", c.name, got, want)
		}
	}
}

// TestSaysDoNotCallTurns: how a transcript's text is read turn by turn.
func TestSaysDoNotCallTurns(t *testing.T) {
	checkTranscripts(t, []transcriptCase{
		{"no labels at all", "Hi Ada, this is Sam. Say stop to be added to our do not call list. Please don't call me again.", " line 1"},
		{"labels mid-line", "Agent: Hi Ada. Say stop to opt out. User: stop calling me.", ""},
		{"stop, a whole turn", "Agent: Say stop to be put on our do not call list.\nUser: Stop.", " line 2"},
		{"stop calling, a whole turn", "Agent: Hi.\nUser: Stop calling.", " line 2"},
		{"stop in a sentence", "Agent: Hi.\nUser: I'll stop by on Tuesday.", ""},
		{"a surname", "Agent: Who am I speaking with?\nUser: Robinson.", ""},
		{"a turn over two lines", "Agent: Hi.\nUser: Well, honestly,\nplease take me off your list.\nAgent: Sure.", " line 2"},
		{"the agent's turn over two lines", "User: Hello?\nAgent: Hi.\nSay stop to be put on our do not call list.\nUser: OK, call me later.", ""},
		{"a time in a turn", "Agent: Shall I call at 10:30?\nUser: No, 11:00. Stop calling me at work.", " line 2"},
		{"an agent named", "Sam: Say stop to be put on our do not call list.\nCustomer: Sure, later.", ""},
		{"Synthflow's human", "bot: Hi Ada\nhuman: never call me again", " line 2"},
		{"Air's HUMAN", "BOT: Hey, Ada!\nHUMAN: Remove my number please.", " line 2"},
		{"a caller", "Agent: Hello.\n\nCaller: Do not call this number again.", " line 3"},
		{"German", "Agent: Sagen Sie stopp, und wir rufen Sie nicht mehr an.\nKunde: Bitte rufen Sie mich nicht mehr an.", " line 2"},
		{"French", "Agent: Bonjour.\nClient: Ne m'appelez plus, s'il vous plaît.", " line 2"},
		{"Spanish", "Agente: Hola.\nCliente: No me vuelva a llamar.", " line 2"},
		{"Spanish, the person by name", "Agente: Hola, ¿hablo con Ana?\nAna: No me vuelva a llamar.", " line 2"},
		{"German, the person by name", "KI: Guten Tag, spreche ich mit Frau Weber?\nWeber: Bitte rufen Sie mich nicht mehr an.", " line 2"},
		{"Spanish, the agent offers", "Agente: Diga stop y no le llamaremos más.\nAna: Vale, hasta luego.", ""},
		{"speakers by number", "Speaker 0: Say stop to be put on our do not call list.\nSpeaker 1: Don't call me again.", " line 2"},
		{"the person by name, beside the agent", "Agent: Hi Ada, this is Sam from Acme Dental.\nAda: Please do not call me again.", " line 2"},
		{"the person by name, the agent offers", "Agent: Say stop to be put on our do not call list.\nAda: OK, call me next week.", ""},
		{"AI and the person's full name", "AI: Hello, is this Ada?\nAda Lovelace: Yes. Take me off your list.", " line 2"},
		{"three speakers by name", "Agent: Hi.\nAda: One moment.\nBob: Don't call me again.", " line 3"},
		{"two agents' labels", "Agent: Say stop to be put on our do not call list.\nAssistant: Stop calling me.", ""},
		{"times in brackets before the labels", "[00:00:01] Agent: Say stop to be put on our do not call list.\r\n[00:00:06] User: Please don’t call me again.\r\n", " line 2"},
		{"times in brackets, the agent offers", "[00:00:01] Agent: Say stop to be put on our do not call list.\n[00:00:06] User: OK, call me later.", ""},
		{"bare times before the labels", "00:01 AI: Hi Ada.\n00:04 User: Stop calling me.", " line 2"},
		{"times after the labels", "Agent (00:01): Hi Ada.\nCustomer [0:04.5]: Stop calling me.", " line 2"},
		{"a time and a dash", "(0:01) - Agent: Hi Ada.\n(0:04) - Ada: Stop calling me.", " line 2"},
		{"fillers", "Agent: Hi Ada.\nUser: Stop, uh, calling me.", " line 2"},
		{"fillers in a phrase", "Agent: Hi Ada.\nUser: Take me, um, off your list.", " line 2"},
		{"ah and eh as fillers", "Agent: Hi Ada.\nUser: Stop, ah, calling me.", " line 2"},
		{"eh in a phrase", "Agent: Hi Ada.\nUser: Take me, eh, off your list.", " line 2"},
		{"German eh, anyway", "KI: Rufen Sie uns an, wenn Sie Fragen haben.\nKunde: Ich rufe eh nicht an, ich komme vorbei.", ""},
		{"please stop, a whole turn", "Agent: Hi Ada.\nUser: Please stop.", " line 2"},
		{"stop it, a whole turn", "Agent: Hi Ada.\nUser: Uh, stop it!", " line 2"},
		{"courtesies alone", "Agent: Hi Ada.\nUser: Okay, thank you. Just a moment, please.", ""},
		{"the system prompt beside the agent", "System: You are Sam. Offer the do not call list to everyone.\nAgent: Hi Ada, say stop to be put on our do not call list.", ""},
		{"a tool's result beside the agent", "Agent: One moment.\nTool result: the number is on no do not call list.\nAgent: Thanks for waiting.", ""},
		{"the person's turn going on after a colon", "Agent: Hi.\nUser: Listen:\nyou people: stop calling me.\nAgent: Sorry.", " line 2"},
		{"a named person's turn going on after a colon", "Agent: Hi Ada.\nAda: Look here:\nyou people: stop calling me.", " line 2"},
		{"unsubscribe, a whole turn", "Agent: Hi Ada.\nUser: Unsubscribe.", " line 2"},
		{"opt out, a whole turn", "Agent: Hi Ada.\nUser: Opt out, please.", " line 2"},
		{"remove me, a whole turn", "Agent: Hi Ada.\nUser: Remove me.", " line 2"},
		{"remove me from your list", "Agent: Hi Ada.\nUser: Remove me from your list", " line 2"},
		{"I want to opt out", "Agent: Hi Ada.\nUser: I want to opt out", " line 2"},
		{"I'd like to unsubscribe", "Agent: Hi Ada.\nUser: Yeah, I'd like to unsubscribe.", " line 2"},
		{"opt me out", "Agent: Hi Ada.\nUser: Opt me out", " line 2"},
		{"remove, a whole turn", "Agent: Hi Ada.\nUser: Remove.", " line 2"},
		{"remove this number", "Agent: Hi Ada.\nUser: Please remove this number from your list.", " line 2"},
		{"take this number off", "Agent: Hi Ada.\nUser: Take this number off your list.", " line 2"},
		{"take us off your list", "Agent: Hi Ada.\nUser: Take us off your list.", " line 2"},
		{"lose this number", "Agent: Hi Ada.\nUser: Lose this number.", " line 2"},
		{"remove the number on file", "Agent: Is 555 0100 still your work number?\nUser: No, remove that one, it's old.", ""},
		{"remove in a sentence", "Agent: Is your address still 12 Elm Street?\nUser: No, remove the old one, it's 4 Oak Lane now.", ""},
		{"the agent offers to opt out", "Agent: If you want to opt out, just say remove me.\nUser: Okay, see you Tuesday.", ""},
		{"a full-width colon", "Agent： Hi Ada.\nUser：stop calling me", " line 2"},
		{"no space after the colon", "Agent:Hi Ada.\nUser:stop", " line 2"},
		{"no space after an unknown label", "Agent: Hi Ada.\nUser: I'm free at\n10:30 works, stop by.", ""},
		{"markdown's bold label", "**Agent:** Hi Ada.\n**User:** Stop calling me.", " line 2"},
		{"markdown's bold name", "**Agent**: Hi Ada.\n**User**: Stop calling me.", " line 2"},
		{"markdown's bold, the agent offers", "**Agent:** Say stop to be put on our do not call list.\n**User:** Sure, call me later.", ""},
		{"old Mac line ends", "Agent: Hi Ada.\rUser: Stop calling me.\rAgent: Sorry.", " line 2"},
		{"Windows line ends, no space", "Agent: Hi Ada.\r\nUser:stop\r\n", " line 2"},
		{"old Mac line ends, the agent offers", "Agent: Hi Ada.\rSay stop to be put on our do not call list.\rUser: Call me later.", ""},
	})
}

// TestSaysDoNotCallAnswersOffer: a yes of the called person to the
// agent's offer of the do-not-call list, asked as a question in the turn
// just before it, says do not call; a yes to anything else, a no, a yes
// that hedges, and a yes after the offer every call makes as a statement
// say nothing. A polite "not interested" is no request not to be called.
func TestSaysDoNotCallAnswersOffer(t *testing.T) {
	const offer = "Would you like to be added to our do-not-call list?"
	checkTranscripts(t, []transcriptCase{
		{"yes", "Agent: " + offer + "\nUser: Yes.", " line 2"},
		{"yes please", "Agent: " + offer + "\nUser: Yes please", " line 2"},
		{"uh, yeah, sure", "Agent: Hi Ada. " + offer + "\nUser: Uh, yeah, sure.", " line 2"},
		{"opt out of future calls", "Agent: Would you like to opt out of future calls?\nUser: Yes.", " line 2"},
		{"stop calling", "AI: Do you want us to stop calling you?\nAda: Yes, please.", " line 2"},
		{"German", "KI: Sollen wir Sie nicht mehr anrufen?\nKunde: Ja, bitte.", " line 2"},
		{"the question over two lines", "Agent: Before you go:\nwould you like to be removed from our list?\nUser: Yes.", " line 3"},
		{"no thanks", "Agent: " + offer + "\nUser: No thanks.", ""},
		{"not interested", "Agent: " + offer + "\nUser: No thanks, not interested right now, maybe later.", ""},
		{"not interested, without the offer", "Agent: Hi Ada, I'm calling about your cleaning.\nUser: No thanks, not interested right now, maybe later.", ""},
		{"yes, but", "Agent: " + offer + "\nUser: Yes, but not for this number.", ""},
		{"yeah, no", "Agent: " + offer + "\nUser: Yeah, no, I don't mind the calls.", ""},
		{"okay", "Agent: " + offer + "\nUser: Okay, let me think about it.", ""},
		{"a yes to another question", "Agent: Is Tuesday at ten still good for you?\nUser: Yes.", ""},
		{"a yes to the waiting list's removal", "Agent: Shall I take you off the waiting list for Tuesday?\nUser: Yes.", ""},
		{"a yes to the calling list's removal", "Agent: Shall I take you off our calling list?\nUser: Yes.", " line 2"},
		{"the offer said, then a question", "Agent: Say stop to be added to our do-not-call list. Is now a good time to talk?\nUser: Yes.", ""},
		{"the offer as a statement", "Agent: I can add you to our do-not-call list.\nUser: Yes, thanks for calling.", ""},
		{"a yes two turns after", "Agent: " + offer + "\nUser: Hmm.\nAgent: Shall I book Tuesday?\nUser: Yes.", ""},
		{"a tool call between", "Agent: " + offer + "\nTool call: add_note()\nUser: Yes.", " line 3"},
		{"another speaker between", "Agent: " + offer + "\nUser: Hang on.\nBob: Who is it?\nUser: Yes.", ""},
		// A yes after a lead-in, or after a turn of the person's that
		// says nothing (speech to text cuts "Um. Yes, please." in two).
		{"okay, yes please", "Agent: " + offer + "\nUser: Okay, yes please.", " line 2"},
		{"oh, yes", "Agent: " + offer + "\nUser: Oh, yes.", " line 2"},
		{"ok alone", "Agent: " + offer + "\nUser: OK.", ""},
		{"a turn of fillers, then yes", "Agent: " + offer + "\nUser: Hmm.\nUser: Yes.", " line 3"},
		{"a fillers turn, JSON", `[{"role":"bot","message":"` + offer + `"},{"role":"user","message":"Um."},{"role":"user","message":"Yes, please."}]`, "[2]"},
		{"the agent's tool turn between, JSON", `[{"role":"agent","message":"` + offer + `"},{"role":"agent","message":null,"tool_calls":[{"tool_name":"note"}]},{"role":"user","message":"Yes."}]`, "[2]"},
		// A yes that asks back is no answer.
		{"yes, who is this", "Agent: " + offer + "\nUser: Yes? Who is this?", ""},
		{"please, who is calling", "Agent: " + offer + "\nUser: Please, who is calling?", ""},
		{"sure, what company", "Agent: " + offer + "\nUser: Sure, what company is this?", ""},
		// The agent's own words for the list.
		{"take you off our calling list", "Agent: Shall I take you off our calling list?\nUser: Yes.", " line 2"},
		{"remove your number from our list", "Agent: Do you want me to remove your number from our list?\nUser: Yes please.", " line 2"},
		{"remove you from the newsletter list", "Agent: Should I remove you from our newsletter list?\nUser: Yes.", ""},
		{"take you off hold", "Agent: Can I take you off hold now?\nUser: Yes.", ""},
		// The offer asked in the negative.
		{"prefer we not call you", "Agent: Would you prefer we not call you again?\nUser: Yes.", " line 2"},
		{"no longer receive calls", "Agent: Would you like to no longer receive calls from us?\nUser: Yes please.", " line 2"},
		{"not want any more calls", "Agent: Do you not want any more calls?\nUser: Yes.", " line 2"},
		{"rather we didn't call again", "Agent: Would you rather we didn't call again?\nUser: Yes.", " line 2"},
		{"no more calls today", "Agent: Any more questions about the calls?\nUser: Yes.", ""},
		{"call you back", "Agent: Shall I call you back tomorrow?\nUser: Yes.", ""},
		{"yes, then a question", "Agent: " + offer + "\nUser: Yes, please. How long does that take?", " line 2"},
	})
	for _, s := range transcriptShapes {
		if got := SaysDoNotCall(readDelivery(t, shape(s.body, "Hi Ada. "+offer, "Yes."))); got != s.at {
			t.Errorf("%s, a yes to the offer: SaysDoNotCall = %q, want %q", s.name, got, s.at)
		}
		if got := SaysDoNotCall(readDelivery(t, shape(s.body, "Hi Ada. "+offer, "No thanks, not interested right now, maybe later."))); got != "" {
			t.Errorf("%s, not interested: SaysDoNotCall = %q, want none", s.name, got)
		}
	}
}

// TestSaysDoNotCallTurnObjects: a JSON turn's words under each key
// senders give them, as a string or as parts; the agent's, so written,
// are not read.
func TestSaysDoNotCallTurnObjects(t *testing.T) {
	checkTranscripts(t, []transcriptCase{
		{"content parts", `[{"role":"assistant","content":"Hi Ada."},{"role":"user","content":[{"type":"text","text":"stop calling me"}]}]`, "[1]"},
		{"content parts of strings", `[{"role":"user","content":["please,","stop calling me"]}]`, "[0]"},
		{"content, one part", `[{"role":"user","content":{"type":"text","text":"stop calling me"}}]`, "[0]"},
		{"input_text parts", `[{"role":"user","content":[{"type":"input_text","text":"take me off your list"}]}]`, "[0]"},
		{"utterance", `[{"speaker":"agent","utterance":"Hi Ada."},{"speaker":"customer","utterance":"Stop calling me."}]`, "[1]"},
		{"message", `[{"role":"user","message":"stop calling me"}]`, "[0]"},
		{"text", `[{"speaker":"user","text":"stop calling me"}]`, "[0]"},
		{"content empty, text", `[{"role":"user","content":null,"text":"stop calling me"}]`, "[0]"},
		{"the agent's parts", `[{"role":"assistant","content":[{"type":"text","text":"Say stop to be put on our do not call list."}]},{"role":"user","content":[{"type":"text","text":"Call me later."}]}]`, ""},
		{"the agent's utterance", `[{"speaker":"agent","utterance":"Say stop to be put on our do not call list."},{"speaker":"customer","utterance":"Sure."}]`, ""},
		{"a tool call's parts", `[{"role":"tool","content":[{"type":"text","text":"stop calling: true"}]}]`, ""},
	})
}

// TestSaysDoNotCallNamesNoWords: where a transcript says it is named by
// its field and turn alone, never with the words said.
func TestSaysDoNotCallNamesNoWords(t *testing.T) {
	for _, s := range transcriptShapes {
		got := SaysDoNotCall(readDelivery(t, shape(s.body, agentOffers, userAsks)))
		if got == "" {
			t.Errorf("%s: the person's words are not found", s.name)
		}
		for _, w := range strings.Fields(userAsks) {
			if strings.Contains(strings.ToLower(got), strings.ToLower(strings.Trim(w, ".'"))) && len(w) > 4 {
				t.Errorf("%s: %q holds the person's words", s.name, got)
			}
		}
	}
}

// BenchmarkSaysDoNotCall reads a 200 KiB delivery of Retell's call_ended
// whose person never asks: its transcript, transcript_object (with each
// word's timing) and transcript_with_tool_calls, every turn of them read.
func BenchmarkSaysDoNotCall(b *testing.B) {
	const agent, user = "Hi, this is Sam from Acme Dental about your cleaning next week. Is now a good time?", "Sure, go ahead, I have a minute."
	var text strings.Builder
	var objs, tools []string
	body := ""
	for i := 0; len(body) < 200<<10; i++ {
		fmt.Fprintf(&text, "Agent: %s\nUser: %s\n", agent, user)
		for _, t := range []struct{ role, content string }{{"agent", agent}, {"user", user}} {
			var ws []string
			for j, w := range strings.Fields(t.content) {
				at := float64(i*20+j) * 0.3
				ws = append(ws, fmt.Sprintf(`{"word":%s,"start":%.2f,"end":%.2f}`, q(w), at, at+0.25))
			}
			objs = append(objs, fmt.Sprintf(`{"role":%q,"content":%s,"words":[%s]}`, t.role, q(t.content), strings.Join(ws, ",")))
			tools = append(tools, fmt.Sprintf(`{"role":%q,"content":%s}`, t.role, q(t.content)))
		}
		body = fmt.Sprintf(`{"event":"call_ended","call":{"call_id":"Jabr9TXYYJHfvl6Syypi88rdAHYHmcq6","to_number":"+14155550132","transcript":%s,"transcript_object":[%s],"transcript_with_tool_calls":[%s]}}`,
			q(text.String()), strings.Join(objs, ","), strings.Join(tools, ","))
	}
	d := readDelivery(b, body)
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for range b.N {
		if at := SaysDoNotCall(d); at != "" {
			b.Fatalf("SaysDoNotCall = %q", at)
		}
	}
}

// TestSaysDoNotCallLabelShapes: the called person's label written with
// their name in brackets after it, or in brackets itself, is theirs; the
// agent's so written is still the agent's.
func TestSaysDoNotCallLabelShapes(t *testing.T) {
	checkTranscripts(t, []transcriptCase{
		{"User (Ada)", "Agent (Sam): Hi Ada.\nUser (Ada): Please don't call me again.", " line 2"},
		{"Customer (Ada)", "AI: Hi Ada.\nCustomer (Ada Lovelace): Stop calling me.", " line 2"},
		{"Customer [Ada]", "AI: Hi Ada.\nCustomer [Ada]: Take me off your list.", " line 2"},
		{"[User]", "[Agent]: Hi Ada.\n[User]: Stop.", " line 2"},
		{"[User] after a time", "[00:00:01] [Agent]: Hi Ada.\n[00:00:04] [User]: Remove my number.", " line 2"},
		{"the role in brackets after a name", "Sam (agent): Hi Ada.\nAda (customer): Do not call me again.", " line 2"},
		{"Agent (Sam) offers", "Agent (Sam): Say stop to be put on our do not call list.\nUser (Ada): OK, call me later.", ""},
		{"[Agent] offers", "[Agent]: Say stop to be put on our do not call list.\n[User]: Sure, bye.", ""},
		{"User (Ada), a yes to the offer", "Agent (Sam): Would you like to be added to our do-not-call list?\nUser (Ada): Yes.", " line 2"},
		{"User (Ada), stop by", "Agent (Sam): Hi Ada.\nUser (Ada): I'll stop by the store on Tuesday.", ""},
	})
}

// TestSaysDoNotCallCaptions: a transcript written as captions, SubRip's or
// WebVTT's, its cues' numbers and timings aside, with the speaker as a
// label or as WebVTT's voice tag.
func TestSaysDoNotCallCaptions(t *testing.T) {
	checkTranscripts(t, []transcriptCase{
		{"WebVTT voices", "WEBVTT\n\n00:00:01.000 --> 00:00:04.500\n<v Agent>Hi Ada, this is Sam from Acme Dental.\n\n00:00:05.000 --> 00:00:07.000\n<v User>Stop.\n\n00:00:07.500 --> 00:00:09.000\n<v Agent>Understood. Goodbye.\n", " line 7"},
		{"WebVTT voices with classes and closing tags", "WEBVTT\n\n1\n00:00:01.000 --> 00:00:04.500 align:start\n<v.first Agent>Hi Ada.</v>\n\n2\n00:00:05.000 --> 00:00:07.000\n<v.loud User>Please don't call me again.</v>\n", " line 9"},
		{"WebVTT voices by name", "WEBVTT\n\n00:01.000 --> 00:04.000\n<v Agent>Hi Ada.\n\n00:05.000 --> 00:07.000\n<v Ada Lovelace>Remove me.\n", " line 7"},
		{"WebVTT labels", "WEBVTT\n\n00:00:12.340 --> 00:00:14.000\nAgent: Hi Ada.\n\n00:00:14.500 --> 00:00:16.000\nUser: Stop calling me.\n", " line 7"},
		{"SubRip labels", "1\n00:00:01,000 --> 00:00:04,000\nAgent: Hi Ada.\n\n2\n00:00:05,000 --> 00:00:06,000\nUser: Stop.\n\n3\n00:00:06,500 --> 00:00:08,000\nAgent: Goodbye.\n", " line 7"},
		{"SubRip, a yes to the offer", "1\n00:00:01,000 --> 00:00:04,000\nAgent: Would you like to be added to our do-not-call list?\n\n2\n00:00:05,000 --> 00:00:06,000\nUser: Yes.\n", " line 7"},
		{"WebVTT, the agent offers", "WEBVTT\n\n00:00:01.000 --> 00:00:04.000\n<v Agent>Say stop to be put on our do not call list.\n\n00:00:05.000 --> 00:00:07.000\n<v User>I'll stop by the store.\n", ""},
		{"SubRip, stop by", "1\n00:00:01,000 --> 00:00:04,000\nAgent: Hi Ada.\n\n2\n00:00:05,000 --> 00:00:06,000\nUser: Stop by Tuesday then.\n", ""},
	})
}

// TestSaysDoNotCallDiarized: a transcript whose labels say nothing of who
// is the agent (a diarized one's SPEAKER_00, Speaker 1, spk_0, or names)
// fails closed: any speaker's request not to be called is read, but a
// turn that offers the list as the agent does, and every turn of the one
// speaker who so offers it, are not; a yes to the offer asked is read
// from the other speaker.
func TestSaysDoNotCallDiarized(t *testing.T) {
	checkTranscripts(t, []transcriptCase{
		{"SPEAKER_00, SPEAKER_01", "SPEAKER_00: " + agentOffers + "\nSPEAKER_01: " + userAsks, " line 2"},
		{"SPEAKER_00, SPEAKER_01, a call back", "SPEAKER_00: " + agentOffers + "\nSPEAKER_01: " + userLater, ""},
		{"the person speaks first", "SPEAKER_00: Hello?\nSPEAKER_01: " + agentOffers + "\nSPEAKER_00: Stop calling me.", " line 3"},
		{"the person speaks first, a call back", "SPEAKER_00: Hello?\nSPEAKER_01: " + agentOffers + "\nSPEAKER_00: " + userLater, ""},
		{"Speaker 1, Speaker 2", "Speaker 1: Hi Ada, this is Sam from Acme Dental.\nSpeaker 2: Take me off your list.", " line 2"},
		{"spk_0, spk_1", "spk_0: Hi Ada.\nspk_1: Stop.", " line 2"},
		{"one speaker", "SPEAKER_00: Please don't call me again.", " line 1"},
		{"you can ask us not to call you again", "SPEAKER_00: Hi Ada. You can ask us not to call you again at any time.\nSPEAKER_01: Okay, see you Tuesday.", ""},
		{"you can ask us, alone", "SPEAKER_00: Hi Ada. You can ask us not to call you again at any time.", ""},
		{"any request", "SPEAKER_00: Hi Ada. We honor any request to stop calling.\nSPEAKER_01: Okay.", ""},
		{"upon request", "SPEAKER_00: Hi Ada. We'll stop the calls upon request.\nSPEAKER_01: Okay.", ""},
		{"if you request it", "SPEAKER_00: If you request it, we will stop calling you.\nSPEAKER_01: Okay, bye.", ""},
		{"let us know", "SPEAKER_01: Just let us know if you'd like to be removed from our calling list.\nSPEAKER_00: Will do, thanks.", ""},
		{"let me know", "Speaker 1: Let me know if you want to be removed from our list.\nSpeaker 2: Sure, bye.", ""},
		{"the person's you can", "SPEAKER_00: " + agentOffers + "\nSPEAKER_01: You can take me off your list.", " line 2"},
		{"a yes to the offer", "SPEAKER_00: Would you like to be added to our do-not-call list?\nSPEAKER_01: Yes, please.", " line 2"},
		{"a yes to another question", "SPEAKER_00: Is Tuesday at ten still good?\nSPEAKER_01: Yes.", ""},
		{"can you stop calling me", "SPEAKER_00: Would you like to be added to our do-not-call list?\nSPEAKER_01: Can you just stop calling me?", " line 2"},
		{"opt out of future calls, alone", "SPEAKER_00: Hi Ada. Would you like to opt out of future calls?\nSPEAKER_00: Okay.", ""},
		{"the offer alone", "SPEAKER_00: Hi Ada. Would you like to be added to our do-not-call list?", ""},
		{"say don't call me", "SPEAKER_00: Say don't call me and we won't.\nSPEAKER_01: Sure, bye.", ""},
		{"I say stop calling me", "SPEAKER_00: " + agentOffers + "\nSPEAKER_01: I say stop calling me.", " line 2"},
		{"stop by the store", "SPEAKER_00: Hi Ada.\nSPEAKER_01: I'll stop by the store on Tuesday.", ""},
		{"remove the old address", "SPEAKER_00: Is your address still 12 Elm Street?\nSPEAKER_01: No, remove the old address, it's 4 Oak Lane now.", ""},
		{"names", "Sam: " + agentOffers + "\nAda: Never call me again.", " line 2"},
		{"German", "Sprecher 1: Wenn Sie keine Anrufe mehr wünschen, sagen Sie stopp.\nSprecher 2: Bitte rufen Sie mich nicht mehr an.", " line 2"},
		{"German, the offer alone", "Sprecher 1: Wenn Sie keine Anrufe mehr wünschen, sagen Sie stopp.\nSprecher 2: Danke, auf Wiederhören.", ""},
		{"Spanish", "Hablante 1: Si no desea recibir más llamadas, diga no me llame más.\nHablante 2: No me vuelva a llamar.", " line 2"},
		{"Spanish, the person's puede", "Hablante 1: Hola, soy Sam de Acme Dental.\nHablante 2: Si puede, deje de llamarme.", " line 2"},
		{"Spanish, the offer alone", "Hablante 1: Si no desea recibir más llamadas, diga no me llame más.\nHablante 2: Gracias, adiós.", ""},
		{"a tool call's result", "SPEAKER_00: Hi Ada.\nTool result: do not call: false\nSPEAKER_01: Fine, Tuesday.", ""},
		{"WebVTT voices by number", "WEBVTT\n\n00:00:01.000 --> 00:00:04.000\n<v Speaker 0>" + agentOffers + "\n\n00:00:05.000 --> 00:00:07.000\n<v Speaker 1>Stop.\n", " line 7"},
		// The person's questions are no offer of the list: they name
		// neither the caller's side nor the person's wish.
		{"can you stop calling", "SPEAKER_00: Hello Ada, I'm calling about your plan.\nSPEAKER_01: Can you stop calling?", " line 2"},
		{"could you remove this number", "SPEAKER_00: Hello Ada, I'm calling about your plan.\nSPEAKER_01: Could you remove this number from the list?", " line 2"},
	})
}

// TestSaysDoNotCallBesideTheAgent: beside a speaker labelled as the
// agent, the other speaker's turns are the person's and read whole, as
// the service's own example writes them ("Agent: ...\nAda: ..."): a
// question of theirs that names the list, or a "you can", is their
// request, never taken for an agent's offer.
func TestSaysDoNotCallBesideTheAgent(t *testing.T) {
	checkTranscripts(t, []transcriptCase{
		{"can you stop calling", "Agent: Hello Ada, I'm calling about your plan.\nAda: Can you stop calling?", " line 2"},
		{"could you stop calling this number", "Agent: Hello Ada, I'm calling about your plan.\nAda: Could you stop calling this number?", " line 2"},
		{"you can stop calling now", "Agent: Hello Ada, I'm calling about your plan.\nAda: You can stop calling now.", " line 2"},
		{"a call back", "Agent: Hello Ada, I'm calling about your plan.\nAda: Sure, call me back tomorrow.", ""},
	})
}

// TestSaysDoNotCallAsPeopleSayIt: requests the differential review of
// 2026-11-29 found read in no version, in a plainly labelled transcript:
// a turn that ends on a whole opt-out ("Why do you keep calling? Stop."),
// and phrases without "me" or in the infinitive, in five languages. A
// turn whose last sentence takes the stop back, or asks to be called
// later, stays callable.
func TestSaysDoNotCallAsPeopleSayIt(t *testing.T) {
	const agent = "Agent: Hello, this is Sam from Acme Dental about your appointment.\nUser: "
	for _, said := range []string{
		"Why do you keep calling? Stop.",
		"Say stop? Fine. Stop.",
		"Could you please not call me anymore?",
		"¿Puede dejar de llamarme?",
		"Dejen de llamar.",
		"Quíteme de su lista, por favor.",
		"Hören Sie auf anzurufen.",
		"N'appelez plus.",
		"Arrêtez d'appeler, s'il vous plaît.",
		"Parem de ligar.",
		"We don't want you to call again.",
		"We would prefer you not call again.",
		"I'd rather you didn't call again.",
	} {
		checkTranscripts(t, []transcriptCase{{said, agent + said, " line 2"}})
	}
	for _, said := range []string{
		"Stop. Wait, tell me more about the price.",
		"Sure. Call me back tomorrow.",
		"I'll stop by on Tuesday. Thanks.",
		"Could you call me again next week?",
		"I don't want you to call before noon.",
		"We'd prefer you call again after six.",
	} {
		checkTranscripts(t, []transcriptCase{{said, agent + said, ""}})
	}
}

// vapiLive is Vapi's live transcript message, as its server messages'
// schema gives it: one turn's words in message.transcript, its speaker
// in message.role and whether it is final in message.transcriptType,
// beside the call, the customer and the live artifact (whose messages do
// not yet hold the turn).
const vapiLive = `{"message":{"timestamp":1740848589000,"type":%s,"role":%s,"transcriptType":%s,"transcript":%s,` +
	`"call":{"id":"9a8b7c6d","orgId":"o1","type":"outboundPhoneCall","status":"in-progress","phoneNumberId":"p1","customer":{"number":"+14155550132"}},` +
	`"customer":{"number":"+14155550132"},"phoneNumber":{"id":"p1","number":"+14155550100"},` +
	`"artifact":{"messages":[{"role":"system","message":"You are Sam. Offer the do not call list.","time":1740848580000,"secondsFromStart":0},` +
	`{"role":"bot","message":"Hi Ada, this is Sam from Acme Dental.","time":1740848581000,"endTime":1740848586000,"secondsFromStart":1.2,"duration":5000}]}}}`

// TestSaysDoNotCallVapiLive: Vapi's live transcript message is one turn,
// its speaker beside it: the user's final words are read whole, a partial
// turn's only for a phrase, and the assistant's never. Its
// conversation-update's conversation is read as turns.
func TestSaysDoNotCallVapiLive(t *testing.T) {
	for _, c := range []struct {
		name, typ, role, kind, said, at string
	}{
		{"the user asks", "transcript", "user", "final", userAsks, "message.transcript"},
		{"the user asks, typed final", `transcript[transcriptType="final"]`, "user", "final", "Take me off your list.", "message.transcript"},
		{"the user's whole stop", "transcript", "user", "final", "Stop.", "message.transcript"},
		{"a partial phrase", "transcript", "user", "partial", "please don't call me", "message.transcript"},
		{"a partial stop", "transcript", "user", "partial", "Stop", ""},
		{"the user's call back", "transcript", "user", "final", userLater, ""},
		{"the user stops by", "transcript", "user", "final", "I'll stop by the store.", ""},
		{"the assistant offers", "transcript", "assistant", "final", agentOffers, ""},
		{"the assistant's partial offer", "transcript", "assistant", "partial", "say stop and we'll put you on our do not call list", ""},
	} {
		body := fmt.Sprintf(vapiLive, q(c.typ), q(c.role), q(c.kind), q(c.said))
		if got := SaysDoNotCall(readDelivery(t, body)); got != c.at {
			t.Errorf("%s: SaysDoNotCall = %q, want %q", c.name, got, c.at)
		}
	}
	const update = `{"message":{"timestamp":1740848590000,"type":"conversation-update","call":{"id":"9a8b7c6d","type":"outboundPhoneCall","customer":{"number":"+14155550132"}},"customer":{"number":"+14155550132"},` +
		`"conversation":[{"role":"system","content":"You are Sam. Offer the do not call list."},{"role":"assistant","content":%s},{"role":"user","content":%s}]}}`
	if got := SaysDoNotCall(readDelivery(t, fmt.Sprintf(update, q(agentOffers), q(userAsks)))); got != "message.conversation[2]" {
		t.Errorf("conversation-update, the user asks: SaysDoNotCall = %q", got)
	}
	if got := SaysDoNotCall(readDelivery(t, fmt.Sprintf(update, q(agentOffers), q(userLater)))); got != "" {
		t.Errorf("conversation-update, a call back: SaysDoNotCall = %q", got)
	}
}

// TestSaysDoNotCallAnswersOfferAbroad: the agent's offer of the
// do-not-call list asked in Spanish, Portuguese, French or German in its
// own words, answered yes, says do not call; a yes to another question,
// or to an offer of another list, and a no or a hedged yes say nothing.
func TestSaysDoNotCallAnswersOfferAbroad(t *testing.T) {
	checkTranscripts(t, []transcriptCase{
		{"Spanish, remove you from our calling list", "Agente: ¿Desea que lo eliminemos de nuestra lista de llamadas?\nCliente: Sí.", " line 2"},
		{"Spanish, remove you, joined", "Agente: ¿Quiere que procedamos a eliminarla de nuestra lista?\nCliente: Sí, por favor.", " line 2"},
		{"Spanish, to be removed", "Agente: ¿Desea ser eliminado de nuestra lista de llamadas?\nCliente: Claro.", " line 2"},
		{"Spanish, your number", "Agente: ¿Quiere que quitemos su número de nuestra lista?\nCliente: Sí.", " line 2"},
		{"Spanish, stop calling", "Agente: ¿Quiere que dejemos de llamarle?\nCliente: Sí, por favor.", " line 2"},
		{"Spanish, never again", "Agente: ¿Prefiere que no le volvamos a llamar?\nCliente: Sí.", " line 2"},
		{"Spanish, no more", "Agente: ¿Prefiere que no le llamemos más?\nCliente: Sí.", " line 2"},
		{"Portuguese, remove you", "Agente: Deseja que o removamos da nossa lista de chamadas?\nCliente: Sim.", " line 2"},
		{"Portuguese, removê-lo", "Agente: Posso removê-lo da nossa lista de ligações?\nCliente: Sim, por favor.", " line 2"},
		{"Portuguese, to be removed", "Agente: Gostaria de ser removido da nossa lista?\nCliente: Sim.", " line 2"},
		{"Portuguese, stop calling", "Agente: Quer que paremos de ligar para você?\nCliente: Sim.", " line 2"},
		{"Portuguese, no more", "Agente: Prefere que não liguemos mais?\nCliente: Sim.", " line 2"},
		{"French, remove you", "Agent: Souhaitez-vous que nous vous retirions de notre liste d'appels ?\nClient: Oui.", " line 2"},
		{"French, to be removed", "Agent: Voulez-vous être retiré de notre liste ?\nClient: Oui, merci.", " line 2"},
		{"French, no more calls", "Agent: Voulez-vous que nous ne vous appelions plus ?\nClient: Oui.", " line 2"},
		{"German, strike you", "KI: Möchten Sie, dass wir Sie von unserer Anrufliste streichen?\nKunde: Ja.", " line 2"},
		{"German, your number", "KI: Sollen wir Ihre Nummer aus unserer Liste entfernen?\nKunde: Ja, bitte.", " line 2"},
		{"German, to be removed", "KI: Möchten Sie aus unserer Liste ausgetragen werden?\nKunde: Ja, gerne.", " line 2"},
		{"German, to be struck off", "KI: Wünschen Sie, aus unserer Anrufliste gestrichen zu werden?\nKunde: Ja.", " line 2"},
		{"Spanish, por favor", "Agente: ¿Desea que lo eliminemos de nuestra lista de llamadas?\nCliente: Por favor.", " line 2"},
		{"Spanish, por supuesto", "Agente: ¿Prefiere que no le volvamos a llamar?\nCliente: Por supuesto.", " line 2"},
		{"Portuguese, com certeza", "Agente: Deseja que o removamos da nossa lista de chamadas?\nCliente: Com certeza.", " line 2"},
		{"French, bien sûr", "Agent: Voulez-vous être retiré de notre liste ?\nClient: Bien sûr.", " line 2"},
		{"German, natürlich", "KI: Sollen wir Ihre Nummer aus unserer Liste entfernen?\nKunde: Natürlich.", " line 2"},
		{"Spanish, as turns", `[{"role":"agent","message":"Hola Ana. ¿Desea que la eliminemos de nuestra lista de llamadas?"},{"role":"user","message":"Sí."}]`, "[1]"},
		// A yes to another question, or to an offer of another list.
		{"Spanish, another question", "Agente: ¿Le viene bien el martes a las diez?\nCliente: Sí.", ""},
		{"Spanish, the e-mail list", "Agente: ¿Desea que lo eliminemos de nuestra lista de correo electrónico?\nCliente: Sí.", ""},
		{"Spanish, the waiting list", "Agente: ¿Desea que lo quitemos de la lista de espera?\nCliente: Sí.", ""},
		{"Spanish, the appointment off the list", "Agente: ¿Quitamos la cita de la lista?\nCliente: Sí.", ""},
		{"Spanish, not before ten", "Agente: ¿Prefiere que no le llamemos antes de las diez?\nCliente: Sí.", ""},
		{"Spanish, a call back", "Agente: ¿Quiere que le volvamos a llamar mañana?\nCliente: Sí.", ""},
		{"Portuguese, a call tomorrow", "Agente: Podemos ligar para você amanhã?\nCliente: Sim.", ""},
		{"French, a call back", "Agent: Voulez-vous que nous vous rappelions demain ?\nClient: Oui.", ""},
		{"French, the e-mail list", "Agent: Souhaitez-vous être retiré de notre liste de diffusion par e-mail ?\nClient: Oui.", ""},
		{"German, the waiting list", "KI: Sollen wir Sie von der Warteliste nehmen?\nKunde: Ja.", ""},
		{"German, the newsletter", "KI: Sollen wir Sie aus dem Newsletter austragen?\nKunde: Ja.", ""},
		// A no, a hedged yes, a yes that asks back.
		{"Spanish, no", "Agente: ¿Desea que lo eliminemos de nuestra lista de llamadas?\nCliente: No, gracias.", ""},
		{"Spanish, yes but", "Agente: ¿Desea que lo eliminemos de nuestra lista de llamadas?\nCliente: Sí, pero ahora no.", ""},
		{"Spanish, por qué", "Agente: ¿Desea que lo eliminemos de nuestra lista de llamadas?\nCliente: ¿Por qué?", ""},
		{"Spanish, por favor no", "Agente: ¿Desea que lo eliminemos de nuestra lista de llamadas?\nCliente: Por favor no, me interesa.", ""},
		{"French, bien", "Agent: Voulez-vous être retiré de notre liste ?\nClient: Bien, je vais réfléchir.", ""},
		{"Spanish, por favor to another question", "Agente: ¿Le envío la confirmación por correo?\nCliente: Por favor.", ""},
		{"Spanish, yes who", "Agente: ¿Desea que lo eliminemos de nuestra lista de llamadas?\nCliente: ¿Sí? ¿Quién habla?", ""},
		{"German, no", "KI: Sollen wir Ihre Nummer aus unserer Liste entfernen?\nKunde: Nein, danke.", ""},
		{"French, yes but", "Agent: Voulez-vous être retiré de notre liste ?\nClient: Oui, mais pas maintenant.", ""},
		{"Portuguese, no", "Agente: Deseja que o removamos da nossa lista de chamadas?\nCliente: Não, obrigado.", ""},
	})
}

// TestSaysDoNotCallDiarizedTurns: a JSON array of turns whose speakers
// no role names ({"speaker": "A"}, {"speaker": 0}) is read as a diarized
// text is; a prompt or the agent alone, with no one else, says nothing.
func TestSaysDoNotCallDiarizedTurns(t *testing.T) {
	utterances := func(agent, user string) string {
		return `[{"speaker":"A","text":` + q(agent) + `,"confidence":0.94,"start":240,"end":4100},{"speaker":"B","text":` + q(user) + `,"confidence":0.91,"start":4600,"end":6200}]`
	}
	numbered := func(agent, user string) string {
		return `[{"start":0.24,"end":4.1,"confidence":0.94,"channel":0,"transcript":` + q(agent) + `,"speaker":0,"id":"u1"},{"start":4.6,"end":6.2,"confidence":0.91,"channel":0,"transcript":` + q(user) + `,"speaker":1,"id":"u2"}]`
	}
	checkTranscripts(t, []transcriptCase{
		{"speakers by letter", utterances(agentOffers, userAsks), "[1]"},
		{"speakers by letter, a call back", utterances(agentOffers, userLater), ""},
		{"speakers by number", numbered(agentOffers, userAsks), "[1]"},
		{"speakers by number, a call back", numbered(agentOffers, userLater), ""},
		{"speakers by number, a yes to the offer", numbered("Hi Ada. Would you like to be added to our do-not-call list?", "Yes."), "[1]"},
		{"speakers by number, stop by", numbered("Hi Ada.", "I'll stop by the store."), ""},
		{"the agent's offer alone", `[{"speaker":"A","text":"Hi Ada. You can ask us not to call you again at any time."}]`, ""},
		{"the developer prompt and the assistant", `[{"role":"developer","content":"If the person says stop, add them to the do not call list."},{"role":"assistant","content":` + q(agentOffers) + `}]`, ""},
		{"Vapi's messages, no one answered", `[{"role":"system","message":"You are Sam. If asked, put the number on the do not call list."},{"role":"bot","message":` + q(agentOffers) + `}]`, ""},
		{"the agent and a named speaker", `[{"role":"agent","message":"Hi, is Ada there?"},{"speaker":"Bob","text":"Don't call this number again."}]`, "[1]"},
	})
	checkTranscripts(t, []transcriptCase{
		{"the developer prompt, as text", "Developer: If the person says stop, add them to the do not call list.\nAI: " + agentOffers, ""},
	})
}

// TestSaysDoNotCallSymbolLabels: a speaker labelled by a symbol alone
// (an emoji, a dash), whose label folds to nothing, is a speaker still:
// beside the agent, the person's request is read; with no other label,
// as a diarized speaker's, but not the turn that offers the list.
func TestSaysDoNotCallSymbolLabels(t *testing.T) {
	checkTranscripts(t, []transcriptCase{
		{"beside the agent", "Agent: Hi Ada, this is Sam from Acme Dental.\n-: Please don't call me again.", " line 2"},
		{"emoji", "🤖: Hi Ada, this is Sam from Acme Dental.\n👤: Please don't call me again.", " line 2"},
		{"emoji, the offer and a call back", "🤖: " + agentOffers + "\n👤: " + userLater, ""},
	})
}

// TestSaysDoNotCallNumberedSpeakerBesideRole: a diarized speaker's number
// beside a turn's role (Bland's user) names it less than the role does:
// the user's turn is read as the person's, whatever its words.
func TestSaysDoNotCallNumberedSpeakerBesideRole(t *testing.T) {
	checkTranscripts(t, []transcriptCase{
		{"Bland's user beside a speaker's number", `[{"id":1,"text":"Hi Ada, this is Sam from Acme Dental.","user":"assistant","speaker":1},{"id":2,"text":"You can stop calling now.","user":"user","speaker":0}]`, "[1]"},
	})
}

// TestSaysDoNotCallNameLikeATool: a name that starts as a tool's label
// does ("Toole", "Toolan") is a speaker's beside the agent, read whole;
// a tool call's and its result's labels are the record's.
func TestSaysDoNotCallNameLikeATool(t *testing.T) {
	checkTranscripts(t, []transcriptCase{
		{"Toole", "Agent: Hi, is this Ms Toole?\nToole: Stop calling me.", " line 2"},
		{"Toolan", "Agent: Hi, is this Mr Toolan?\nToolan: Please don't call me again.", " line 2"},
		{"a tool's result", "Agent: Hi Ada.\ntool_result: do not call: false\nAda: Fine, Tuesday.", ""},
		{"a function's response", "Agent: Hi Ada.\nFunctionResponse: stop calling: false\nAda: Fine, Tuesday.", ""},
	})
}

// TestSaysDoNotCallTheListenerCalls: a turn that speaks to the one who
// calls as the caller ("You can stop calling now", "If you could stop
// calling", "Any time you call, I hang up") is the called person's
// request, never the agent's offer, whoever's label it is under; the
// agent's offer that asks to be called back is still the agent's.
func TestSaysDoNotCallTheListenerCalls(t *testing.T) {
	checkTranscripts(t, []transcriptCase{
		{"emoji, you can stop calling now", "🤖: Hi Ada, this is Sam from Acme Dental.\n👤: You can stop calling now.", " line 2"},
		{"emoji, if you could stop calling", "🤖: Hi Ada, this is Sam from Acme Dental.\n👤: If you could stop calling that would be great.", " line 2"},
		{"emoji, any time you call", "🤖: Hi Ada, this is Sam from Acme Dental.\n👤: Any time you call, I hang up. Stop calling.", " line 2"},
		{"diarized, you can stop calling now", "SPEAKER_00: " + agentOffers + "\nSPEAKER_01: You can stop calling now.", " line 2"},
		{"diarized, why do you keep calling", "SPEAKER_00: Hi Ada.\nSPEAKER_01: Why do you keep calling? You can stop calling.", " line 2"},
		{"diarized, call us back", "SPEAKER_00: Hi Ada. You can call us back at any time to be put on our do not call list.\nSPEAKER_01: Okay, bye.", ""},
		{"diarized, bother you, calling from", "SPEAKER_00: Sorry to bother you, calling from Acme Dental. Say stop to be added to our do-not-call list.\nSPEAKER_01: Okay, bye.", ""},
		{"diarized, you called again about", "SPEAKER_00: We noticed you called again about billing. Say stop to be added to our do-not-call list.\nSPEAKER_01: Okay, bye.", ""},
		{"diarized, keep calling our line", "SPEAKER_00: If you keep calling our line, we'll help. Say stop to be added to our do-not-call list.\nSPEAKER_01: Okay, bye.", ""},
		{"diarized, thank you, call", "SPEAKER_00: Thank you. Call this number to be removed from our calling list at any time.\nSPEAKER_01: Okay, bye.", ""},
	})
}

// TestSaysDoNotCallYouRemove: a diarized speaker who tells the other to
// remove this number, or us, or it ("You can remove this number.") asks
// for it: the one spoken to is the caller, so it is no agent's offer, and
// the speaker is read as the person. The agent's "you can remove your
// number by pressing 9" and "you can ask us to remove your number" are
// still offers, and their speaker's turns are not read.
func TestSaysDoNotCallYouRemove(t *testing.T) {
	const hi = "SPEAKER_00: Hi Ada, this is Sam from Acme Dental.\nSPEAKER_01: "
	checkTranscripts(t, []transcriptCase{
		{"you can remove this number", hi + "You can remove this number.", " line 2"},
		{"you can delete this number", hi + "You can delete this number.", " line 2"},
		{"you can take this number off", hi + "You can take this number off your list.", " line 2"},
		{"you may remove us", hi + "You may remove us from your list.", " line 2"},
		{"you could just remove this number", hi + "You could just remove this number from your calling list.", " line 2"},
		{"you can remove your number by pressing 9", "SPEAKER_00: Hi Ada. You can remove your number from our calling list by pressing 9.\nSPEAKER_01: Okay, see you Tuesday.", ""},
		{"you can ask us to remove your number", "SPEAKER_00: Hi Ada. You can ask us to remove your number at any time.\nSPEAKER_01: Okay, see you Tuesday.", ""},
		{"you can ask us, the other speaks first", "SPEAKER_00: Hello?\nSPEAKER_01: Hi Ada. You can ask us to remove your number at any time.\nSPEAKER_00: Sure, call me next week.", ""},
	})
	for _, c := range []struct {
		said  string
		offer bool
	}{
		{"You can remove this number.", false},
		{"You may take us off your calling list.", false},
		{"You can remove your number from our calling list by pressing 9.", true},
		{"You can ask us to remove your number from our calling list.", true},
	} {
		if got := offersAsAgent(c.said); got != c.offer {
			t.Errorf("offersAsAgent(%q) = %v, want %v", c.said, got, c.offer)
		}
	}
}

// TestSaysDoNotCallNoteInATurn: a line of a person's turn that starts
// with "NOTE" (a transcript in capitals) is their words, read; WebVTT's
// note, a block of its own after a blank line, is not.
func TestSaysDoNotCallNoteInATurn(t *testing.T) {
	checkTranscripts(t, []transcriptCase{
		{"NOTE in a turn", "AGENT: HI ADA, THIS IS SAM FROM ACME DENTAL.\nUSER: LISTEN.\nNOTE THAT I SAID DON'T CALL ME AGAIN.", " line 2"},
		{"WebVTT's note", "WEBVTT\n\nNOTE the agent offers the do not call list\n\n00:00:01.000 --> 00:00:04.000\n<v Agent>Hi Ada.\n\n00:00:05.000 --> 00:00:07.000\n<v User>Sure, Tuesday.\n", ""},
		{"WebVTT's note after a turn", "WEBVTT\n\n00:00:01.000 --> 00:00:04.000\n<v User>Hi.\n\nNOTE stop calling me was said later\n\n00:00:05.000 --> 00:00:07.000\n<v Agent>Hi Ada.\n", ""},
	})
}

// TestSaysDoNotCallSymbolSpeakersApart: speakers labelled by different
// symbols are different speakers: a yes of one to the other's offer of
// the list is read.
func TestSaysDoNotCallSymbolSpeakersApart(t *testing.T) {
	checkTranscripts(t, []transcriptCase{
		{"emoji, a yes to the offer", "🤖: Hi Ada, this is Sam.\n👤: Hello.\n🤖: Would you like to be added to our do-not-call list?\n👤: Sure.", " line 4"},
		{"emoji, a yes to another question", "🤖: Hi Ada, this is Sam.\n👤: Hello.\n🤖: Is Tuesday at ten still good?\n👤: Sure.", ""},
	})
}

// TestSaysDoNotCallNoLabels: a transcript with no speaker labels at all
// (text, captions, a JSON array of turns that name no speaker) is read
// failing closed: each line (each cue, each turn) sentence by sentence,
// every sentence but one that offers the list as an agent does.
func TestSaysDoNotCallNoLabels(t *testing.T) {
	const offer = "Would you like to be added to our do-not-call list?"
	checkTranscripts(t, []transcriptCase{
		{"one line, the person asks", agentOffers + " " + userAsks, " line 1"},
		{"lines, the person asks", agentOffers + "\n" + userAsks + "\nUnderstood. Goodbye.", " line 2"},
		{"lines, the person asks first", "Hello?\n" + agentOffers + "\nStop calling me.", " line 3"},
		{"a whole stop", "Hi Ada, this is Sam from Acme Dental.\nStop.", " line 2"},
		{"a whole stop after the offer on its line", agentOffers + " Stop.", " line 1"},
		{"take me, a hesitation, off your list", "Hi Ada, this is Sam from Acme Dental.\nTake me... off your list.", " line 2"},
		{"take me, a hesitation at a line's end", "Hi Ada, this is Sam from Acme Dental.\nTake me...\noff your list.", " line 2"},
		{"you can take me off your list", agentOffers + "\nYou can take me off your list.", " line 2"},
		{"German", "Wenn Sie keine Anrufe mehr wünschen, sagen Sie stopp.\nBitte rufen Sie mich nicht mehr an.", " line 2"},
		{"Windows line ends", "Hi Ada, this is Sam from Acme Dental.\r\nPlease don't call me again.\r\n", " line 2"},
		{"the offer over two lines, a comma between", "To be put on our do not call list,\nsay stop.\nOkay, call me next week.", ""},
		{"the offer cut short by the person", "If you'd rather not get these calls,\nStop calling me!", " line 1"},
		{"times in brackets", "[00:00:01] Hi Ada, this is Sam from Acme Dental.\n[00:00:05] Please don't call me again.", " line 2"},
		{"times in brackets, a call back", "[00:00:01] " + agentOffers + "\n[00:00:05] " + userLater, ""},
		{"do not, then call me", "Hi Ada, this is Sam from Acme Dental.\nI do not. Call me again next week.", ""},
		// Only the agent's offer, in its wordings, and a call back.
		{"the offer, a call back", agentOffers + "\n" + userLater, ""},
		{"the offer, one line, a call back", agentOffers + " Okay, call me next week.", ""},
		{"you can ask us", "Hi Ada. You can ask us not to call you again at any time.\nOkay, call me next week.", ""},
		{"German offer", "Wenn Sie keine Anrufe mehr wünschen, sagen Sie stopp.\nDanke, auf Wiederhören.", ""},
		{"say stop to be put on", "Say stop to be put on our do not call list.\nOkay, call me next week.", ""},
		{"Spanish offer", "Si no desea recibir más llamadas, diga no me llame más.\nGracias, adiós.", ""},
		{"let us know", "Just let us know if you'd like to be removed from our calling list.\nWill do, thanks.", ""},
		{"any request", "Hi Ada. We honor any request to stop calling.\nOkay.", ""},
		{"if you request it", "If you request it, we will stop calling you.\nOkay, bye.", ""},
		{"the offer asked, no", "Hi Ada. " + offer + "\nNo thanks.", ""},
		{"I can add you", "Hi Ada. I can add you to our do-not-call list.\nOkay, call me next week.", ""},
		{"we'll put you", "Hi Ada. We'll put you on our do not call list if you say stop.\nOkay, bye.", ""},
		{"can you add me", "Hi Ada. Is now a good time?\nCan you add me to your do-not-call list?", " line 2"},
		{"I'll remove you from my contacts", "Hi Ada. Is now a good time?\nI'll remove you from my contacts, stop calling me.", " line 2"},
		{"I'll take you to court", "Hi Ada. Is now a good time?\nI'll take you to court if you don't stop calling.", " line 2"},
		{"we will put you on notice", "Hi Ada. Is now a good time?\nWe will put you on notice, stop calling this number.", " line 2"},
		{"can you stop calling us", "Hi Ada. Is now a good time?\nCan you stop calling us?", " line 2"},
		{"you can stop calling us", "Hi Ada. Is now a good time?\nYou can stop calling us.", " line 2"},
		{"when are you going to stop calling us", "Hi Ada. Is now a good time?\nWhen are you going to stop calling us?", " line 2"},
		{"a line that reads as labelled after the request", "Hello?\nPlease don't call me again.\nReminder: your appointment is Tuesday.", " line 2"},
		{"I'll take you off", "Hi Ada. I'll take you off if you say stop.\nOkay, call me next week.", ""},
		{"stop by the store", "Hi Ada, this is Sam from Acme Dental.\nI'll stop by the store on Tuesday.", ""},
		{"stop by, one line", "Hi Ada, this is Sam from Acme Dental. I'll stop by the store on Tuesday.", ""},
		// A yes right after the offer asked.
		{"a yes to the offer, next line", "Hi Ada. " + offer + "\nYes, please.", " line 2"},
		{"a yes to the offer, same line", "Hi Ada. " + offer + " Yes, please.", " line 1"},
		{"a yes after fillers", "Hi Ada. " + offer + "\nUm.\nYes.", " line 3"},
		{"a yes after okay", "Hi Ada. " + offer + "\nOkay. Yes, please.", " line 2"},
		{"okay alone after the offer", "Hi Ada. " + offer + "\nOkay.", ""},
		{"a yes to another question", "Hi Ada. Is Tuesday at ten still good?\nYes.", ""},
		{"a yes after the offer said, then a question", "Say stop to be added to our do-not-call list. Is now a good time?\nYes.", ""},
		{"a yes that asks back", "Hi Ada. " + offer + "\nYes? Who is this?", ""},
	})
}

// TestSaysDoNotCallNoLabelsCallerWords: in text of no labels, the
// agent's own words about its calls, said on every call (when it calls,
// the rules it keeps, the choice it leaves the person), list no one; the
// person's request beside them, or in the same words turned on
// themselves, still does.
func TestSaysDoNotCallNoLabelsCallerWords(t *testing.T) {
	const hi = "Hi Ada, this is Sam from Acme Dental."
	checkTranscripts(t, []transcriptCase{
		{"we don't call after 8", hi + "\nOkay.\nWe don't call after 8 pm.\nSure.", ""},
		{"we'll never call you on weekends", hi + " We'll never call you on weekends. Okay, thanks.", ""},
		{"we do not call on Sundays", hi + "\nWe do not call on Sundays.\nGood to know.", ""},
		{"a note not to call before noon", hi + "\nI work nights.\nI'll make a note not to call you before noon.\nThanks.", ""},
		{"stop calling once you confirm", hi + "\nWe'll stop calling once you confirm.\nOkay, I confirm.", ""},
		{"once you reply, we'll stop calling", hi + "\nOnce you reply, we'll stop calling.\nOkay.", ""},
		{"we stop calling about this appointment", hi + "\nAfter today we will stop calling about this appointment.\nThanks.", ""},
		{"we honor the registry", hi + "\nWe honor the national do not call registry.\nOkay.", ""},
		{"we comply with the rules", hi + "\nWe comply with all do not call regulations.\nSure.", ""},
		{"your number is not on the registry", hi + "\nYour number is not on the national do not call registry.\nOkay.", ""},
		{"if you're on a list, we apologize", hi + "\nIf you're on a do not call list, we apologize.\nNo problem.", ""},
		{"if you want us to stop calling, let me know", hi + "\nIf at any point you want us to stop calling, let me know.\nWill do.", ""},
		{"tell me if you'd like to be removed", hi + "\nJust tell me if you'd like to be removed.\nOkay.", ""},
		{"would you like me to stop calling, no", hi + "\nWould you like me to stop calling?\nNo, it's fine.", ""},
		{"German, reply stop", "Guten Tag, hier ist die Praxis Dr. Müller.\nUm keine Anrufe mehr zu erhalten, antworten Sie STOPP.\nDanke.", ""},
		{"Portuguese, a note not to call before noon", "Olá, aqui é a Clínica Sorriso.\nVou anotar para não ligar antes do meio-dia.\nObrigado.", ""},
		{"SubRip, we don't call after 8", "1\n00:00:01,000 --> 00:00:03,000\nWe don't call after 8 pm.\n\n2\n00:00:04,000 --> 00:00:05,000\nOkay.\n", ""},
		{"items, we honor the registry", `[{"text":"We honor the do not call registry."},{"text":"Okay."}]`, ""},
		{"our company honors the registry", hi + "\nOur company honors the do not call registry.\nOkay.", ""},
		{"this call complies with the rules", hi + "\nThis call complies with all do not call rules.\nOkay.", ""},
		{"federal and state rules", hi + "\nWe comply with all federal and state do not call regulations.\nOkay.", ""},
		{"as soon as you confirm", hi + "\nAs soon as you confirm, we'll stop calling.\nOkay.", ""},
		{"we don't call anyone after 8", hi + "\nWe don't call anyone after 8.\nOkay.", ""},
		// The person's request, beside such words or in them.
		{"would you like me to stop calling, yes", hi + "\nWould you like me to stop calling?\nYes.", " line 3"},
		{"tell me if you'd like to be removed, yes", hi + "\nJust tell me if you'd like to be removed.\nYes.", " line 3"},
		{"if you're on a list, we apologize, yes", hi + "\nIf you're on a do not call list, we apologize.\nYes, I am.", " line 3"},
		{"we don't call after 8, stop calling", hi + "\nWe don't call after 8 pm.\nWe don't call people after 9, stop calling.", " line 3"},
		{"we won't call you again", hi + "\nPlease, no more.\nUnderstood, we'll never call you again.", " line 3"},
		{"if that's what you want, we'll stop calling", hi + "\nPlease, no more.\nIf that's what you want, we'll stop calling.", " line 3"},
		{"we'll stop calling at once", hi + "\nPlease, no more.\nOkay, we'll stop calling at once.", " line 3"},
		{"we'll never call you on this number again", hi + "\nPlease, no more.\nWe will never call you on this number again.", " line 3"},
		{"a note not to call you in the future", hi + "\nPlease, no more.\nI'll make a note not to call you in the future.", " line 3"},
		{"we'll stop calling you after this call", hi + "\nPlease, no more.\nGot it, we'll stop calling you after this call.", " line 3"},
		{"a note not to call again", hi + "\nPlease make a note not to call again.", " line 2"},
		{"we honor the registry, you should too", hi + "\nWe honor the do not call registry, you should too.", " line 2"},
		{"we are on the registry", hi + "\nWe checked, we are on the do not call registry.", " line 2"},
		{"if you're on the list, I'm on it", hi + "\nIf you're on the do not call list, you shouldn't get these calls. I'm on it.", " line 2"},
		{"your number is not on the list, mine is", hi + "\nYour number is not on the do not call list but mine is.", " line 2"},
		{"we apologize, but stop calling me", hi + "\nIf you're on the do not call list, we apologize, but stop calling me.", " line 2"},
		{"don't call on Sundays", hi + "\nDon't call on Sundays.", " line 2"},
		{"never call us on weekends", hi + "\nNever call us on weekends.", " line 2"},
		{"do you want me to stop calling you, stop calling me", hi + "\nDo you want me to stop calling you? Stop calling me.", " line 2"},
		{"we checked, our number is on the list", hi + "\nWe checked and our number is on the do not call list.", " line 2"},
		{"we honor the registry and expect you to", hi + "\nWe honor the do not call registry and expect you to as well.", " line 2"},
		{"our household follows the rules", hi + "\nOur household follows the do not call rules.", " line 2"},
		{"we don't call after 8 and neither should you", hi + "\nWe don't call after 8 pm and neither should you.", " line 2"},
		{"you're not on the list, I am", hi + "\nYou're not on the do not call list, I am.", " line 2"},
	})
}

// TestSaysDoNotCallNoLabelsCaptions: captions with no speaker labels
// are read as text of no labels is, each cue's words one turn, its
// number and timing no one's words.
func TestSaysDoNotCallNoLabelsCaptions(t *testing.T) {
	checkTranscripts(t, []transcriptCase{
		{"WebVTT, the person asks", "WEBVTT\n\n00:00:01.000 --> 00:00:04.500\n" + agentOffers + "\n\n00:00:05.000 --> 00:00:07.000\n" + userAsks + "\n", " line 7"},
		{"WebVTT, a call back", "WEBVTT\n\n00:00:01.000 --> 00:00:04.500\n" + agentOffers + "\n\n00:00:05.000 --> 00:00:07.000\n" + userLater + "\n", ""},
		{"WebVTT, a note", "WEBVTT\n\nNOTE\nthe person said stop calling me\n\n00:00:01.000 --> 00:00:04.500\nHi Ada.\n", ""},
		{"WebVTT, cue names", "WEBVTT\n\nintro\n00:00:01.000 --> 00:00:04.500\nHi Ada.\n\nreply\n00:00:05.000 --> 00:00:07.000\nStop.\n", " line 9"},
		{"SubRip, the person asks", "1\n00:00:01,000 --> 00:00:04,000\nHi Ada, this is Sam from Acme Dental.\n\n2\n00:00:05,000 --> 00:00:06,000\nStop calling me.\n", " line 7"},
		{"SubRip, the offer wrapped over two lines", "1\n00:00:01,000 --> 00:00:04,000\nTo be put on our do not call list,\nsay stop.\n\n2\n00:00:05,000 --> 00:00:06,000\nOkay, call me next week.\n", ""},
		{"SubRip, a yes to the offer", "1\n00:00:01,000 --> 00:00:04,000\nWould you like to be added to our do-not-call list?\n\n2\n00:00:05,000 --> 00:00:06,000\nYes.\n", " line 7"},
		{"SubRip, stop by", "1\n00:00:01,000 --> 00:00:04,000\nHi Ada.\n\n2\n00:00:05,000 --> 00:00:06,000\nI'll stop by the store on Tuesday.\n", ""},
	})
}

// TestSaysDoNotCallNoLabelsTurns: a JSON array of turns none of which
// names its speaker is read turn by turn as text of no labels is; AWS
// Transcribe's audio_segments, each with its speaker_label, as a
// diarized transcript is, and its results.transcripts as text of no
// labels.
func TestSaysDoNotCallNoLabelsTurns(t *testing.T) {
	items := func(agent, user string) string {
		return `[{"text":` + q(agent) + `,"start":0.2,"end":4.1},{"text":` + q(user) + `,"start":4.6,"end":6.2}]`
	}
	checkTranscripts(t, []transcriptCase{
		{"items, the person asks", items(agentOffers, userAsks), "[1]"},
		{"items, a call back", items(agentOffers, userLater), ""},
		{"items, stop by", items("Hi Ada.", "I'll stop by the store on Tuesday."), ""},
		{"items, a yes to the offer", items("Hi Ada. Would you like to be added to our do-not-call list?", "Yes."), "[1]"},
		{"strings, the person asks", `[` + q(agentOffers) + `,` + q(userAsks) + `]`, "[1]"},
		{"strings, a call back", `[` + q(agentOffers) + `,` + q(userLater) + `]`, ""},
		{"strings, a line that reads as labelled after the request", `["Hi Ada.",` + q("Please don't call me again.\nReminder: your appointment is Tuesday.") + `]`, "[1]"},
		{"an item with a speaker beside: as before", `[{"text":` + q(userAsks) + `},{"speaker":"A","text":"Hi Ada."}]`, ""},
	})
	aws := func(agent, user string) string {
		return `{"jobName":"call_41","accountId":"111122223333","status":"COMPLETED","results":{"transcripts":[{"transcript":` + q(agent+" "+user) + `}],` +
			`"audio_segments":[{"id":0,"transcript":` + q(agent) + `,"start_time":"0.5","end_time":"4.1","speaker_label":"spk_0","items":[0,1]},` +
			`{"id":1,"transcript":` + q(user) + `,"start_time":"4.6","end_time":"6.2","speaker_label":"spk_1","items":[2,3]}],` +
			`"items":[{"id":0,"type":"pronunciation","alternatives":[{"confidence":"0.99","content":"Hi"}],"start_time":"0.5","end_time":"0.7","speaker_label":"spk_0"}]}}`
	}
	for _, c := range []struct{ name, body, at string }{
		{"AWS Transcribe, the person asks", aws(agentOffers, userAsks), "results.audio_segments[1]"},
		{"AWS Transcribe, a call back", aws(agentOffers, userLater), ""},
		{"AWS Transcribe, a yes to the offer", aws("Hi Ada. Would you like to be added to our do-not-call list?", "Yes."), "results.audio_segments[1]"},
	} {
		if got := SaysDoNotCall(readDelivery(t, c.body)); got != c.at {
			t.Errorf("%s: SaysDoNotCall = %q, want %q", c.name, got, c.at)
		}
	}
	const noSegments = `{"jobName":"call_41","status":"COMPLETED","results":{"transcripts":[{"transcript":%s}]}}`
	if got := SaysDoNotCall(readDelivery(t, fmt.Sprintf(noSegments, q(agentOffers+" "+userAsks)))); got != "results.transcripts[0]" {
		t.Errorf("AWS Transcribe without speakers, the person asks: SaysDoNotCall = %q", got)
	}
	if got := SaysDoNotCall(readDelivery(t, fmt.Sprintf(noSegments, q(agentOffers+" "+userLater)))); got != "" {
		t.Errorf("AWS Transcribe without speakers, a call back: SaysDoNotCall = %q", got)
	}
}
