package phone

import (
	"strings"
	"testing"
	"unicode"

	"github.com/nyaruka/phonenumbers"
)

func TestReadPhoneRules(t *testing.T) {
	us := NewRules("US", nil, nil, "")
	usca := NewRules("US", []string{"US", "CA"}, nil, "")
	ca := NewRules("CA", nil, nil, "sheets[0].countries")
	gb := NewRules("GB", nil, nil, "")
	gbPremium := NewRules("GB", nil, []string{"PREMIUM_RATE"}, "")
	de := NewRules("DE", nil, nil, "")
	tests := []struct {
		raw    string
		rules  *Rules
		want   string // E.164; "" when an error is expected
		region string
		kind   phonenumbers.PhoneNumberType
		repair string // substring of the repair; "" for none
		err    string // substring of the error
	}{
		// The examples of the issue: a typo is never read as a number abroad.
		{raw: "415-823-45678", rules: us, err: `"415-823-45678" is not a valid phone number for region US`},
		{raw: "(201) 574-89006", rules: us, err: "is not a valid phone number for region US"},
		{raw: "352-2363", rules: ca, err: "is not a valid phone number for region CA"},
		{raw: "41582345678", rules: us, err: "with a leading + it would be +41582345678, a number in Switzerland (CH), which this campaign does not call: add CH to countries (now US)"},
		// A lost '+' into an allowed country is repaired, with a note.
		{raw: "14165550163", rules: ca, want: "+14165550163", region: "CA", kind: phonenumbers.FIXED_LINE_OR_MOBILE},
		{raw: "442079460123", rules: NewRules("US", []string{"US", "GB"}, nil, ""), want: "+442079460123", region: "GB", kind: phonenumbers.FIXED_LINE, repair: "leading +"},
		// A cell of bare digits that is a number of the region as the region
		// writes it, and a number of another country the campaign calls with
		// its + lost (a Norwegian mobile, a Singapore one), may be either:
		// refused, whichever the campaign would have guessed. Written with
		// separators it was text, and is the region's.
		{raw: "4792345678", rules: NewRules("US", []string{"US", "NO"}, nil, ""), err: `"4792345678" is ambiguous: in region US it is +14792345678, but it is also +4792345678`},
		{raw: "6598765432", rules: NewRules("US", []string{"US", "SG"}, nil, ""), err: `is ambiguous: in region US it is +16598765432, but it is also +6598765432`},
		{raw: "(479) 234-5678", rules: NewRules("US", []string{"US", "NO"}, nil, ""), want: "+14792345678", region: "US", kind: phonenumbers.FIXED_LINE_OR_MOBILE},
		{raw: "4155550132", rules: NewRules("US", []string{"US", "NO"}, nil, ""), want: "+14155550132", region: "US", kind: phonenumbers.FIXED_LINE_OR_MOBILE},
		{raw: "4792345678", rules: us, want: "+14792345678", region: "US", kind: phonenumbers.FIXED_LINE_OR_MOBILE},
		{raw: "4.41614960000E+11", rules: us, err: "a number in United Kingdom (GB), which this campaign does not call"},
		// Countries are judged on the number's country, not its calling code.
		{raw: "(876) 555-0100", rules: us, err: "+18765550100, a number in Jamaica (JM), which this campaign does not call: add JM to countries (now US) to call it"},
		{raw: "416-555-0163", rules: us, err: "a number in Canada (CA)"},
		{raw: "416-555-0163", rules: usca, want: "+14165550163", region: "CA", kind: phonenumbers.FIXED_LINE_OR_MOBILE},
		{raw: "(416) 555-0163", rules: ca, want: "+14165550163", region: "CA", kind: phonenumbers.FIXED_LINE_OR_MOBILE},
		{raw: "(212) 555-0147", rules: ca, err: "add US to sheets[0].countries (now CA)"},
		{raw: "+44 20 7946 0123", rules: us, err: `"+44 20 7946 0123" is +442079460123, a number in United Kingdom (GB)`},
		{raw: "0044 20 7946 0123", rules: gb, want: "+442079460123", region: "GB", kind: phonenumbers.FIXED_LINE},
		// Kinds: what costs the caller extra or reaches no person.
		{raw: "1-900-234-5678", rules: us, err: "a premium-rate number, which callrun does not call: add premium_rate to allow_number_kinds"},
		{raw: "09012 345678", rules: gb, err: "premium-rate"},
		{raw: "09012 345678", rules: gbPremium, want: "+449012345678", region: "GB", kind: phonenumbers.PREMIUM_RATE},
		{raw: "070 1234 5678", rules: gb, err: "a personal (forwarding) number"},
		{raw: "07640 123456", rules: gb, err: "a pager number"},
		{raw: "+800 1234 5678", rules: us, err: "an international non-geographic number"},
		{raw: "+800 1234 5678", rules: NewRules("US", nil, []string{"international_non_geographic"}, ""), want: "+80012345678", region: "001", kind: phonenumbers.TOLL_FREE},
		{raw: "1-800-234-5678", rules: us, want: "+18002345678", region: "US", kind: phonenumbers.TOLL_FREE},
		{raw: "07400 123456", rules: gb, want: "+447400123456", region: "GB", kind: phonenumbers.MOBILE},
		// Cells as exports hold them.
		{raw: "'+1 415 555 0100", rules: us, want: "+14155550100", region: "US", kind: phonenumbers.FIXED_LINE_OR_MOBILE},
		{raw: "'4155550100", rules: us, want: "+14155550100", region: "US", kind: phonenumbers.FIXED_LINE_OR_MOBILE},
		{raw: "'442079460123", rules: NewRules("US", []string{"US", "GB"}, nil, ""), err: "not a valid phone number for region US"}, // text: no '+' was lost
		{raw: "\u00a0415\u00a0555\u00a00100\u00a0", rules: us, want: "+14155550100", region: "US", kind: phonenumbers.FIXED_LINE_OR_MOBILE},
		{raw: "\uff14\uff11\uff15-\uff15\uff15\uff15-\uff10\uff11\uff10\uff10", rules: us, want: "+14155550100", region: "US", kind: phonenumbers.FIXED_LINE_OR_MOBILE},
		{raw: "\u0664\u0661\u0665\u0665\u0665\u0665\u0660\u0661\u0660\u0660", rules: us, want: "+14155550100", region: "US", kind: phonenumbers.FIXED_LINE_OR_MOBILE},
		{raw: "555-1234 / 555-9876", rules: us, err: "holds more than one phone number"},
		{raw: "415-555-0100 or 415-555-0101", rules: us, err: "holds more than one phone number"},
		{raw: "4155550100, 4155550101", rules: us, err: "holds more than one phone number"},
		{raw: "+49 30 1234567 oder +49 30 7654321", rules: us, err: "holds more than one phone number"},
		{raw: "030/1234567", rules: NewRules("DE", nil, nil, ""), want: "+49301234567", region: "DE", kind: phonenumbers.FIXED_LINE},
		{raw: "415 555 0100 ext. 123456", rules: us, err: "extension"},
		{raw: "415 555 0100 x12", rules: us, err: "extension"},

		// Found by an adversarial pass.
		// A number exported as a decimal: read without the ".0", noted.
		{raw: "+4930124603.0", rules: de, want: "+4930124603", region: "DE", kind: phonenumbers.FIXED_LINE, repair: "exported as a decimal"},
		{raw: "06882/354 / 089/591", rules: de, err: "more than one phone number"},
		{raw: "030124603.0", rules: de, want: "+4930124603", region: "DE", kind: phonenumbers.FIXED_LINE, repair: "exported as a decimal"},
		// A number cell exported with a decimal comma, as European Excel
		// writes a number with decimals.
		{raw: "4930123456,00", rules: de, want: "+4930123456", region: "DE", kind: phonenumbers.FIXED_LINE, repair: `"4930123456,00" (the number 4930123456 exported as a decimal) was read as +4930123456; export the phone column as text`},
		{raw: "442079460123,00", rules: NewRules("US", []string{"US", "GB"}, nil, ""), want: "+442079460123", region: "GB", kind: phonenumbers.FIXED_LINE, repair: `"442079460123,00" (the number 442079460123 exported as a decimal) is not a valid number for region US but is valid with a leading +`},
		{raw: "4930123456,0", rules: de, want: "+4930123456", region: "DE", kind: phonenumbers.FIXED_LINE, repair: `"4930123456,0" (the number 4930123456 exported as a decimal)`},
		{raw: "4155550100.00", rules: us, want: "+14155550100", region: "US", kind: phonenumbers.FIXED_LINE_OR_MOBILE, repair: `"4155550100.00" (the number 4155550100 exported as a decimal) was read as +14155550100; export the phone column as text`},
		{raw: "4155550100,01", rules: us, err: "extension or dialling suffix"},
		{raw: "415 555 0100,00", rules: us, err: "extension or dialling suffix"},
		// Spreadsheet error values: the formula or the value is to fix.
		{raw: "#ERROR!", rules: us, err: `"#ERROR!" is a spreadsheet error value, not a phone number: fix the formula or the value in the sheet`},
		{raw: "#NAME?", rules: us, err: "a spreadsheet error value"},
		{raw: "#VALUE!", rules: us, err: "a spreadsheet error value"},
		{raw: "#REF!", rules: us, err: "a spreadsheet error value"},
		{raw: " #N/A ", rules: us, err: `"#N/A" is a spreadsheet error value`},
		{raw: "#DIV/0!", rules: us, err: "a spreadsheet error value"},
		{raw: "#NUM!", rules: us, err: "a spreadsheet error value"},
		{raw: "#NULL!", rules: us, err: "a spreadsheet error value"},
		{raw: "#SPILL!", rules: us, err: "a spreadsheet error value"},
		{raw: "#WERT!", rules: de, err: "a spreadsheet error value"},
		{raw: "#NV", rules: de, err: "a spreadsheet error value"},
		{raw: "#¡VALOR!", rules: us, err: "a spreadsheet error value"},
		{raw: "#123", rules: us, err: "extension or dialling suffix"},
		// Two numbers with separators inside each, or apart by a space or tab.
		{raw: "01/53115 / 01/71100", rules: NewRules("AT", nil, nil, ""), err: "holds more than one phone number"},
		{raw: "030/12345 / 030/54321", rules: de, err: "more than one phone number"},
		{raw: "030 12345\t030 54321", rules: de, err: "more than one phone number"},
		{raw: "0301234 0897654", rules: de, err: "more than one phone number"},
		// A trunk 0 typed twice is not read as an international prefix
		// without a word.
		{raw: "001512 3455303", rules: NewRules("DE", []string{"DE", "US"}, nil, ""), err: "is ambiguous: with 00 as the international prefix it is +15123455303, but it is also +4915123455303"},
		{raw: "00 44 20 7946 0000", rules: NewRules("DE", []string{"DE", "GB"}, nil, ""), want: "+442079460000", region: "GB", kind: phonenumbers.FIXED_LINE},
		{raw: "0049 30 12345678", rules: de, want: "+493012345678", region: "DE", kind: phonenumbers.FIXED_LINE},
		// The region's own country code written without its +.
		{raw: "49 1512 3454214", rules: de, err: "is ambiguous"},
		{raw: "46 8 12 34 41", rules: NewRules("SE", nil, nil, ""), err: "is ambiguous"},
		{raw: "44 20 7946 0123", rules: gb, want: "+442079460123", region: "GB", kind: phonenumbers.FIXED_LINE}, // the library reads the own country code
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			for name, core := range map[string]coreFunc{"fast": fastCore, "library": libraryCore} {
				got, err := readNumber(tt.raw, tt.rules, core)
				if tt.err != "" {
					if err == nil || !strings.Contains(err.Error(), tt.err) {
						t.Fatalf("%s: read(%q) = %+v, %v; want error containing %q", name, tt.raw, got, err, tt.err)
					}
					continue
				}
				if err != nil || got.E164 != tt.want || got.Region != tt.region || got.Kind != tt.kind {
					t.Fatalf("%s: read(%q) = %+v, %v; want %s in %s of kind %v", name, tt.raw, got, err, tt.want, tt.region, tt.kind)
				}
				if (tt.repair == "") != (got.Repair == "") || !strings.Contains(got.Repair, tt.repair) {
					t.Errorf("%s: read(%q) repair = %q; want one containing %q", name, tt.raw, got.Repair, tt.repair)
				}
			}
			if _, err := Read(tt.raw, tt.rules); (err == nil) != (tt.err == "") {
				t.Errorf("Read(%q) error %v", tt.raw, err)
			}
		})
	}
}

// TestASCIIDigitEveryScript checks asciiDigit on every decimal digit
// Unicode knows: each script's digits run from 0 to 9.
func TestASCIIDigitEveryScript(t *testing.T) {
	n := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !unicode.IsDigit(r) {
			continue
		}
		n++
		want := byte('0')
		if unicode.IsDigit(r - 1) {
			want = asciiDigit(r-1) + 1
			if want > '9' {
				want = '0'
			}
		}
		if got := asciiDigit(r); got != want {
			t.Fatalf("asciiDigit(%U) = %c, want %c", r, got, want)
		}
	}
	if asciiDigit('\uff17') != '7' || asciiDigit('\u0967') != '1' {
		t.Errorf("full-width 7 or Devanagari 1 misread")
	}
	t.Logf("%d digits", n)
}

// kindName returns the allow_number_kinds name of a library type, for
// test messages.
func kindName(t phonenumbers.PhoneNumberType) string {
	for _, k := range numberKinds {
		if k.typ == t {
			return k.name
		}
	}
	return "unknown"
}
