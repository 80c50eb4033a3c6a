package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/auth"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/storage"
)

// runCLIIn is runCLI with stdin.
func runCLIIn(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	root := newRootCmd()
	var out, errb bytes.Buffer
	root.SetArgs(args)
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&out)
	root.SetErr(&errb)
	if err := root.ExecuteContext(t.Context()); err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			return ee.code, out.String(), errb.String() + err.Error()
		}
		return exitUsage, out.String(), errb.String() + err.Error()
	}
	return exitOK, out.String(), errb.String()
}

// An operator bootstraps accounts and tokens on the store, without the API.
func TestUserAndTokenCommands(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "wunder.yaml")
	if err := os.WriteFile(cfgPath, []byte("data_dir: "+dir+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cli := func(stdin string, args ...string) (int, string, string) {
		return runCLIIn(t, stdin, append(args, "--config", cfgPath)...)
	}
	if code, out, errs := cli("root-password\n", "user", "add", "root", "--role", "admin"); code != exitOK || !strings.Contains(out, "added user root (admin)") {
		t.Fatalf("user add: %d %s %s", code, out, errs)
	}
	if code, out, errs := cli("chief-password\n", "user", "add", "chief", "--admin"); code != exitOK || !strings.Contains(out, "added user chief (admin)") {
		t.Fatalf("user add --admin: %d %q %q", code, out, errs)
	}
	if code, _, _ := cli("chief-password\n", "user", "add", "chief2", "--admin", "--role", "user"); code != exitUsage {
		t.Errorf("--admin with --role: exit %d, want %d", code, exitUsage)
	}
	if code, _, errs := cli("short\n", "user", "add", "bob"); code != exitUsage || !strings.Contains(errs, "at least 8") {
		t.Fatalf("short password: %d %s", code, errs)
	}
	if code, _, errs := cli("root-password\n", "user", "add", "root"); code != exitUsage || !strings.Contains(errs, "exists") {
		t.Fatalf("duplicate user: %d %s", code, errs)
	}
	code, secret, errs := cli("", "token", "issue", "root", "--name", "ci")
	secret = strings.TrimSpace(secret)
	if code != exitOK || !auth.LooksLikeToken(secret) {
		t.Fatalf("token issue: %d %q %s", code, secret, errs)
	}
	if code, out, _ := cli("", "user", "disable", "root"); code != exitOK || !strings.Contains(out, "disabled: true") {
		t.Fatalf("user disable: %d %s", code, out)
	}
	code, out, _ := cli("", "user", "list")
	if code != exitOK || !strings.Contains(out, "root") || !strings.Contains(out, "true") || strings.Contains(out, "root-password") {
		t.Fatalf("user list: %d %s", code, out)
	}

	// What the commands wrote: an argon2id hash, a disabled user, the
	// token's hash only.
	st, err := storage.Open(context.Background(), storage.Options{SQLitePath: filepath.Join(dir, "wunder.db")})
	if err != nil {
		t.Fatal(err)
	}
	u, err := st.GetUser(t.Context(), "root")
	if err != nil || !u.Disabled || !auth.CheckPassword(u.PasswordHash, "root-password") || !u.IsAdmin() {
		t.Fatalf("stored user %+v, %v", u, err)
	}
	tok, err := st.TokenByHash(t.Context(), auth.HashToken(secret))
	if err != nil || tok.Name != "ci" || tok.Kind != orchestrator.TokenAPI || tok.ExpiresAt != nil {
		t.Fatalf("stored token %+v, %v", tok, err)
	}
	_ = st.Close()
	if code, _, errs := cli("", "token", "revoke", tok.ID); code != exitOK {
		t.Fatalf("token revoke: %d %s", code, errs)
	}
	if code, _, errs := cli("", "token", "revoke", tok.ID); code != exitUsage || !strings.Contains(errs, "not found") {
		t.Fatalf("second revoke: %d %s", code, errs)
	}
}
