// Package usertools offers each user's own tool configuration as tools:
// the MCP servers a user configured (through /wunder/user_tools/mcp) are
// that user's tools, named user_id@server@tool, and the tools a user marks
// shared are offered to every other user under the same name, run with the
// owner's server configuration. The user's extra prompt goes into the
// system prompt of that user's own runs ([Set.ContributePrompt]).
//
//	orchestrator.Registry ──Tools(ctx, bob)──▶ *Set
//	                                            │ configs.Get(bob), configs.Shared()  (toolconfig.Configs, 5 s cache)
//	                                            ├─ bob's servers      ─▶ bob@web@search        (Owner bob)
//	                                            └─ alice's shared ones ─▶ alice@files@grep      (Owner alice; only shared_tools)
//	                                                    │
//	                                     pool: one Conn per (owner, server, config hash), from the Connector
//	                                     (cmd/wunder: adapters/mcptools over internal/netguard's guarded transport)
//
// Sharing shares configuration, never identity: a call of alice@files@grep
// by bob runs on alice's connection, with her headers and token, but its
// invocation is bob's (his user id, run and session), alice's extra prompt
// never reaches his runs, and what her configuration holds secret (header
// values, bearer token, env values, the URL) is cut out of the results he
// reads.
//
// # Sanitisation, on write and on use
//
// [Set.SetServers] refuses, each with an error wrapping
// orchestrator.ErrInvalidArgument: more servers than Options.MaxServers,
// names that break toolconfig.CheckName or repeat, configurations the
// [Connector] refuses (the mcp.servers[] schema, stdio unless allowed, URLs
// of private addresses unless allowed), and shared_tools that are not among
// the server's tools the owner may use (its allow_tools, what its tools/list
// answers, the owner's tool access rule). [Set.SetExtraPrompt] refuses text
// over Options.MaxExtraPromptChars or with control characters.
//
// The same rules hold when a stored configuration is used, so a
// configuration written under a laxer policy (or straight into the store)
// gains nothing: the Connector checks each server again before connecting
// (and its transport checks every address it dials), only the first
// MaxServers servers are used, a shared tool is offered only while it is
// in shared_tools, in the server's tools and permitted to its owner, and
// the extra prompt is cut to its limit.
//
// # Connections and goroutines
//
// The pool holds one [Conn] per (owner, server name, hash of the server's
// configuration), opened on first need and shared by every user's
// listings and calls. Opening and the first tools/list run in a goroutine
// of their own; a listing waits for them at most Options.DiscoveryTimeout
// (all servers of the listing in parallel, under one deadline), so a slow
// or dead server leaves only its own tools out, logged. A failed server is
// retried, no more often than every [RetryInterval], in the background: a
// listing never waits for a retry. A connection is closed when its
// configuration changes (a new hash for the same owner and name), when its
// server leaves the owner's list, when it was idle for Options.IdleTTL, or
// on [Set.Close]; a call in flight keeps it open until the call returns.
//
// Every goroutine (discoveries, and the closing of connections, which may
// take a while for a stdio child) is tracked by the Set's WaitGroup;
// [Set.Close] closes the pool and waits for them. No lock is held across
// network I/O.
package usertools
