package skills_test

import (
	"archive/zip"
	"bytes"
	"errors"
	"io/fs"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/wunder/wunder/adapters/skills"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/toolconfig"
)

// entry is one member of a test ZIP.
type entry struct {
	name, data string
	mode       fs.FileMode // 0 = a regular file
}

// zipOf builds a ZIP of entries, in order.
func zipOf(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		if e.mode != 0 {
			h.SetMode(e.mode)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e.data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// skillZip is a valid package of one skill, with extra files.
func skillZip(t testing.TB, name, body string, extra ...entry) []byte {
	doc := "---\nname: " + name + "\ndescription: the skill " + name + "\n---\n" + body + "\n"
	return zipOf(t, append([]entry{{name: "SKILL.md", data: doc}}, extra...)...)
}

const goodDoc = "---\nname: probe\ndescription: probes\n---\nProbe things.\n"

func TestReadPackageStripsOneFolderAndFindsTheEntry(t *testing.T) {
	data := zipOf(t,
		entry{name: "probe/", mode: fs.ModeDir | 0o755},
		entry{name: "probe/SKILL.md", data: goodDoc},
		entry{name: "probe/run.py", data: "def run(p):\n    return p\n"},
		entry{name: "probe/docs/notes.md", data: "notes"},
		entry{name: "__MACOSX/probe/._SKILL.md", data: "finder junk"},
	)
	pkg, err := skills.ReadPackage(data, skills.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range pkg.Files {
		paths = append(paths, f.Path)
	}
	sort.Strings(paths)
	if got := strings.Join(paths, " "); got != "SKILL.md docs/notes.md run.py" {
		t.Errorf("paths = %s", got)
	}
	if pkg.Skill.Name != "probe" || pkg.Skill.Entry != "run.py" || pkg.Skill.Source != skills.SourceUpload {
		t.Errorf("skill = %+v", pkg.Skill)
	}
}

// TestReadPackageRefusesHostileZips: each class of bad upload is refused
// with a message that says what is wrong, as ErrInvalidArgument.
func TestReadPackageRefusesHostileZips(t *testing.T) {
	many := []entry{{name: "SKILL.md", data: goodDoc}}
	for i := range 5 {
		many = append(many, entry{name: "f" + string(rune('a'+i)), data: "x"})
	}
	small := skills.Limits{ZipBytes: 1 << 20, Files: 4, UnpackedBytes: 4096}
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"not a zip", []byte("PK? no, just text"), "not a ZIP archive"},
		{"too big", skillZip(t, "probe", "body", entry{name: "noise", data: noise(8000)}), "over the limit of 2048"},
		{"too many files", zipOf(t, many...), "over the limit of 4"},
		{"declared too large", zipOf(t, entry{name: "SKILL.md", data: goodDoc}, entry{name: "blob", data: strings.Repeat("0", 5000)}), "unpack to more than 4096"},
		{"zip slip", zipOf(t, entry{name: "SKILL.md", data: goodDoc}, entry{name: "../evil.py", data: "x"}), "leaves its package"},
		{"zip slip inside", zipOf(t, entry{name: "SKILL.md", data: goodDoc}, entry{name: "a/../../evil.py", data: "x"}), "not clean"},
		{"absolute", zipOf(t, entry{name: "SKILL.md", data: goodDoc}, entry{name: "/etc/cron.d/x", data: "x"}), "is absolute"},
		{"backslash", zipOf(t, entry{name: "SKILL.md", data: goodDoc}, entry{name: `..\evil.py`, data: "x"}), "control character, '\\'"},
		{"symlink", zipOf(t, entry{name: "SKILL.md", data: goodDoc}, entry{name: "passwd", data: "/etc/passwd", mode: fs.ModeSymlink | 0o777}), "symbolic link"},
		{"named pipe", zipOf(t, entry{name: "SKILL.md", data: goodDoc}, entry{name: "fifo", mode: fs.ModeNamedPipe | 0o644}), "not a regular file"},
		{"device", zipOf(t, entry{name: "SKILL.md", data: goodDoc}, entry{name: "sda", mode: fs.ModeDevice | 0o644}), "not a regular file"},
		{"twice", zipOf(t, entry{name: "SKILL.md", data: goodDoc}, entry{name: "a.txt", data: "1"}, entry{name: "A.TXT", data: "2"}), "twice"},
		{"no SKILL.md", zipOf(t, entry{name: "README.md", data: "hi"}), "no SKILL.md"},
		{"SKILL.md too deep", zipOf(t, entry{name: "a/b/SKILL.md", data: goodDoc}), "no SKILL.md"},
		{"no frontmatter", zipOf(t, entry{name: "SKILL.md", data: "# just markdown"}), "must start with a ---"},
		{"bad name", zipOf(t, entry{name: "SKILL.md", data: "---\nname: Bad Name\ndescription: x\n---\nbody\n"}), "must be 1-64"},
		{"missing entry", zipOf(t, entry{name: "SKILL.md", data: "---\nname: x\ndescription: x\nentry: go.py\n---\nbody\n"}), `entry "go.py"`},
		{"bad mcp servers", zipOf(t, entry{name: "SKILL.md", data: "---\nname: x\ndescription: x\nmcpServers: 3\n---\nbody\n"}), "mcpServers must be"},
		{"empty", zipOf(t), "holds no files"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lim := small
			if c.name == "too big" {
				lim.ZipBytes, lim.UnpackedBytes = 2048, 1<<30
			}
			_, err := skills.ReadPackage(c.data, lim)
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, orchestrator.ErrInvalidArgument) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q; want ErrInvalidArgument mentioning %q", err, c.want)
			}
		})
	}
}

// noise is n bytes that do not compress.
func noise(n int) string {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return string(b)
}

// TestReadPackageRefusesLyingHeaders: an entry that inflates to more than
// its header declares (a zip bomb's trick) is refused while reading.
func TestReadPackageRefusesLyingHeaders(t *testing.T) {
	var payload bytes.Buffer
	zw := zip.NewWriter(&payload)
	w, _ := zw.Create("SKILL.md")
	_, _ = w.Write([]byte(goodDoc))
	w, _ = zw.Create("bomb")
	_, _ = w.Write(bytes.Repeat([]byte{0}, 1<<20))
	_ = zw.Close()
	// Rewrite the declared size of "bomb" (local and central headers) to 1.
	data := payload.Bytes()
	patchSizes(t, data, "bomb", 1)
	_, err := skills.ReadPackage(data, skills.Limits{UnpackedBytes: 64 << 10})
	if err == nil || !errors.Is(err, orchestrator.ErrInvalidArgument) {
		t.Fatalf("lying header accepted: %v", err)
	}
}

// patchSizes sets the uncompressed size of the named entry in its central
// directory record.
func patchSizes(t *testing.T, data []byte, name string, size uint32) {
	t.Helper()
	sig := []byte{'P', 'K', 1, 2}
	for i := bytes.Index(data, sig); i >= 0; {
		nameLen := int(data[i+28]) | int(data[i+29])<<8
		if string(data[i+46:i+46+nameLen]) == name {
			data[i+24], data[i+25], data[i+26], data[i+27] = byte(size), byte(size>>8), byte(size>>16), byte(size>>24)
			return
		}
		j := bytes.Index(data[i+4:], sig)
		if j < 0 {
			break
		}
		i += 4 + j
	}
	t.Fatalf("no central record of %s", name)
}

func FuzzReadPackage(f *testing.F) {
	f.Add(skillZip(f, "probe", "body", entry{name: "run.py", data: "def run(p): return p"}))
	f.Add([]byte("PK\x03\x04"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pkg, err := skills.ReadPackage(data, skills.Limits{Files: 20, UnpackedBytes: 1 << 20})
		if err != nil {
			if !errors.Is(err, orchestrator.ErrInvalidArgument) {
				t.Fatalf("error not ErrInvalidArgument: %v", err)
			}
			return
		}
		for _, f := range pkg.Files {
			if toolconfig.CheckFilePath(f.Path) != nil {
				t.Fatalf("accepted path %q", f.Path)
			}
		}
	})
}
