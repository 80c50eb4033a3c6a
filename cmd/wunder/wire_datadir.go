package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/wunder/wunder/internal/config"
)

// The data directory holds every user's workspace, the database and the
// override file (which keeps API keys): it is wunder's user's alone. At
// start the server creates it 0700 and takes group and other permissions
// away from what an older wunder left more open — the directory itself,
// its config directory and the secrets in it (the override file, *.key and
// *.pem files) — when wunder's user owns them, logging each change. The
// database's files are storage's (storage/filemode.go); the workspaces'
// are the built-in tools'. Nothing above the data directory is touched:
// the sandbox reaches a workspace without passing through it
// (internal/sandbox, stage.go).

// prepareDataDir creates cfg's data directory and tightens it.
func prepareDataDir(cfg *config.Config, log *slog.Logger) error {
	dir := cfg.DataDir
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("data_dir: %w", err)
	}
	if err := tightenMode(dir, 0o700, log); err != nil {
		return fmt.Errorf("data_dir: %w", err)
	}
	confDir := filepath.Dir(config.OverridePath(dir))
	if err := tightenMode(confDir, 0o700, log); err != nil {
		return fmt.Errorf("data_dir: %w", err)
	}
	entries, err := os.ReadDir(confDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("data_dir: %w", err)
	}
	for _, e := range entries {
		if n := e.Name(); e.Type().IsRegular() && isSecretFile(n) {
			if err := tightenMode(filepath.Join(confDir, n), 0o600, log); err != nil {
				return fmt.Errorf("data_dir: %w", err)
			}
		}
	}
	return nil
}

// isSecretFile reports whether a file of the config directory may hold a
// secret: the override file (and its temporary siblings), keys.
func isSecretFile(name string) bool {
	for _, ext := range []string{".yaml", ".yml", ".key", ".pem"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

// tightenMode takes every permission but want's away from p (a file or a
// directory, not followed if a symlink) when the process's user owns it; a
// missing path, or one owned by another user, is left alone.
func tightenMode(p string, want fs.FileMode, log *slog.Logger) error {
	info, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != os.Geteuid() || info.Mode()&fs.ModeSymlink != 0 {
		return nil
	}
	old := info.Mode().Perm()
	if old&^want == 0 {
		return nil
	}
	if err := os.Chmod(p, old&want); err != nil {
		return err
	}
	log.Info("tightened a mode in the data directory", "path", p, "from", fmt.Sprintf("%04o", old), "to", fmt.Sprintf("%04o", old&want))
	return nil
}
