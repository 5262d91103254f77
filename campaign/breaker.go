package campaign

import (
	"fmt"
	"net/http"

	"github.com/callrun/callrun/report/store"
)

// BreakAfter is how many contacts in a row may have their call starts end
// badly (uncertain, or left pending after every try was answered with a
// 5xx such as 503) before Run stops starting calls. A failing service
// would otherwise turn every contact left into one a person must check by
// hand, at full pace. A sent or refused (4xx) contact shows the service
// is answering, and starts the count again.
//
// It is also how many refusals in a row with the same status and message
// stop the run: a refusal that repeats is the service's condition (an
// account suspended, a limit it does not name as one), not the contacts'.
const BreakAfter = 5

// ErrBreaker is wrapped by the error of a run that stopped starting calls
// because they kept ending uncertain or in server errors.
var ErrBreaker = fmt.Errorf("stopped starting calls: the call starts of %d contacts in a row ended uncertain or in a server error", BreakAfter)

// ErrRefusing is wrapped by the error of a run that stopped starting
// calls because the service refused BreakAfter contacts in a row with the
// same answer.
var ErrRefusing = fmt.Errorf("stopped starting calls: the service refused the call starts of %d contacts in a row with the same answer", BreakAfter)

// breaker counts the contacts in a row whose call starts ended badly, and
// the refusals in a row with the same answer: the pacer holds it, and
// stops every call start once it is open.
type breaker struct {
	bad  int
	last string // the last bad one, for the message

	refused int    // refusals in a row with the answer refusal
	refusal string // "403 Forbidden: its message"
}

// settled tells the breaker how a contact's call start ended this run:
// rec is its last outcome record, and said what the service said of a
// refusal (its message or body). Outcomes that say nothing of the service
// (never sent, 429) leave the counts as they are.
func (b *breaker) settled(rec *store.Record, said string) {
	switch {
	case rec.Status == store.OutcomeUncertain || rec.HTTP >= 500:
		b.bad++
		b.last = rec.Reason
		if rec.HTTP != 0 {
			b.last = fmt.Sprintf("answered %d %s", rec.HTTP, http.StatusText(rec.HTTP))
		}
		b.refused = 0
	case rec.Status == store.OutcomeFailed:
		b.bad = 0
		refusal := fmt.Sprintf("%d %s: %s", rec.HTTP, http.StatusText(rec.HTTP), said)
		if refusal != b.refusal {
			b.refusal, b.refused = refusal, 0
		}
		b.refused++
	case rec.Status == store.OutcomeSent:
		b.bad, b.refused = 0, 0
	}
}

// open returns the run's error once BreakAfter contacts in a row ended
// badly, or were refused with the same answer, and nil while calls may
// still start.
func (b *breaker) open() error {
	if b.refused >= BreakAfter {
		return fmt.Errorf("%w (%s): that is the service's condition, not the contacts'. The contacts not called stay pending and a later run resumes them; the %d refused are marked failed: once the service is mended, send them again with --retry-failed", ErrRefusing, b.refusal, b.refused)
	}
	if b.bad < BreakAfter {
		return nil
	}
	return fmt.Errorf("%w (the last: %s); the service seems to be failing. The contacts not called stay pending and a later run resumes them; check the uncertain ones before sending them again with --retry-uncertain", ErrBreaker, b.last)
}
