// Package mcptools is wunder's MCP client: it offers the tools of external
// MCP servers (stdio, SSE, streamable HTTP) to runs as `server@tool`, and
// reaches them for the pass-through gateway of package mcpserver: a
// streamable-HTTP server's endpoint and client ([Set.HTTPEndpoint]), or a
// dedicated connection per session to a stdio or SSE server ([Set.Dial]).
//
//	cmd/wunder ──New(configs, opts)──▶ *Set ──Tools(ctx, user)──▶ orchestrator.Registry
//	                                    │  (cached specs; never dials)
//	                                    ├─ server "fs"   ─ lazy *mcp.ClientSession ─ stdio child (own process group)
//	                                    └─ server "web"  ─ lazy *mcp.ClientSession ─ streamable HTTP
//
// Tool specs come from a cache — the store through [SpecCache], then memory —
// so building a prompt never triggers remote discovery. A refresh (connect,
// tools/list, save) happens on [Set.Start], on [Set.Refresh] (the admin
// endpoint) and when a server sends notifications/tools/list_changed.
//
// Lifecycle: a server is connected on first use; a failed connect is retried
// with exponential backoff (a call in the backoff window gets an error result
// at once); a session that dies (a stdio child that exits, a dropped HTTP
// session) is dropped and the next call connects again, which restarts a
// stdio child. Every call is bounded by the server's timeout: a call that
// runs over gets an error result and the server is not marked dead. One
// failing server never blocks another: each has its own state and lock, and
// no lock is held across network I/O.
//
// Progress and logging notifications of a running call are written to the
// call's Output, which the loop logs as tool_output_delta (streams
// "progress" and "log"). Progress is matched by the progress token wunder
// sends with each call; a log message goes to every call in flight on that
// server, unless Options.DropServerLogs (set for users' shared servers,
// whose calls belong to different users). Options.HTTPTransport carries the
// requests of HTTP servers (adapters/usertools passes one that refuses
// private addresses at dial time).
//
// Trace context (trace.go, SEP-414): tools/call and resources/read carry
// the current span's traceparent and tracestate in params._meta, over
// every transport. MCP Apps (apps.go): a tool spec keeps the tool's _meta
// (orchestrator.ToolSpec.Meta), a tool visible to its app alone is
// AppOnly, and [Set.UIResources] and [Set.ReadResource] reach a server's
// ui:// resources for the aggregated /wunder/mcp.
//
// Elicitation requests of servers follow Options.Elicitation: decline (no
// capability advertised) or defaults (accept with the schema's defaults).
// ServerConfig.OAuth plugs a go-sdk auth.OAuthHandler into a
// streamable-http server's transport (and the pass-through's client).
//
// Readiness (ready.go): [Set.Ready] fails until the first discovery of
// every server has settled (bounded by Options.ReadyTimeout), and
// [Set.WaitTool] lets orchestrator.Registry.Select wait for the discovery
// of a server whose tool a run names.
//
// Stdio servers (stdio.go) start under internal/proc's policy (own process
// group, SIGKILL when wunder dies, bounded stop, group swept) with a built
// environment: PATH, HOME, LANG, the server's env and [StdioDepthEnv].
// A wunder at depth [MaxStdioDepth] or deeper starts no stdio servers.
//
// Goroutines: one watcher per live session (waits for the session to end,
// then forgets it) and one per background refresh; all are tracked by the
// Set's WaitGroup and end before [Set.Close] returns. Close closes every
// session; a stdio child is stopped in proc's bounded steps (close stdin,
// wait, SIGTERM to its group, SIGKILL to its group) and its group swept.
package mcptools
