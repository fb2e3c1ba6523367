// Package serve is `runner serve`: runner over HTTP, for a phone's browser
// and for other programs (docs/serve.md).
//
// What a route does, runner does: each handler runs runner itself (Exec:
// the runner binary, the server's environment, its state directory and
// tmux server) with an argv built from the request (no shell; the options
// a request may set are an allow-list) and answers with that command's
// --json output; its exit code becomes the HTTP status in one table
// (Options.Status, which cmd/runner gives: the exit codes are its own). Runner's rules, locks and history stay the CLI's: stopping
// the server changes nothing about tasks. The event stream (GET
// /api/v1/events) is the one route served in process: each line `runner
// events --json` prints, as a Server-Sent Event whose id is its cursor
// (Options.Follow).
//
// Every route but /login needs a credential (auth.go): an
// `Authorization: Bearer` token, read or act, kept 0600 in the state
// directory (Tokens), or the cookie of a session a one-time login link
// opened (LoginLink). A request that changes something needs the act
// scope, and with a cookie the session's CSRF value in X-Runner-CSRF; a
// Bearer token is exempt, since no browser sends one on its own. Tokens,
// codes and CSRF values are compared in constant time.
//
// Bounds: request bodies (MaxBody), JSON with unknown fields refused,
// runner processes at once (Options.MaxRuns), event followers
// (Options.MaxFollowers), connections (Listen), header bytes and the
// server's timeouts (HTTPServer).
//
// The page at / and its assets are embedded (web/), served from the
// embedded files only; the API is described by openapi.json, served at
// /api/v1/openapi.json and held to the mux by TestOpenAPIMatchesMux.
//
// Of the module it imports only state, state/follow (the event stream) and
// internal/textutil (TestImports).
package serve
