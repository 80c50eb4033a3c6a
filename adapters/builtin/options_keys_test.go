package builtin

import (
	"errors"
	"strings"
	"testing"

	"github.com/wunder/wunder/orchestrator"
)

// Each bad option is refused by New with an error that names its
// configuration key and the value at fault, so the operator knows which
// line of wunder.yaml to fix; one bad option among good ones is enough.
func TestNewNamesTheBadKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		want []string
	}{
		{"negative quota", Options{MaxBytesPerUser: -1}, []string{"max_bytes_per_user", "-1"}},
		{"unclosed class", Options{DenyGlobs: []string{".env", "a/[b"}}, []string{"deny_globs", `"a/[b"`}},
		{"absolute glob", Options{DenyGlobs: []string{"/etc/**"}}, []string{"deny_globs", `"/etc/**"`}},
		{"unknown tool", Options{Enabled: []string{"read_file", "rm_rf"}}, []string{"enabled", `"rm_rf"`}},
		{"a path for a command", Options{AllowCommands: []string{"ls", "/bin/sh"}}, []string{"allow_commands", `"/bin/sh"`, "not a path"}},
		{"an empty command", Options{AllowCommands: []string{""}}, []string{"allow_commands", `""`}},
		{"a relative python", Options{Python: "bin/python3"}, []string{"python", `"bin/python3"`}},
	} {
		opts := tc.opts
		opts.Root = t.TempDir()
		s, err := New(&opts)
		if !errors.Is(err, orchestrator.ErrInvalidArgument) {
			t.Errorf("%s: New = %v, %v; want ErrInvalidArgument", tc.name, s, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", tc.name, err, w)
			}
		}
	}
	// The values at the edges are fine: no quota, an absolute python, an
	// alias in enabled.
	for _, opts := range []Options{{MaxBytesPerUser: 0}, {Python: "/usr/bin/python3"}, {Enabled: []string{"读取文件"}}} {
		opts.Root = t.TempDir()
		if _, err := New(&opts); err != nil {
			t.Errorf("New(%+v) = %v", opts, err)
		}
	}
}
