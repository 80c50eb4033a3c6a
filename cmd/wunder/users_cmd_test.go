package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/accounts"
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
	if code, out, errs := cli("root-password\n", "user", "add", "Ops", "--role", "admin"); code != exitOK || !strings.Contains(out, "added user ops (admin)") {
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
	if code, _, errs := cli("root-password\n", "user", "add", "OPS"); code != exitUsage || !strings.Contains(errs, "taken") {
		t.Fatalf("duplicate user: %d %s", code, errs)
	}
	code, secret, errs := cli("", "token", "issue", "ops", "--name", "ci")
	secret = strings.TrimSpace(secret)
	if code != exitOK || !auth.LooksLikeToken(secret) {
		t.Fatalf("token issue: %d %q %s", code, secret, errs)
	}
	if code, out, _ := cli("", "user", "disable", "ops"); code != exitOK || !strings.Contains(out, "disabled: true") {
		t.Fatalf("user disable: %d %s", code, out)
	}
	code, out, _ := cli("", "user", "list")
	if code != exitOK || !strings.Contains(out, "ops") || !strings.Contains(out, "true") || strings.Contains(out, "root-password") {
		t.Fatalf("user list: %d %s", code, out)
	}

	// What the commands wrote: an argon2id hash, a disabled user, the
	// token's hash only.
	st, err := storage.Open(context.Background(), storage.Options{SQLitePath: filepath.Join(dir, "wunder.db")})
	if err != nil {
		t.Fatal(err)
	}
	u, err := st.GetUser(t.Context(), "ops")
	if err != nil || !u.Disabled || !auth.CheckPassword(u.PasswordHash, "root-password") || !u.IsAdmin() {
		t.Fatalf("stored user %+v, %v", u, err)
	}
	tok, err := st.TokenByHash(t.Context(), auth.HashToken(secret))
	if err != nil || tok.Name != "ci" || tok.Kind != accounts.TokenAPI || tok.ExpiresAt == nil ||
		tok.ExpiresAt.Before(time.Now().Add(364*24*time.Hour)) || tok.ExpiresAt.After(time.Now().Add(365*24*time.Hour)) {
		t.Fatalf("stored token %+v, %v; want one expiring after auth.max_token_ttl_s (a year)", tok, err)
	}
	_ = st.Close()
	if code, _, errs := cli("", "token", "revoke", tok.ID); code != exitOK {
		t.Fatalf("token revoke: %d %s", code, errs)
	}
	if code, _, errs := cli("", "token", "revoke", tok.ID); code != exitUsage || !strings.Contains(errs, "not found") {
		t.Fatalf("second revoke: %d %s", code, errs)
	}
}

// `wunder user add` holds new ids to the rule the API does: normal form,
// unique ignoring case, no reserved ids; `user passwd` revokes tokens;
// `token issue` lives no longer than auth.max_token_ttl_s.
func TestUserCommandsIdentityRules(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "wunder.yaml")
	cfg := "data_dir: " + dir + "\nmcp:\n  server:\n    user_id: ide-agents\nauth:\n  max_token_ttl_s: 3600\n  token_ttl_s: 600\n"
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cli := func(stdin string, args ...string) (int, string, string) {
		return runCLIIn(t, stdin, append(args, "--config", cfgPath)...)
	}
	if code, out, errs := cli("alice-password\n", "user", "add", "Ａlice"); code != exitOK || !strings.Contains(out, "added user alice ") {
		t.Fatalf("user add Ａlice: %d %q %q; want alice added", code, out, errs)
	}
	for id, want := range map[string]string{
		"ALICE": "taken", "alice\u200b": "invisible", " bob": "must start", "a2a": "reserved", "wunder": "reserved",
		"root": "reserved", "ide-agents": "reserved", "wunder-eval-1": "reserved",
	} {
		if code, _, errs := cli("a-password\n", "user", "add", id); code != exitUsage || !strings.Contains(errs, want) {
			t.Errorf("user add %q: exit %d %q; want %d saying %q", id, code, errs, exitUsage, want)
		}
	}
	code, secret, errs := cli("", "token", "issue", "alice")
	if code != exitOK {
		t.Fatalf("token issue: %d %s", code, errs)
	}
	if code, _, errs := cli("", "token", "issue", "alice", "--ttl", "2h"); code != exitUsage || !strings.Contains(errs, "auth.max_token_ttl_s") {
		t.Errorf("token issue --ttl 2h with a maximum of 1h: %d %q; want %d naming auth.max_token_ttl_s", code, errs, exitUsage)
	}
	if code, out, errs := cli("new-alice-password\n", "user", "passwd", "alice"); code != exitOK || !strings.Contains(out, "revoked") {
		t.Fatalf("user passwd: %d %q %q", code, out, errs)
	}
	if code, _, errs := cli("a-password\n", "user", "passwd", "nobody"); code != exitUsage {
		t.Errorf("user passwd nobody: %d %q; want %d", code, errs, exitUsage)
	}
	st, err := storage.Open(context.Background(), storage.Options{SQLitePath: filepath.Join(dir, "wunder.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.TokenByHash(t.Context(), auth.HashToken(strings.TrimSpace(secret))); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Errorf("alice's token after user passwd: %v; want it revoked", err)
	}
	u, err := st.GetUser(t.Context(), "alice")
	if err != nil || !auth.CheckPassword(u.PasswordHash, "new-alice-password") {
		t.Errorf("alice after user passwd: %+v, %v", u, err)
	}
}
