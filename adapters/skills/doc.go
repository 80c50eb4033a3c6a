// Package skills is the skills tool source: folders with a SKILL.md
// (YAML frontmatter and Markdown instructions), found under skills.paths
// or uploaded as ZIPs by admins and users.
//
// # Sources and names
//
//	skills.paths folders ─┐
//	admin uploads (owner "")┴─ every user's skills, named after the skill ("code-review")
//	a user's own uploads ────── "alice@review", Owner alice, offered to alice when she enabled it
//	another user's shared one ─ "alice@review" for bob: alice's files, bob's workspace
//
// Uploads live in the store ([toolconfig.FileStore], kind skill), so
// every replica sees them; each replica unpacks a package into its cache
// folder (cache.go), keyed by a hash of owner, name and content, written
// atomically (a temporary folder renamed into place) and checked against
// the store's digests before first use. A ZIP is checked before anything
// of it is stored (zip.go, [ReadPackage]). Which uploads are enabled,
// shared and preloaded is the user's [toolconfig.Skills], read
// through [toolconfig.Configs]; the admin's enabled list of
// every user's skills is the configuration of owner "" (until it is
// written, Options.Enabled, i.e. skills.enabled). Users' skills are
// instructions only unless Options.AllowUserCode (skills.allow_user_code):
// then their entry scripts run and their HTTP MCP servers connect; they
// never start stdio servers.
//
// # Lazy loading
//
// The system prompt lists each offered skill's name and one-line
// description; the load_skill tool puts a skill's body into the system
// prompt from the next model call on, for skills.retention_turns turns of
// the session. Which skills are loaded is derived from the session's
// history (the load_skill calls in it, via
// orchestrator.PromptContributor), so it survives a restart without a
// table of its own. preload_skills (of the request, and the user's own
// list) loads skills from the start. A skill with an entry script
// (run.py, skill.py or main.py defining run(payload)) is also a tool named
// after the skill, offered while the skill is loaded, run in the sandbox
// with the skill's folder read-only at /skill and the caller's workspace
// read-write. While a skill is loaded, the tools its frontmatter names
// (`tools`, looked up in the caller's own catalog) and the tools of its
// MCP servers (`mcpServers`, mcp.servers[] entries, connected through a
// [Connector]) are offered too.
//
// # Goroutines
//
// The Set starts one goroutine, the janitor, on first need (an uploaded
// skill listed, a skill's MCP server connected); [Set.Close] stops it and
// waits. Every tick it closes skill MCP connections that nobody holds and
// no prompt touched for Options.MCPIdle (mcp.go: a prompt carrying the
// loaded skill touches them, a call of one of their tools holds one), and
// removes cache folders of replaced packages after a grace period (a
// script of the old version may still run). Connects and unpacks happen
// on the caller's goroutine (a prompt being built), bounded by its
// context; concurrent callers share one connect and one unpack. No lock
// is held across store or network I/O except unpackMu, which only
// serialises unpacking.
package skills
