// Package sandbox runs one command of a model (execute_command, ptc, and
// later skill scripts) confined by bubblewrap (bwrap), through
// internal/proc. It is a leaf: it knows workspaces only as directories.
//
//	sb := sandbox.New(&sandbox.Options{Hide: []string{configFile, dataDir}})
//	if err := sb.Check(); err != nil { ... } // bwrap missing: refuse, say how to install
//	p, err := sb.Start(sandbox.Command{
//		Workspace: "/srv/wunder/data/workspaces/alice", Dir: "src",
//		Args: []string{"python3", "main.py"}, Env: env, Stdout: w, Stderr: w,
//	})
//	select { case <-p.Done(): case <-timeout: p.Stop(grace) }
//
// # What the command sees
//
// The caller's workspace, bind-mounted read-write at [WorkspaceDir]
// (/workspace), its working directory below it. The system directories
// /usr, /bin, /sbin, /lib* and /etc read-only (symlinked ones, as on
// merged-/usr systems, as the same symlinks), plus Options.ROBinds at their
// own paths. Nothing else of the host: no other workspace, no data
// directory, no configuration file, no home directory. Options.Hide masks
// paths that would otherwise be visible under a bound directory (an empty
// read-only tmpfs over a directory, /dev/null over a file). A private /tmp
// (tmpfs, at most Options.MemoryMB, gone after the call), a fresh /dev and a
// /proc of its own PID namespace, so no process of the host (the server's
// /proc/<pid>/environ included) is visible. The environment is exactly the
// caller's Command.Env.
//
// Namespaces: bwrap --unshare-all (user, mount, PID, IPC, UTS, cgroup and
// network: no network at all but a loopback of its own) unless
// Options.Network, then --share-net. Also --die-with-parent,
// --new-session (no terminal to inject into) and --cap-drop ALL.
//
// # Who the command runs as
//
// Never root. When wunder's effective uid is 0, bwrap runs as the
// credentials Options.UID:Options.GID (default 65534:65534, "nobody")
// without supplementary groups, so the command runs as that unprivileged
// user in a user namespace mapping only that uid: root-only files such as
// /etc/shadow stay unreadable though /etc is visible. The workspace must
// then be writable by that user: before each call [Start] re-owns the
// workspace tree to it (through an [os.Root], lchown only, hard-linked
// files skipped, so a symlink planted by an earlier call never redirects a
// chown outside the workspace). wunder, being root, keeps reading and
// writing what the command creates.
//
// The directories above the workspace need not be open to that user (a
// root-run server keeps its data under /root, 0700): the call is staged
// (stage.go). wunder opens the workspace and the call's read-only binds as
// root, a first bwrap, as root, binds those descriptors under a private
// tmpfs, setpriv(1) drops to the sandbox user for good, and the usual bwrap
// binds the staged paths. Without setpriv, or without CAP_SYS_ADMIN (a
// container's default capabilities), bwrap starts as the sandbox user
// directly, the directories above the workspace must be searchable by
// it, [Sandbox.PrepareRoot] lets it search the directory holding the
// workspaces (o+x, not o+r: nobody can list it), and [Sandbox.Start] says
// which parent it cannot search. When wunder is not root, bwrap maps
// wunder's own uid and nothing is re-owned or staged.
//
// # Limits
//
// Processes and memory are limited per call, by the first mechanism that
// works here, decided once by [New] ([Sandbox.Limits] names it):
//
//   - cgroup v2, when wunder's cgroup delegates the pids and memory
//     controllers (its cgroup.subtree_control lists them): a cgroup per
//     call with pids.max and memory.max (swap off); killed with
//     cgroup.kill at the end.
//   - cgroup v1, when the pids and memory hierarchies are mounted and
//     writable (wunder runs as root): a cgroup per call in each, below
//     wunder's own, with pids.max and memory.limit_in_bytes (and
//     memory.memsw.limit_in_bytes when swap is accounted); every member is
//     killed at the end.
//   - rlimits otherwise, set by prlimit(1) (util-linux), which lowers its
//     own limits and then executes bwrap (lowering needs no privilege; a
//     root without CAP_SYS_RESOURCE, as in many containers, cannot set
//     another process's): RLIMIT_AS (address space, per process: a runtime
//     that reserves much virtual memory, such as node or the JVM, may need
//     a larger sandbox.memory_mb) and RLIMIT_NPROC, which the kernel counts
//     per real uid across the whole machine: every sandbox of the same
//     identity (and, when wunder is not root, wunder itself) shares it. The
//     limit is set to Options.Pids more than that uid has at the start of
//     the call, so it bounds a fork bomb without refusing the first fork,
//     but concurrent sandboxes share the headroom. Without prlimit and
//     without a usable cgroup, [Sandbox.Check] reports the sandbox
//     unavailable rather than run a call unlimited.
//
// The command is placed under its limits before it runs: bwrap is started
// with --block-fd and --info-fd, reports the pid of its sandboxed child,
// which waits; the child joins the cgroup and only then is released, so
// every process it forks is counted.
//
// A call may also bound the size of any file its processes write
// (Command.MaxFileBytes, RLIMIT_FSIZE through prlimit(1), whatever the
// limiter): the caller's workspace quota uses it.
//
// Time and output are the caller's: it stops the [Process] when its
// deadline passes and caps what it reads from Stdout and Stderr.
//
// # Nothing outlives the call
//
// bwrap leads a process group of its own with Pdeathsig (internal/proc);
// its child gets SIGKILL when bwrap dies (--die-with-parent), and the
// kernel then kills every process of the PID namespace, including those
// that called setsid or nohup. [Process.Stop] signals bwrap's group;
// after bwrap has exited, the call's cgroup is emptied with SIGKILL and
// removed, and the namespace's first process has exited (through a
// pidfd: the kernel reaps every process of the namespace before that
// process's exit completes), before [Process.Done] is closed. Empty per-call cgroups left by a
// wunder that was killed are removed by the next [New].
//
// # Goroutines
//
// [Start] reads bwrap's info pipe on a goroutine it waits for (bounded by
// handshakeTimeout). Each [Process] owns one goroutine, which waits for
// internal/proc's process and releases the cgroup, then closes Done.
package sandbox
