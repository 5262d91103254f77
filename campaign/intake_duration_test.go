package campaign

import (
	"testing"

	"github.com/callrun/callrun/apiclient"
)

// TestMayBeConversationEveryDuration: failing closed, a delivery is no
// conversation only when every duration it gives is 0: a duration in
// whole minutes (0 for a 25-second call) beside its duration_seconds is
// one.
func TestMayBeConversationEveryDuration(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fields map[string]string
		want   bool
	}{
		{"duration 0 (minutes), duration_seconds 25", map[string]string{"duration": "0", "duration_seconds": "25"}, true},
		{"data.duration 0, call.duration 31", map[string]string{"data.duration": "0", "call.duration": "31"}, true},
		{"duration 0, duration_seconds 0", map[string]string{"duration": "0", "duration_seconds": "0"}, false},
		{"duration 0", map[string]string{"duration": "0"}, false},
	} {
		d := apiclient.Delivery{Event: "call.ended", Fields: tc.fields}
		if got := mayBeConversation(d); got != tc.want {
			t.Errorf("%s: may be a conversation %v, want %v", tc.name, got, tc.want)
		}
	}
}
