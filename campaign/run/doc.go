// Package run is what callrun's commands do with a campaign, apart from
// the command line: open its service, run it as an ordered list of named
// steps (open the store, log in, reconcile agents, read contacts,
// dispatch, settle, report, exit code), serve the webhook deliveries its
// calls bring, and read what its runs left (status). Package main parses
// the flags and calls it.
package run
