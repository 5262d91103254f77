// Package campaign is what a campaign is and does: the campaign file
// (Load), its contacts (ContactReader: sheet rows mapped to the call
// endpoint's form fields and judged, with dedupe and suppression), its
// agents (made sure of by exact name), its calling hours and the called
// person's, the dispatch that starts one call per contact at the
// campaign's pace with the journal written first (Run), the plan that
// counts what a run would do (BuildPlan), shards, `callrun init`'s draft
// of a campaign file, and the rows of the report (WriteReport).
//
// The commands of package main drive it; it builds on apiclient for the
// service, campaign/phone and campaign/sheet for numbers and sheets, and
// report/store for the durable journal.
package campaign
