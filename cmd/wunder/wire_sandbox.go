package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/sandbox"
)

// newSandbox builds the sandbox of execute_command and ptc from the
// sandbox section; nil for mode none, which is logged as a warning. A
// missing bubblewrap is logged too: the tools then refuse with the same
// message.
func newSandbox(cfg *config.Config, log *slog.Logger) *sandbox.Sandbox {
	sc := cfg.Sandbox
	if sc.Mode == config.SandboxNone {
		log.Warn("sandbox.mode is none: execute_command and ptc run unconfined, with the server's rights " +
			"(every file it can read, the network, no limits); set sandbox.mode: bwrap to confine them")
		return nil
	}
	sb := sandbox.New(&sandbox.Options{
		Network: sc.Network, MemoryMB: sc.MemoryMB, Pids: sc.Pids, ROBinds: sc.ROBinds,
		UID: sc.UID, GID: sc.GID, Hide: hiddenPaths(cfg),
	})
	if err := sb.Check(); err != nil {
		log.Error("execute_command and ptc will be refused", "err", err)
		return sb
	}
	log.Info("commands run in the bubblewrap sandbox", "limits", sb.Limits(), "network", sc.Network,
		"memory_mb", sc.MemoryMB, "pids", sc.Pids, "staged", sb.Staged())
	if os.Geteuid() == 0 && !sb.Staged() {
		log.Warn("the sandbox cannot stage workspaces as root (it needs setpriv from util-linux and CAP_SYS_ADMIN): " +
			"every directory above workspace.root must be searchable by sandbox.uid")
	}
	return sb
}

// hiddenPaths are wunder's own files, masked inside the sandbox should they
// lie under a directory it shows (/etc, /usr or a ro_binds entry).
func hiddenPaths(cfg *config.Config) []string {
	paths := []string{cfg.DataDir, cfg.Workspace.Root, cfg.Storage.DBPath, "config", "/etc/wunder"}
	if p := os.Getenv("WUNDER_CONFIG_PATH"); p != "" {
		paths = append(paths, p)
	}
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if abs, err := filepath.Abs(p); err == nil {
			out = append(out, abs)
		}
	}
	return out
}

// commandTimeout is the timeout of a command whose call names none.
func commandTimeout(cfg *config.Config) time.Duration {
	if cfg.Sandbox.Mode == config.SandboxBwrap && cfg.Sandbox.TimeoutSeconds > 0 {
		return cfg.Sandbox.Timeout()
	}
	return cfg.Security.CommandTimeout()
}
