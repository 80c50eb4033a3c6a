// Package mcpserver is wunder's MCP front-end (go-sdk): the aggregated
// endpoint /wunder/mcp with the tool wunder@run (wunder__run on the wire),
// and a pass-through route per configured upstream, /wunder/mcp/{server},
// that makes wunder a full-fidelity MCP gateway.
//
//	MCP client ──POST /wunder/mcp──▶ Handler ──wunder@run──▶ Backend.Start / Events / Cancel
//	MCP client ──/wunder/mcp/fs───▶ proxy Server (one per downstream session)
//	                                  ──▶ Upstreams.Connect("fs") (one upstream session each)
//
// wunder@run runs a task as the calling principal with CallerAgent, never
// offers itself to the run it starts, sends the run's events as progress
// notifications when the caller asked for progress, cancels the run when the
// caller cancels the call, and returns {answer, session_id, run_id, state,
// usage, stop_reason} as text and structured content. Tool failures are
// results (IsError); malformed requests are JSON-RPC errors (the table in
// errors.go).
//
// A run that waits for approvals (waiting_input) asks the caller through
// elicitation/create when its client can be asked (elicit.go), one
// approval after another, and goes on; otherwise the call answers at once
// with state waiting_input and the pending approvals, and wunder@approve
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
// Goroutines: the go-sdk owns the session goroutines; the proxy starts one
// per downstream session that closes the upstream session when the
// downstream one ends, tracked by the Handler and waited for by Close.
// While a tool call elicits approvals, one goroutine follows the run to
// withdraw the request when the run goes on without the answer; the call
// waits for it before it returns.
package mcpserver
