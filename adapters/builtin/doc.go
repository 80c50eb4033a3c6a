// Package builtin provides wunder's built-in tools and the per-user
// workspace they work in. A [*Set] is an [orchestrator.Toolset] (source
// "builtin") and an [orchestrator.Workspace] (the prompt builder's summary):
//
//	set, err := builtin.New(&builtin.Options{
//		Root:          "data/workspaces",
//		AllowCommands: []string{"go", "git", "python3", "ls"},
//		DenyGlobs:     []string{".env", "**/*.pem", ".git/**"},
//	})
//	tools, err := set.Tools(ctx, "alice") // each bound to data/workspaces/alice/
//
// Tools, by canonical name (alias): list_files (列出文件), read_file
// (读取文件), search_content (搜索内容), write_file (写入文件), replace_text
// (替换文本), edit_file (编辑文件), execute_command (执行命令) and ptc
// (programmatic_tool_call). Failures are error results the model reads;
// only a cancelled context comes back as a Go error. docs/tools.md is the
// reference for users.
//
// # Workspace rules
//
// Each user has Root/<user_id>/, created (0o750) by the first tool that
// touches it. A user id must be one path segment: not empty, at most 128
// bytes, no "/", "\", "..", NUL or control characters; otherwise the call is
// an error wrapping [orchestrator.ErrInvalidArgument].
//
// Every path argument goes through [Workspace.Resolve]: absolute paths, NUL
// bytes and ".." escapes are refused; so are paths matched by
// Options.DenyGlobs (the path or any parent, before and after resolving
// symlinks) and paths that lead outside the workspace through a symlink
// (resolved with filepath.EvalSymlinks on the deepest existing ancestor; a
// dangling symlink on the way is refused too). Symlinks that stay inside
// are followed, and the tools then work on the resolved path.
//
// The file I/O itself goes through an [os.Root] opened on the workspace, so
// a symlink swapped in after the check still cannot lead out. Writes go to a
// new temporary file (O_CREATE|O_EXCL, which never follows a symlink) and a
// rename, so a write never goes through a symlink and readers never see a
// half-written file. Walks (list_files, search_content) do not follow
// symlinks and skip denied entries.
//
// # Quota
//
// With Options.MaxBytesPerUser (config workspace.max_bytes_per_user) each
// workspace holds at most that many bytes of files. Every write that grows
// a workspace — the file tools, the API's WriteFile and Copy — reserves
// its growth first and is refused with a *QuotaError (which wraps
// [orchestrator.ErrPermissionDenied] and has a QuotaExceeded method)
// before anything is written; the usage is an account per workspace,
// updated by each write and measured again when stale (quota.go). A
// command's files are bounded by what is left (RLIMIT_FSIZE in the
// sandbox), a watcher stops a command that takes the workspace over, and
// the workspace is measured when a command ends (quota_watch.go, which also
// says what remains uncovered).
//
// # The workspace API
//
// The Set is also the backend of the /wunder/workspace routes
// (docs/workspace.md; cmd/wunder adapts it to gateway.Workspaces): Stat,
// List, ReadFile, Open, Usage, Search (search_content's engine), Archive,
// Mkdir, WriteFile, Move, Copy, Remove and Empty (manage*.go). They follow
// the same rules, through the same resolver and os.Root; a delete or move
// acts on a symlink itself, never its target; copies and archives are
// bounded by Options.MaxTreeEntries and MaxTreeBytes before anything is
// written. Errors wrap the core's sentinels so the gateway can map them.
//
// Commands run in the sandbox of internal/sandbox when Options.Sandbox is
// set (config sandbox.mode: bwrap, the default): the command sees only the
// caller's workspace, at /workspace (its HOME; the working directory is the
// same relative path below it, so relative paths work as outside), runs as
// an unprivileged user in its own PID namespace without network, under
// process and memory limits. Programs are looked up on the PATH entries
// visible inside; a program path in the workspace may be given relative,
// as a host path or under /workspace. Deny globs bind the file tools only:
// a sandboxed command sees the whole of its own workspace. Without a
// sandbox (sandbox.mode: none) an allowed program (and any ptc script) can
// read and write whatever the gateway's OS user can, and a child that
// calls setsid leaves the process group.
//
// # Goroutines and processes
//
// A tool call runs on the caller's goroutine; list/read/search/write/edit
// start no goroutines. With a quota, a command's call starts one watcher
// goroutine, which the call stops and waits for when the command ends. execute_command and ptc start one process through
// internal/proc (its own process group, Pdeathsig) or through the sandbox
// (bwrap, in such a group), with stdin at /dev/null, its working
// directory inside the workspace, the workspace as HOME, and an environment
// of PATH, HOME, LANG and PYTHONUNBUFFERED only. os/exec runs two copying goroutines (stdout,
// stderr) that the call's Wait always joins; they write into one capped
// buffer (head and tail of Options.MaxOutputBytes) and call the
// invocation's Output under a mutex, so deltas arrive serially, in order,
// as valid UTF-8, while the command runs.
//
// When the call's context is done or its timeout passes, the group gets
// SIGTERM, then internal/proc's bounded stop (SIGTERM again, then SIGKILL,
// killGrace apart); os/exec closes the pipes killGrace after the leader
// exited (cmd.WaitDelay), and internal/proc sweeps the group with SIGKILL
// whatever happened, so no child outlives the call, including children a
// command left behind when it exited normally. In the sandbox, bwrap's end
// ends its PID namespace, which reaches children that called setsid too.
package builtin
