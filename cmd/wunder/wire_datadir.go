package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/fsperm"
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
	if err := fsperm.Tighten(dir, 0o700, false, "the data directory", log); err != nil {
		return fmt.Errorf("data_dir: %w", err)
	}
	confDir := filepath.Dir(config.OverridePath(dir))
	if err := fsperm.Tighten(confDir, 0o700, false, "the config directory", log); err != nil {
		return fmt.Errorf("data_dir: %w", err)
	}
	entries, err := os.ReadDir(confDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("data_dir: %w", err)
	}
	for _, e := range entries {
		if n := e.Name(); e.Type().IsRegular() && isSecretFile(n) {
			if err := fsperm.Tighten(filepath.Join(confDir, n), 0o600, true, "a secret file", log); err != nil {
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
