// Package mcpserver is wunder's MCP front-end (go-sdk): the aggregated
// endpoint /wunder/mcp with the tool wunder@run (wunder__run on the wire),
// and a pass-through route per configured upstream, /wunder/mcp/{server},
// that makes wunder a full-fidelity MCP gateway.
//
//	MCP client ──POST /wunder/mcp──▶ Handler ──wunder@run──▶ Backend.Start / Wait / Cancel
//	MCP client ──/wunder/mcp/fs───▶ passRoute: session, policy, forward, relay
//	                                  ──▶ link (one upstream session per downstream session):
//	                                      bytes over HTTP (Upstreams.HTTPEndpoint), or
//	                                      a connection's messages (Upstreams.Dial: stdio, SSE)
//
// /wunder/mcp serves protocol 2026-07-28 without sessions beside the older
// revisions with sessions (revisions.go): go-sdk's stateless
// StreamableHTTPHandler for the first, and for the sessions wunder's own
// handler over go-sdk's StreamableServerTransport (sessions.go), both over
// the one *mcp.Server, choosing per request by Mcp-Session-Id and the
// revision (header, else _meta). Options.Stateless keeps only the
// stateless one. Lists carry cacheScope private (the catalog is the
// caller's own) and a ttlMs.
//
// Sessions live on every replica (sessions.go, passthrough_replicas.go):
// a session's record (owner, route, negotiated version, the client's
// initialize params, log level, upstream session id) is kept in
// Options.Sessions (package mcpsession; the database when replicas share
// PostgreSQL), written when initialize succeeds. A replica that gets a
// request for a session it does not hold checks the record (owner: 403;
// gone or idle past Options.SessionTimeout: 404) and takes the session
// over, unseen by the client: a go-sdk session connected with the stored
// ServerSessionState on /wunder/mcp; on the pass-through the upstream
// session reused by its stored id, or a connection of its own initialized
// with the client's stored params. DELETE deletes the record, so every
// replica answers 404 from then on. The events of /wunder/mcp's response
// streams are stored too, so Last-Event-ID resumes on any replica; an
// approval asked by elicitation and answered at another replica is decided
// there (elicit_replicas.go). A replica forgets its copy of a session idle
// for a while; the record stays.
//
// The handler checks no credential: mounted behind the gateway's one
// authenticator (gateway.Server.MountChallenged), it reads the principal
// the gateway put on the context and hands it to go-sdk as the request's
// TokenInfo, which binds each session to the user that opened it (the
// pass-through, no SDK handler, reads the principal itself and binds its
// sessions alike); a user's credential acts as the user, the API key and
// the anonymous local operator as Options.UserID. Over stdio (`wunder mcp
// stdio`) the caller is Options.UserID.
//
// wunder@run runs a task as the calling principal with CallerAgent, never
// offers itself to the run it starts, sends the run's events as progress
// notifications when the caller asked for progress, cancels the run when the
// caller cancels the call, and returns {answer, session_id, run_id, state,
// usage, stop_reason} as text and structured content. Tool failures are
// results (IsError); malformed requests are JSON-RPC errors (the table in
// errors.go).
//
// A run that waits for approvals (waiting_approval) asks the caller through
// elicitation/create when its client can be asked (elicit.go), one
// approval after another, and goes on; otherwise the call answers at once
// with state waiting_approval and the pending approvals, and wunder@approve
// (wunder__approve) decides one as the same user and follows the run like
// wunder@run (follow.go). A caller of revision 2026-07-28, where servers
// send no requests, is asked with an input-required result instead
// (input.go): its retry carries the answers and a requestState naming the
// run, looked up as the caller.
//
// wunder@run is also an MCP task (tasks.go): at 2025-11-25 a tools/call
// with params.task, in the 2026-07-28 tasks extension a call whose client
// declares it, answers at once with a task whose id is the run's;
// tasks/get maps the run's state, tasks/result (2025-11-25) follows the
// run with the core's Wait to the plain call's answer (eliciting
// approvals), tasks/get inlines it in the extension, whose tasks/update
// decides approvals with input.go's forms; tasks/cancel cancels the run
// and tasks/list pages the caller's tasks. Every lookup is the caller's,
// and a task holds no state beyond its run. go-sdk knows no tasks: the
// methods are custom methods served by tasksMiddleware, and taskHeaders,
// in front of the SDK's handler, moves params.task into _meta.
//
// With Options.Catalog (config mcp.server.expose_catalog) /wunder/mcp also
// lists the caller's tool catalog in the registry's wire encoding and runs a
// called tool directly as the caller (Catalog.CallTool); output deltas
// become progress (or log) notifications, failures IsError results, unknown
// names JSON-RPC errors. wunder@run is never part of the catalog. A
// catalog tool keeps its _meta; with Options.Apps an MCP App's ui:// URI
// in it is namespaced by its upstream (ui://{server}/...), and
// resources/list and resources/read serve those resources from the
// upstream through the policy point (apps.go).
//
// Trace context (trace.go, SEP-414): a request whose params._meta carries
// traceparent continues that trace, under a server span of its own with
// Options.Tracer; the pass-through splices the current span's context into
// the _meta of the requests it forwards (passthrough_trace.go).
//
// The pass-through serves every request of /wunder/mcp/{server} one way.
// It is a streamable-HTTP endpoint of wunder's own that keeps the
// downstream sessions (passthrough.go: the session id, the user that owns
// it, the SDK handler's transport rules) and gives each one its own
// upstream session. Every message the downstream sends — initialize,
// requests, notifications, answers to the upstream's requests — is read
// as a JSON-RPC envelope only and forwarded unchanged, ids included, on
// the session's link (passthrough_forward.go); the upstream's answer is
// relayed message by message on the stream of the request it belongs to
// (passthrough_relay.go), and its standalone stream on the downstream's
// GET. So tools, resources, prompts, completion, logging, progress,
// cancellation, sampling, elicitation, roots and list changes all pass,
// with the upstream's capabilities, and nothing is decoded into the SDK's
// types. The policy (passthrough_policy.go) sees every request on its way:
// a call, read, subscription or get of what the user may not see is
// refused before forwarding, the lists' answers are filtered, and every
// tools/call is audited. A 2026-07-28 request whose Mcp-Method or Mcp-Name
// differs from its body is refused before all that, as go-sdk refuses it
// (passthrough_headers.go). A link is bytes over HTTP for a streamable-HTTP
// upstream (passthrough_http.go) or a go-sdk Connection for stdio and SSE
// (passthrough_conn.go), whose messages are handed to the request they
// belong to.
//
// Revisions: the same path serves a client of any revision in front of an
// upstream of any revision. A 2025-11-25 (or older) client's initialize
// opens its own upstream session, so the two sides negotiate as they
// would directly, and its requests go with its version header. A
// 2026-07-28 client holds no session (MCP-Protocol-Version 2026-07-28, no
// Mcp-Session-Id, SEP-2575 _meta on each request); its requests are served
// by a session the gateway holds per user and upstream
// (passthrough_stateless.go): forwarded unchanged, with the standard
// headers (Mcp-Method, Mcp-Name, Mcp-Param-*), to an upstream that serves
// the revision itself (asked once per route with server/discover); else
// on an upstream session the gateway opened with its own initialize at
// 2025-11-25, with ids of its own and the SEP-2575 _meta keys left out,
// server/discover answered from that initialize, the removed methods 404
// -32601, and the session opened anew when the upstream answers 404. A
// JSON-RPC answer with a status other than 200 (a 2026-07-28 server's 404
// and 400) is relayed with its status. Policy and audit are the same on
// every one of these paths.
//
// Goroutines: the go-sdk owns the session goroutines of /wunder/mcp; a
// local session's idle timer (time.AfterFunc) closes it when it fires. A
// pass-through request runs on its HTTP request's goroutine and starts
// none; a session whose link is a connection has one goroutine that reads
// the upstream's messages and ends the session when the connection ends,
// tracked by the Handler and waited for by Close.
// While a tool call elicits approvals, one goroutine follows the run to
// withdraw the request when the run goes on without the answer; the call
// waits for it before it returns.
package mcpserver
