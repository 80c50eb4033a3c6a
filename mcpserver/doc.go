// Package mcpserver is wunder's MCP front-end (go-sdk): the aggregated
// endpoint /wunder/mcp with the tool wunder@run (wunder__run on the wire),
// and a pass-through route per configured upstream, /wunder/mcp/{server},
// that makes wunder a full-fidelity MCP gateway.
//
//	MCP client ──POST /wunder/mcp──▶ Handler ──wunder@run──▶ Backend.Start / Wait / Cancel
//	MCP client ──/wunder/mcp/fs───▶ proxy Server (one per downstream session)
//	                                  ──▶ Upstreams.Connect("fs") (one upstream session each)
//	           ──/wunder/mcp/fs───▶ raw path (tools/*, resources/*, prompts/*, completion)
//	                                  ──▶ the same upstream session, as bytes over HTTP
//
// The handler checks no credential: mounted behind the gateway's one
// authenticator (gateway.Server.MountChallenged), it reads the principal
// the gateway put on the context and hands it to go-sdk as the request's
// TokenInfo, which binds each session to the user that opened it; a user's
// credential acts as the user, the API key and the anonymous local
// operator as Options.UserID. Over stdio (`wunder mcp stdio`) the caller is
// Options.UserID.
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
// wunder@run (follow.go).
//
// With Options.Catalog (config mcp.server.expose_catalog) /wunder/mcp also
// lists the caller's tool catalog in the registry's wire encoding and runs a
// called tool directly as the caller (Catalog.CallTool); output deltas
// become progress (or log) notifications, failures IsError results, unknown
// names JSON-RPC errors. wunder@run is never part of the catalog.
//
// The pass-through proxy forwards tools, resources, prompts, completion,
// logging and ping to the upstream session, and the upstream's progress,
// logging, sampling, elicitation, roots/list and list_changed notifications
// back to the downstream client, on the stream of the downstream request
// they belong to.
//
// Two paths share each pass-through session (passthrough_raw.go). The SDK
// path — a go-sdk Server per downstream session whose middleware calls the
// upstream ClientSession — initializes the session and serves everything
// with a side effect on the proxy (subscriptions, logging/setLevel, ping,
// notifications, the standalone stream). Once the session is initialized
// with the same protocol version on both sides and the upstream is
// streamable HTTP, the hot methods (tools, resources, prompts, completion)
// take the raw path: the POST is forwarded as bytes on the same upstream
// session, only the JSON-RPC envelope is read and only ids are rewritten,
// and the upstream's answer stream is relayed event by event. The SDK path
// decodes and encodes every message twice, with a 32 KiB buffer per decode
// inside the SDK; the raw path costs one HTTP hop (docs/benchmarks.md).
// Whatever the raw path is unsure of falls back to the SDK path, which
// answers as it always did.
//
// Goroutines: the go-sdk owns the session goroutines; the proxy starts one
// per downstream session that closes the upstream session (and ends the
// raw path's calls still waiting) when the downstream one ends, tracked by
// the Handler and waited for by Close. A raw call runs on its HTTP
// request's goroutine and starts none.
// While a tool call elicits approvals, one goroutine follows the run to
// withdraw the request when the run goes on without the answer; the call
// waits for it before it returns.
package mcpserver
