// Package apiclient is callrun's side of the Voice AI Agent service contract
// (docs/service.md says how callrun reads it): the OAuth 2.0 token endpoints, a token file
// that refreshes itself across processes, a typed client for the agent
// endpoints and the per-agent call endpoints, and the typed errors and the
// [Classify] function on which the at-most-once promise rests.
//
// The package knows nothing of campaigns; package campaign builds on it.
// Package [github.com/callrun/callrun/apiclient/sandbox] is a local emulator
// of the same service for tests and rehearsals.
//
// Secrets stay inside: a [Token] prints without its values, errors carry no
// query strings or echoed secrets, and the access token is sent only to the
// service's own origin (see [Transport]).
package apiclient
