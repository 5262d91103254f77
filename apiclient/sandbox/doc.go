// Package sandbox is a local, in-memory emulator of the Voice AI Agent
// service whose contract docs/service.md describes. It is to that service what
// net/http/httptest is to net/http: tests start one in-process with
// NewServer, and `callrun sandbox` serves it for people with Listen and
// Serve. It is an independent implementation of the service contract and imports only
// the standard library.
//
// # Endpoints
//
// The service endpoints follow the service contract and enforce it strictly:
//
//	GET  /oauth/authorize             sandbox choice, see below
//	POST /oauth/token                 code exchange
//	POST /oauth/token/refresh         refresh
//	POST /api/ai/agent/create         create an agent, 201
//	GET  /api/ai/agent/list           list agents
//	GET  /api/ai/agent/call-endpoint  an agent's call endpoint
//	POST /call/<agent_id>/<token>     start a call (the URL call-endpoint returns)
//
// Both token endpoints take an application/x-www-form-urlencoded body (else
// 415) with every field the service contract lists as required (else 400
// invalid_request; a field given twice is also invalid_request), the right
// grant_type (else 400 unsupported_grant_type) and the configured client_id
// and client_secret (else 401 invalid_client). redirect_uri must be an
// absolute URI, and exactly Options.RedirectURI when that is set. An
// unknown, expired (after 10 minutes) or already used one-time code, a code
// exchanged with another redirect_uri than it was issued for, and an
// unknown, revoked or rotated-away refresh token are 400 invalid_grant.
// Options.Code is a reusable code that is always accepted. Answers carry
// access_token, token_type "Bearer", expires_in and refresh_token, with
// Cache-Control: no-store. An Authorization header is ignored.
//
// The agent endpoints need "Authorization: Bearer <access token>" with a
// known, unexpired token, else 401 with WWW-Authenticate: Bearer
// error="invalid_token". Create needs Content-Type: application/json (415)
// and a JSON object (malformed JSON is 400) with non-empty string
// agent_name and general_prompt, an optional weebhook_endpoint that is ""
// or an absolute http(s) URL, an optional weebhook_endpoint_method of GET or
// POST ("" or absent means POST) and no other field; anything else is 422.
// Duplicate names are allowed. It answers 201 with agent_id, agent_name and
// status only. New agents are "pending" for Options.PendingFor, then
// "active". List takes page (default 1, >= 1) and per_page (default 100,
// 1 to 100); an out-of-bounds or non-integer value is 400 with a message
// naming the parameter and its bounds. Agents are listed in creation order
// (newest first with Options.NewestFirst) and a page past the end has
// empty data; Server.OnListPage lets a test add or remove agents between
// the page requests of one listing. Call-endpoint needs Content-Type:
// application/json, as the service contract lists it (415), and agent_id (400; unknown
// is 404). The endpoint URL it returns is stable and unique per agent. Its
// form_data is written as the live service writes it: phone_number, email,
// first_name, last_name, ghl_contact_id, override_agent_id, then
// Options.AccountFields (fields the account defines, such as city or
// zip_code), then LocalPresenceElement,
//
//	local_presence_number=No (Yes/No)<br> [If Yes, then the call will be made from AI local presence number]
//
// so that a client must read a field's name as the leading run of
// letters, digits and underscores.
//
// A call-start request to an unknown agent or with a wrong token is 404 and
// is not recorded. Any other request to a call endpoint is appended to the
// ledger first (see Server.Calls), then faults apply (see below), then it is
// validated: POST only (405); an Authorization header is not required but,
// if present, must hold a valid token (401); Content-Type must be
// application/x-www-form-urlencoded (415); every field must be one of
// phone_number, email, first_name, last_name, ghl_contact_id,
// override_agent_id, local_presence_number and Options.AccountFields,
// each at most once;
// phone_number is required and must be "+" then 8 to 15 digits;
// local_presence_number, if present, must be exactly Yes or No (all 422); a
// pending agent answers 409 {"error":"agent_not_active"}. override_agent_id
// is recorded but has no effect. A valid call is placed and answered 200
// {"status":"success","call_id":"call_<n>","agent_id":...}, the call_id
// its webhooks and envelopes name; whether the live service's answer
// carries a call id is not documented, and Options.AnswerWithoutCallID
// leaves it out; Options.AnswerStatus writes another status.
//
// Errors are JSON: {"error": "<code>", "message": "<text>"} from the API and
// {"error": "<code>", "error_description": "<text>"} from the OAuth
// endpoints. Unknown paths are 404 and wrong methods 405 with an Allow
// header.
//
// # Authorize
//
// The service contract does not show the authorize endpoint. The sandbox
// serves GET /oauth/authorize?response_type=code&client_id=..&redirect_uri=..&state=..
// and approves at once: it answers 302 to redirect_uri with a fresh one-time
// code and the state sent. An unknown client_id or a missing or unacceptable
// redirect_uri is 400 (no redirect); a missing or other response_type is
// redirected with error=invalid_request or error=unsupported_response_type.
//
// # Webhooks
//
// After a call is placed (also when a fault then answers 500 or drops the
// connection: the call was placed) and Options.CallDuration has passed, the
// agent's weebhook_endpoint, if not empty, is called once, with no retry, a
// 5 second timeout and no redirects followed. With method POST the body is
// JSON:
//
//	{"event": "call.completed", "call_id": "call_1", "agent_id": "agent_...",
//	 "phone_number": "+15551234567", "status": "completed",
//	 "duration_seconds": 1, "completed_at": "2025-01-02T15:04:05Z"}
//
// With method GET the same names and values are query parameters.
// duration_seconds is CallDuration in whole seconds, rounded up, at least 1.
// Unless Options.AllowExternalWebhooks is set, only loopback hosts
// (127.0.0.0/8, ::1, localhost; names are not resolved) are called; others
// are recorded as skipped. Every attempt or skip is recorded (see
// Server.Webhooks). Close cancels deliveries whose call has not ended yet
// and waits for those in flight.
//
// With Options.AccountWebhook.URL set, every placed call also gets the
// account webhooks the live service documents: its events call.started
// (at once), call.answered and call.ended (when the call ends), each a
// POST form of the contact's fields and event. A delivery not answered
// 2xx is sent again with exponential backoff; AccountWebhook's faults
// send acknowledged deliveries twice (ShareDuplicate), a call's events
// last first (OutOfOrder), some deliveries late (ShareLate), a forged
// call.ended to a wrong secret (ShareForged) and a share of opt-outs
// (ShareOptOut). Server.Deliveries is their ledger; Server.WaitWebhooks
// waits until every webhook scheduled so far is done.
//
// AccountWebhook.Shape writes the deliveries as the service's
// documentation shows them in its two versions, or as other senders
// write the same fields: ShapeForm (the default: the contact's fields
// and event), ShapeContactOnly (the contact's fields alone: no event, no
// id), ShapeEnvelope (JSON {"event", "timestamp", "data": {"call_id",
// "agent_id", "caller_number", "duration", "status", "transcript",
// "recording_url"}, "signature"}), and the variants ShapeArray (a JSON
// array of the delivery), ShapeMultipart (multipart/form-data), ShapeCase
// (keys as phoneNumber, phone-number or Phone_Number) and ShapeNested
// (the contact under "contact"); ShapeMixed draws one for each delivery.
// An envelope is stamped and, with AccountWebhook.SigningSecret, signed
// at each sending, so a retry differs from the first in its timestamp
// and signature alone. Its signature member comes last and holds
// "sha256=" and the hex HMAC-SHA256 of the envelope's bytes without that
// member (SignEnvelope): the documentation's verify_signature over the
// payload as it was before the signature was added.
//
// # Faults
//
// Faults apply by default to call-start requests only; with Scope "api" to
// agent create, list and call-endpoint requests instead, and with "all" to
// both; never to the token, authorize or /_sandbox endpoints. For each
// request in scope, in order: Latency is waited; the RateLimit token bucket
// (requests per second, burst 1, shared by the whole scope) answers 429 with
// Retry-After set to the time until the next token, in whole seconds rounded
// up; then one seeded random draw picks at most one of Share429 (429 with
// Retry-After), Share503 (503 with Retry-After), ShareDropBefore (the
// connection is closed with no answer), all three before anything is done,
// Share500 (500) and ShareDrop (connection closed), both after the call is
// placed (or the agent created). Call starts alone also get the odd answers
// real services give: Share200HTML (200 with an HTML maintenance page),
// Share200Error (200 {"status":"error"}), Share202Error (202 {"error":...})
// and Share403Limit (403 {"error":"concurrency limit reached"}), none of
// which places the call, and ShareStall (placed, 200, then a body that
// stalls). MaxActive refuses a call start with that 403 while MaxActive
// placed calls are in progress (CallLength each, on the sandbox's clock).
// See Faults for how the shares split the draw. The same Seed and sequence
// of requests give the same faults.
//
// ShareRefresh500 is the one fault of the token endpoints: that share of
// refresh requests, whatever the scope, is answered 500 before anything is
// done (the refresh token sent stays valid), from a seeded draw of its
// own. A refused refresh token is shown with RevokeRefreshTokens (or POST
// /_sandbox/revoke-refresh-tokens): every refresh token issued so far is
// then answered 400 invalid_grant.
//
// # Inspection
//
// For people and scripts, without authentication:
//
//	GET  /healthz                         200 {"status": "ok"}: it listens (scripts wait for it)
//	GET  /_sandbox/ledger                 the ledger, as Server.Calls
//	GET  /_sandbox/agents                 all agents, as Server.Agents
//	GET  /_sandbox/webhooks               webhook attempts, as Server.Webhooks
//	GET  /_sandbox/deliveries             account webhook deliveries, as Server.Deliveries
//	GET  /_sandbox/stats                  counters, as Server.Stats
//	GET  /_sandbox/faults                 the current faults
//	POST /_sandbox/faults                 replace the faults (absent fields are zero)
//	POST /_sandbox/expire-tokens          as Server.ExpireAccessTokens
//	POST /_sandbox/revoke-refresh-tokens  as Server.RevokeRefreshTokens
//
// The faults body is a JSON object with the fields scope, latency,
// rate_limit, share_429, retry_after, share_503, share_500, share_drop,
// share_drop_before, share_refresh_500, share_200_html, share_200_error,
// share_202_error, share_403_limit, share_stall, max_active, call_length and
// seed; unknown fields are 400.
// Durations are Go duration strings ("250ms", "2s") or numbers of
// milliseconds:
//
//	curl -d '{"share_503": 0.2, "retry_after": "2s", "latency": 100}' http://127.0.0.1:8089/_sandbox/faults
//
// # Logging
//
// Options.Logf receives one line per request (method, path, query with the
// values of code, access_token, refresh_token and client_secret redacted,
// status) and per webhook. Headers and bodies are never logged.
package sandbox
