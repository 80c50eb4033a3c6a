package main

import (
	"strings"
	"testing"
)

// `wunder migrate`: applies the pending migrations and shows each with
// when it was applied; --status only shows. On SQLite (the default) and on
// PostgreSQL (a schema of its own; skipped without
// WUNDER_TEST_POSTGRES_DSN).
func TestMigrateCommand(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			extra := ""
			if backend == "postgres" {
				extra = "storage:\n  postgres:\n    dsn: " + pgSchema(t) + "\n"
			}
			file := writeConfigFile(t, dataDir(t), extra)
			rows := func(out string) (names []string, pending int) {
				lines := strings.Split(strings.TrimSpace(out), "\n")
				if len(lines) < 2 || !strings.HasPrefix(lines[0], "MIGRATION") || !strings.Contains(lines[0], "APPLIED") {
					t.Fatalf("not a migration table:\n%s", out)
				}
				for _, l := range lines[1:] {
					f := strings.Fields(l)
					names = append(names, f[0])
					if f[len(f)-1] == "pending" {
						pending++
					}
				}
				return names, pending
			}

			code, out, errs := runCLI(t, t.Context(), "migrate", "--status", "--config", file)
			if code != exitOK {
				t.Fatalf("migrate --status on a fresh store: exit %d %s", code, errs)
			}
			before, pending := rows(out)
			if pending != len(before) {
				t.Errorf("fresh store: %d of %d migrations pending, want all:\n%s", pending, len(before), out)
			}

			code, out, errs = runCLI(t, t.Context(), "migrate", "--config", file)
			if code != exitOK {
				t.Fatalf("migrate: exit %d %s", code, errs)
			}
			after, pending := rows(out)
			if pending != 0 || strings.Join(after, ",") != strings.Join(before, ",") {
				t.Errorf("after migrate: %d pending, migrations %v (were %v):\n%s", pending, after, before, out)
			}
			// Applying again changes nothing.
			code, again, _ := runCLI(t, t.Context(), "migrate", "--config", file)
			if code != exitOK || again != out {
				t.Errorf("a second migrate: exit %d\n%s\nwant\n%s", code, again, out)
			}
		})
	}
}

// migrate refuses arguments (usage) and an invalid configuration (exit 4).
func TestMigrateCommandRefuses(t *testing.T) {
	file := writeConfigFile(t, dataDir(t), "")
	if code, _, _ := runCLI(t, t.Context(), "migrate", "now", "--config", file); code != exitUsage {
		t.Errorf("an argument: exit %d, want %d", code, exitUsage)
	}
	bad := writeConfigFile(t, dataDir(t), "storage:\n  backend: floppy\n")
	if code, _, errs := runCLI(t, t.Context(), "migrate", "--config", bad); code != exitConfig || !strings.Contains(errs, "storage.backend") {
		t.Errorf("an invalid backend: exit %d %s", code, errs)
	}
}
