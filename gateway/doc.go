// Package gateway is wunder's HTTP front door: the http.Server's route table,
// the middleware every request passes (request id and logger, access log,
// the language of its messages, panic recovery, CORS, API-key auth, body
// limits), and the /wunder REST and SSE handlers.
//
// Handlers are thin: decode, call the core through [Backend], map the error
// with the one table in problem.go, encode. Every error is problem JSON
// (RFC 9457) with a stable code, its title and detail in the request's
// language (i18n.go, internal/i18n's catalog). Other front-ends (A2A, MCP, Connect) are
// mounted on the same server with [Server.Mount] and pass the same
// middleware.
//
// Streams: POST /wunder (stream: true) and GET /wunder/runs/{id}/events
// write SSE with event: = type and id: = seq, from the orchestrator's event
// log. A handler's goroutine reads the log through an iterator on a helper
// goroutine it owns and waits for before returning; the run itself belongs
// to the orchestrator, so a client that disconnects never stops it.
package gateway
