// Package store keeps what callrun knows about every contact, durably, in
// a campaign's state directory: the at-most-once promise on disk.
//
// The [Journal] is append-only: before a call-start request is sent its
// intent is appended, after it its outcome, and [Journal.Append] returns
// only once the record is durable (records that writers append at once
// share one fsync). A contact whose intent is on record but whose outcome
// is not is [Uncertain] and is never sent again automatically.
// [OpenJournal] replays the journal into a [State] that the next
// run resumes from; [ReadState] does the same for a reader (plan, status,
// report) while a run may be going on. [Lock] keeps two runs out of one
// state directory.
//
// campaign's dispatch writes it; the commands and the report writers
// (package report) read it.
package store
