package campaign

import (
	"strings"
	"testing"
)

// TestListWrittenAsTextSaysList: suppress: dnc.csv for suppress:
// [dnc.csv] was refused as "cannot read text `dnc.csv` into
// []SuppressFile", a Go type; it says now that a list is wanted, as
// countries: US does.
func TestListWrittenAsTextSaysList(t *testing.T) {
	bad := strings.Replace(goodCampaign, "suppress: [dnc.csv]", "suppress: dnc.csv", 1)
	got := problems(t, bad, LoadOptions{})
	expectProblems(t, got, "line 16, suppress: cannot read text `dnc.csv` as a list such as [a, b]")
	for _, g := range got {
		if strings.Contains(g, "SuppressFile") {
			t.Errorf("problem names a Go type: %s", g)
		}
	}
}

// TestCountryWrittenOtherwiseSuggestsItsCode: UK is two letters but not
// the United Kingdom's ISO code (GB), which "is not a two-letter country
// code" left a user to puzzle over; USA and a country's name likewise.
func TestCountryWrittenOtherwiseSuggestsItsCode(t *testing.T) {
	bad := strings.Replace(goodCampaign, "suppress: [dnc.csv]", "suppress: [dnc.csv]\nregion: UK\ncountries: [USA, Germany, XX]", 1)
	got := problems(t, bad, LoadOptions{})
	expectProblems(t, got,
		`region: region "UK" is not a two-letter country code such as US, GB or DE (ISO 3166); did you mean GB?`,
		`countries[0]: "USA" is not a two-letter country code such as US, GB or DE (ISO 3166); did you mean US?`,
		`countries[1]: "Germany" is not a two-letter country code such as US, GB or DE (ISO 3166); did you mean DE?`,
		`countries[2]: "XX" is not a two-letter country code such as US, GB or DE`)
	for _, g := range got {
		if strings.Contains(g, `"XX"`) && strings.Contains(g, "did you mean") {
			t.Errorf("XX suggests a code: %s", g)
		}
	}
}

// TestKeyAtTheWrongLevelSaysWhereItBelongs: encoding: written at the top
// of the file (it is a sheet's), timezone: beside hours: rather than in
// it, prompt: under a sheet (it is an agent's). Each was an unknown key
// with the keys of its level, which do not hold it, and no word of where
// it goes.
func TestKeyAtTheWrongLevelSaysWhereItBelongs(t *testing.T) {
	bad := strings.Replace(goodCampaign, "suppress: [dnc.csv]", "suppress: [dnc.csv]\nencoding: windows-1252\ntimezone: Europe/London", 1)
	bad = strings.Replace(bad, "    agent: Spring Promo", "    agent: Spring Promo\n    prompt: Hello", 1)
	expectProblems(t, problems(t, bad, LoadOptions{}),
		`encoding: unknown key "encoding"; encoding belongs at sheets[].encoding or suppress[].encoding, not here: move it there (allowed here: name,`,
		`timezone: unknown key "timezone"; timezone belongs at hours.timezone, not here: move it there`,
		`sheets[0].prompt: unknown key "prompt"; prompt belongs at agents[].prompt, not here: move it there (allowed here: file,`)
	// A typo is still a typo.
	bad = strings.Replace(goodCampaign, "suppress: [dnc.csv]", "suppress: [dnc.csv]\nencodng: utf-8", 1)
	expectProblems(t, problems(t, bad, LoadOptions{}), `unknown key "encodng" (allowed here`)
}

// TestQuotedNumberSaysDropTheQuotes: per_second: "2" is text to YAML, and
// was refused as "cannot read text `2` as a number", which reads as
// nonsense to a person looking at a 2.
func TestQuotedNumberSaysDropTheQuotes(t *testing.T) {
	bad := strings.Replace(goodCampaign, "pace:\n  per_second: ${TEST_RATE:-2.5}\n  concurrency: 8", "pace: {per_second: \"2\", concurrency: '8'}", 1)
	got := problems(t, bad, LoadOptions{})
	expectProblems(t, got,
		"pace.per_second: cannot read text `2` as a number; a number in quotes is text: write it without the quotes",
		"pace.concurrency: cannot read text `8` as a whole number; a number in quotes is text: write it without the quotes")
	bad = strings.Replace(goodCampaign, "pace:\n  per_second: ${TEST_RATE:-2.5}\n  concurrency: 8", "pace: {per_second: 10/s}", 1)
	for _, g := range problems(t, bad, LoadOptions{}) {
		if strings.Contains(g, "quotes") {
			t.Errorf("10/s: %s", g)
		}
	}
}
