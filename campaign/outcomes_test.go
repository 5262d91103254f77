package campaign

import (
	"strings"
	"testing"

	"github.com/callrun/callrun/apiclient"
)

const outcomesCampaign = `name: spring-promo
service:
  base_url: https://api.example.com
  client_id: cid
  client_secret: csecret
  redirect_uri: http://127.0.0.1:8765/callback
agents:
  - name: Own
    prompt: Be kind.
    webhook: {url: "https://hooks.example.com/own", method: GET}
  - name: Plain
    prompt: Be kind.
sheets:
  - file: leads.csv
    agent: Plain
    fields: {phone_number: Phone}
outcomes:
  url: https://hooks.example.com/callrun/${HOOK_SECRET}
  fields: [disposition, summary]
  opt_out: {field: disposition, values: [do_not_call]}
`

func TestOutcomesBlock(t *testing.T) {
	f, err := Load(writeCampaign(t, outcomesCampaign), LoadOptions{Getenv: env(map[string]string{"HOOK_SECRET": "hook-secret-0123456789"})})
	if err != nil {
		t.Fatal(err)
	}
	o := f.Outcomes
	if o.Path() != "/callrun/hook-secret-0123456789" || o.Secret() != "hook-secret-0123456789" {
		t.Errorf("path %q, secret %q", o.Path(), o.Secret())
	}
	if got := strings.Join(o.DetailFields(), ","); got != "disposition,summary" {
		t.Errorf("detail fields %s", got)
	}
	if o.OptOut.Field != "disposition" || o.OptOut.Values[0] != "do_not_call" {
		t.Errorf("opt_out %+v", o.OptOut)
	}
	// The agent's own webhook wins; the other gets the outcomes URL with
	// /agent at its end.
	if w := f.Agents[0].Webhook; w.URL != "https://hooks.example.com/own" || w.Method != "GET" {
		t.Errorf("own webhook %+v", w)
	}
	if w := f.Agents[1].Webhook; w == nil || w.URL != o.URL+"/agent" || w.URL != o.AgentURL() || w.Method != "POST" {
		t.Errorf("default webhook %+v", w)
	}
	if got := apiclient.Redact("posting to " + o.URL); strings.Contains(got, "0123456789") {
		t.Errorf("the URL's secret is printed: %s", got)
	}
	if (*Outcomes)(nil).DetailFields()[0] != "status" {
		t.Error("no default detail fields")
	}
}

func TestOutcomesProblems(t *testing.T) {
	short := strings.Replace(outcomesCampaign, "${HOOK_SECRET}", "short", 1)
	expectProblems(t, problems(t, short, LoadOptions{}), "outcomes.url", "at least 16 characters")
	bad := strings.Replace(outcomesCampaign, "https://hooks.example.com/callrun/${HOOK_SECRET}", "hooks/x", 1)
	expectProblems(t, problems(t, bad, LoadOptions{}), "outcomes url \"hooks/x\" is not an absolute http(s) URL")
	noValues := strings.Replace(strings.Replace(outcomesCampaign, "${HOOK_SECRET}", "0123456789abcdefgh", 1), "values: [do_not_call]", "values: []", 1)
	expectProblems(t, problems(t, noValues, LoadOptions{}), "outcomes.opt_out.values")
	unknown := strings.Replace(outcomesCampaign, "  fields: [disposition, summary]", "  feilds: [x]", 1)
	expectProblems(t, problems(t, unknown, LoadOptions{}), "feilds")
	noKey := strings.Replace(strings.Replace(outcomesCampaign, "${HOOK_SECRET}", "0123456789abcdefgh", 1), "  fields: [disposition, summary]", "  require_signature: true", 1)
	expectProblems(t, problems(t, noKey, LoadOptions{}), "outcomes.require_signature", "needs signing_secret")
}

// TestOutcomesSigningSecret: the signing secret is blanked in whatever
// callrun prints; offline (plan in CI) an unset variable there is no
// problem, but the campaign says so, for listen to refuse it.
func TestOutcomesSigningSecret(t *testing.T) {
	yaml := strings.Replace(outcomesCampaign, "  fields: [disposition, summary]", "  signing_secret: ${SIGNING_SECRET}\n  require_signature: true", 1)
	f, err := Load(writeCampaign(t, yaml), LoadOptions{Getenv: env(map[string]string{"HOOK_SECRET": "hook-secret-0123456789", "SIGNING_SECRET": "whsec-4711-signing"})})
	if err != nil {
		t.Fatal(err)
	}
	if o := f.Outcomes.ReadOptions(); o.SigningSecret != "whsec-4711-signing" || !o.RequireSignature || f.Outcomes.SigningUnset() {
		t.Errorf("read options %+v, unset %v", o, f.Outcomes.SigningUnset())
	}
	if got := apiclient.Redact("signed with whsec-4711-signing"); strings.Contains(got, "4711") {
		t.Errorf("the signing secret is printed: %s", got)
	}
	f, err = Load(writeCampaign(t, yaml), LoadOptions{Offline: true, Getenv: env(map[string]string{"HOOK_SECRET": "hook-secret-0123456789"})})
	if err != nil {
		t.Fatal(err)
	}
	if !f.Outcomes.SigningUnset() {
		t.Error("offline, an unset signing secret is not said")
	}
}

func TestOutcomesURLRedactedInDrift(t *testing.T) {
	f, err := Load(writeCampaign(t, outcomesCampaign), LoadOptions{Getenv: env(map[string]string{"HOOK_SECRET": "drift-secret-0123456789"})})
	if err != nil {
		t.Fatal(err)
	}
	d := strings.Join(drift(&f.Agents[1], apiclient.Agent{Prompt: "Be kind.", Webhook: "https://hooks.example.com/old"}), "; ")
	if !strings.Contains(d, "its webhook is") || strings.Contains(d, "drift-secret") {
		t.Errorf("drift %q", d)
	}
	// An agent a callrun before created, with the outcomes URL itself.
	d = strings.Join(drift(&f.Agents[1], apiclient.Agent{Prompt: "Be kind.", Webhook: f.Outcomes.URL}), "; ")
	if !strings.Contains(d, "counts as reported") || !strings.Contains(d, "dashboard") || strings.Contains(d, "drift-secret") {
		t.Errorf("drift of an agent with the old webhook path: %q", d)
	}
}

// TestOutcomesSecretOffline: plan --offline (CI) needs no secret, so an
// unset variable in outcomes.url is no problem offline; online it is, and
// a secret too short is refused offline as online.
func TestOutcomesSecretOffline(t *testing.T) {
	none := env(map[string]string{})
	if _, err := Load(writeCampaign(t, outcomesCampaign), LoadOptions{Offline: true, Getenv: none}); err != nil {
		t.Errorf("offline, the secret unset: %v", err)
	}
	got := problems(t, outcomesCampaign, LoadOptions{Getenv: none})
	expectProblems(t, got, "outcomes.url", "HOOK_SECRET is not set")
	if len(got) != 1 {
		t.Errorf("online, the secret unset: %d problems, want the unset variable alone:\n%s", len(got), strings.Join(got, "\n"))
	}
	short := strings.Replace(outcomesCampaign, "${HOOK_SECRET}", "short", 1)
	expectProblems(t, problems(t, short, LoadOptions{Offline: true, Getenv: none}), "outcomes.url", "at least 16 characters")
}

// TestDeliveryNumber: the number of a delivery comes from the contact's
// fields first, in any case and nesting, with outcomes.phone_field
// before them; two that disagree make it unreadable; caller_number only
// when none holds one; never one of the campaign's own numbers, from
// whatever field: the call's other end (from_number, from,
// caller_number) then, or none.
func TestDeliveryNumber(t *testing.T) {
	f, err := Load(writeCampaign(t, strings.Replace(outcomesCampaign, "  fields: [disposition, summary]", "  fields: [disposition, summary]\n  phone_field: lead_tel\n  own_numbers: [\"(415) 555-0100\"]", 1)+"region: US\n"),
		LoadOptions{Getenv: env(map[string]string{"HOOK_SECRET": "hook-secret-0123456789"})})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		fields map[string]string
		want   string
		caller bool
		err    string
	}{
		{map[string]string{"phone_number": "(415) 555-0123"}, "+14155550123", false, ""},
		{map[string]string{"Phone_Number": "+14155550123", "data.caller_number": "+14155550199"}, "+14155550123", false, ""},
		{map[string]string{"message.call.customer.number": "+14155550123", "message.phoneNumber.number": "+14155550100"}, "+14155550123", false, ""},
		{map[string]string{"contact.phone": "+14155550123", "to_number": "4155550123"}, "+14155550123", false, ""}, // one number, twice
		{map[string]string{"LeadTel": "+14155550124", "phone": "n/a"}, "+14155550124", false, ""},                  // phone_field; an unreadable value is no number
		{map[string]string{"phone_number": "+14155550123", "to_number": "+14155550124"}, "", false, "different numbers"},
		{map[string]string{"data.caller_number": "+14155550123"}, "+14155550123", true, ""},
		{map[string]string{"data.caller_number": "+1 415 555 0100"}, "", false, "own_numbers"},
		{map[string]string{"from_number": "+14155550123", "status": "completed"}, "", false, "none of its fields"},
		// One of the campaign's own numbers is never the person's, in
		// whatever field: an inbound call's person is its other end.
		{map[string]string{"call.direction": "inbound", "call.to_number": "+14155550100", "call.from_number": "+19175550263"}, "+19175550263", false, ""},
		{map[string]string{"to": "4155550100", "from": "(917) 555-0263", "caller_number": "+1 917 555 0263"}, "+19175550263", false, ""},
		{map[string]string{"phone_number": "+14155550100", "to_number": "+14155550123"}, "+14155550123", false, ""},
		{map[string]string{"to_number": "+14155550100", "from_number": "+14155550100"}, "", false, "own_numbers"},
		{map[string]string{"to_number": "(415) 555-0100", "status": "completed"}, "", false, "own_numbers"},
		{map[string]string{"to_number": "+14155550100", "from_number": "+14155550123", "caller_number": "+14155550124"}, "", false, "different numbers"},
	} {
		got := f.DeliveryNumber(tc.fields)
		if got.E164 != tc.want || got.Caller != tc.caller || tc.err == "" && got.Err != nil || tc.err != "" && (got.Err == nil || !strings.Contains(got.Err.Error(), tc.err)) {
			t.Errorf("%v: %+v, want %s (caller %v, error %q)", tc.fields, got, tc.want, tc.caller, tc.err)
		}
	}
	bad := strings.Replace(strings.Replace(outcomesCampaign, "${HOOK_SECRET}", "0123456789abcdefgh", 1), "  fields: [disposition, summary]", "  own_numbers: [not a number]", 1)
	expectProblems(t, problems(t, bad, LoadOptions{}), "outcomes.own_numbers[0]")
}

// TestEventRank: the service's events in any case and separators, with
// or without "call.", and call.completed, rank by the call's course;
// other senders' own events are other.
func TestEventRank(t *testing.T) {
	for ev, want := range map[string]int{
		"call.started": rankStarted, "CALL_STARTED": rankStarted, "started": rankStarted,
		"call.answered": rankAnswered, "Call-Answered": rankAnswered,
		"call.ended": rankEnded, "call_ended": rankEnded, "ended": rankEnded, "call.completed": rankEnded,
		"call_analyzed": rankOther, "end-of-call-report": rankOther, "status-update": rankOther, "": rankOther,
	} {
		if got := eventRank(ev); got != want {
			t.Errorf("eventRank(%q) = %d, want %d", ev, got, want)
		}
	}
}
