package campaign

import (
	"strings"
	"testing"
	"time"
)

// TestDeliveryQuiet: the no-delivery rule run, status and listen share.
// A call start is overdue once it is the wait old with no delivery at or
// after it; the first start after the latest delivery counts, whichever
// order the starts are noted in.
func TestDeliveryQuiet(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	const wait = 15 * time.Minute
	type note struct {
		delivery bool
		m        int
	}
	for _, tt := range []struct {
		name  string
		notes []note
		now   int
		want  int // the overdue start's minute; -1: none
	}{
		{"nothing", nil, 60, -1},
		{"a start, not yet the wait old", []note{{false, 0}}, 14, -1},
		{"a start the wait old", []note{{false, 0}}, 15, 0},
		{"a delivery after it", []note{{false, 0}, {true, 1}}, 60, -1},
		{"a delivery at its instant", []note{{true, 5}, {false, 5}}, 60, -1},
		{"a start after the last delivery", []note{{false, 0}, {true, 1}, {false, 2}, {false, 3}}, 17, 2},
		{"the starts noted out of order, deliveries first", []note{{true, 1}, {false, 9}, {false, 0}, {false, 4}, {false, 7}}, 20, 4},
		{"only deliveries", []note{{true, 1}, {true, 2}}, 60, -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var q DeliveryQuiet
			for _, n := range tt.notes {
				if n.delivery {
					q.Delivered(at(n.m))
				} else {
					q.Started(at(n.m))
				}
			}
			got, w := q.Overdue(at(tt.now), wait), q.Warning(at(tt.now), wait)
			switch {
			case tt.want < 0 && (!got.IsZero() || w != ""):
				t.Errorf("overdue %s, warning %q; want none", got, w)
			case tt.want >= 0 && !got.Equal(at(tt.want)):
				t.Errorf("overdue %s, want %s", got, at(tt.want))
			case tt.want >= 0 && !strings.Contains(w, "since a call started at "+at(tt.want).Format(time.RFC3339)+": the webhook URL is probably wrong"):
				t.Errorf("warning %q", w)
			}
		})
	}
}
