// Package report keeps what callrun knows about every contact and tells
// people about it.
//
// The [Journal] is the at-most-once promise on disk: before a call-start
// request is sent its intent is appended, after it its outcome, and
// [Journal.Append] returns only once the record is durable. A contact whose
// intent is on record but whose outcome is not is [Uncertain] and is never
// sent again automatically. [OpenJournal] replays the journal into a
// compact [State] that the next run resumes from; [ReadState] does the
// same for a reader while a run may be going on.
//
// [Lock] keeps two runs out of one state directory. [CSVWriter] writes
// report.csv, one row per input row, and [WriteSummary] and [Summary.Text]
// give the counts per status, agent and sheet.
package report
