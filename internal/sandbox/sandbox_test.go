package sandbox_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/sandbox"
)

// hasSeq reports whether args contains seq as consecutive elements.
func hasSeq(args []string, seq ...string) bool {
	for i := 0; i+len(seq) <= len(args); i++ {
		if slices.Equal(args[i:i+len(seq)], seq) {
			return true
		}
	}
	return false
}

func TestArgsConfine(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	s := sandbox.New(&sandbox.Options{ROBinds: []string{ws}})
	args := s.Args(sandbox.Command{Workspace: ws, Dir: "sub", Args: []string{"python3", "-V"}, Env: []string{"PATH=/usr/bin", "HOME=/workspace"}})
	for _, seq := range [][]string{
		{"--unshare-all"}, {"--die-with-parent"}, {"--new-session"}, {"--cap-drop", "ALL"},
		{"--ro-bind", "/usr", "/usr"}, {"--ro-bind", ws, ws}, {"--proc", "/proc"}, {"--dev", "/dev"},
		{"--size", "536870912", "--tmpfs", "/tmp"}, {"--bind", ws, "/workspace"}, {"--chdir", "/workspace/sub"},
		{"--clearenv"}, {"--setenv", "PATH", "/usr/bin"}, {"--setenv", "HOME", "/workspace"},
		{"--", "python3", "-V"},
	} {
		if !hasSeq(args, seq...) {
			t.Errorf("args lack %q:\n%q", seq, args)
		}
	}
	if slices.Contains(args, "--share-net") {
		t.Errorf("network shared by default: %q", args)
	}
	if i := slices.Index(args, "--"); i != len(args)-3 {
		t.Errorf("argv is not last: %q", args)
	}
	net := sandbox.New(&sandbox.Options{Network: true})
	if args := net.Args(sandbox.Command{Workspace: ws, Args: []string{"true"}}); !hasSeq(args, "--unshare-all", "--share-net") {
		t.Errorf("network: true does not share the network: %q", args)
	}
}

func TestHideMasksVisiblePaths(t *testing.T) {
	t.Parallel()
	bound := t.TempDir()
	if err := os.MkdirAll(filepath.Join(bound, "data"), 0o750); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(bound, "wunder.yaml")
	if err := os.WriteFile(cfg, []byte("security: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	s := sandbox.New(&sandbox.Options{ROBinds: []string{bound}, Hide: []string{cfg, filepath.Join(bound, "data"), elsewhere}})
	args := s.Args(sandbox.Command{Workspace: elsewhere, Args: []string{"true"}})
	if !hasSeq(args, "--ro-bind", "/dev/null", cfg) {
		t.Errorf("the config file is not masked: %q", args)
	}
	if !hasSeq(args, "--tmpfs", filepath.Join(bound, "data"), "--remount-ro", filepath.Join(bound, "data")) {
		t.Errorf("the data dir is not masked: %q", args)
	}
	if strings.Contains(strings.Join(args, " "), "--tmpfs "+elsewhere) {
		t.Errorf("a path not visible anyway was masked: %q", args)
	}
	for p, want := range map[string]bool{
		"/usr/bin/env":               true,
		"/bin":                       true, // a symlink to usr/bin on merged-/usr systems, or a bound dir
		bound:                        true,
		cfg:                          false,
		filepath.Join(bound, "data"): false,
		elsewhere:                    false,
		"/root":                      false,
		"relative/path":              false,
	} {
		if got := s.Visible(p); got != want {
			t.Errorf("Visible(%s) = %v, want %v", p, got, want)
		}
	}
	if got := s.Path("/root/.pyenv/shims:relative:" + bound + ":/usr/bin"); got != bound+":/usr/bin" {
		t.Errorf("Path kept %q", got)
	}
}

func TestCheckSaysHowToInstall(t *testing.T) {
	t.Parallel()
	s := sandbox.New(&sandbox.Options{Bwrap: "wunder-no-such-bwrap"})
	err := s.Check()
	if err == nil || !strings.Contains(err.Error(), "apt-get install bubblewrap") || !strings.Contains(err.Error(), "sandbox.mode: none") {
		t.Fatalf("Check() = %v; want how to install bubblewrap or turn the sandbox off", err)
	}
	if _, serr := s.Start(sandbox.Command{Workspace: t.TempDir(), Args: []string{"true"}}); serr == nil || serr.Error() != err.Error() {
		t.Fatalf("Start without bwrap = %v, want %v", serr, err)
	}
}

func TestCapSysAdminReadsCapEff(t *testing.T) {
	t.Parallel()
	for caps, want := range map[string]bool{"000001ffffffffff": true, "00000000a80425fb": false, "0000000000200000": true, "zz": false} {
		p := filepath.Join(t.TempDir(), "status")
		if err := os.WriteFile(p, []byte("Name:\twunder\nCapInh:\t0000000000000000\nCapEff:\t"+caps+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := sandbox.CapSysAdmin(p); got != want {
			t.Errorf("CapEff %s: CapSysAdmin = %v, want %v", caps, got, want)
		}
	}
	if sandbox.CapSysAdmin(filepath.Join(t.TempDir(), "none")) {
		t.Error("no status file, yet CAP_SYS_ADMIN")
	}
}
