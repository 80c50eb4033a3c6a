package edge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/testutil/bwrap"
	"github.com/wunder/wunder/internal/testutil/fakellm"
	"github.com/wunder/wunder/internal/testutil/wunderproc"
)

// edgeQuota is the workspace quota of the hostile user's server.
const edgeQuota = 16 << 20

// TestWorkspaceQuotaHoldsAgainstAFiller: the user of issue 35 who wrote
// 1.5 GB. Against the real binary (its data dir under a 0700 temporary
// directory, so commands are staged into the sandbox), mallory uploads
// 1 MiB files until refused, then runs a command that would write 512 MiB.
// The uploads stop at the quota with 413 quota_exceeded naming the key,
// the command is stopped long before its end, the files stored before
// stay, the data dir and database are private, and the server's peak RSS
// stays under the bound.
func TestWorkspaceQuotaHoldsAgainstAFiller(t *testing.T) {
	wunderproc.NeedLinux(t)
	bwrap.Need(t, "the workspace quota against a command")
	model := httptest.NewServer(&fakellm.Server{Chunks: 2})
	t.Cleanup(model.Close)
	cfg := fmt.Sprintf(`workspace:
  max_bytes_per_user: %d
security:
  allow_commands: [python3]
llm:
  default: fake
  models:
    fake: {provider: local, base_url: %q, model: fake}
`, edgeQuota, model.URL+"/v1")
	p := wunderproc.Start(t, wunderproc.Build(t), cfg)
	ws := filepath.Join(p.Dir, "workspaces", "mallory")

	mib := bytes.Repeat([]byte("m"), 1<<20)
	accepted := 0
	var refusal string
	for i := range 64 { // 64 MiB tried, 16 fit
		status, body := upload(t, p.URL, fmt.Sprintf("f%02d.bin", i), mib)
		if status == http.StatusOK {
			accepted++
			continue
		}
		refusal = fmt.Sprintf("%d %s", status, body)
		break
	}
	if accepted != 16 || !strings.HasPrefix(refusal, "413 ") || !strings.Contains(refusal, `"code":"quota_exceeded"`) ||
		!strings.Contains(refusal, "workspace.max_bytes_per_user") {
		t.Fatalf("%d uploads of 1 MiB accepted under a 16 MiB quota, then %q; want 16, then 413 quota_exceeded naming the key", accepted, refusal)
	}
	// Make room for the command, then let it try 512 MiB.
	req, _ := http.NewRequest(http.MethodDelete, p.URL+"/wunder/workspace?user_id=mallory&path=f15.bin", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE f15.bin: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	fill := `run: python3 -c "[open('junk%d' % i, 'wb').write(b'x' * 1048576) for i in range(512)]; print('FINISHED')"`
	answer := ask(t, p.URL, fill)
	if !strings.Contains(answer, "stopped: workspace quota exceeded") || strings.Contains(answer, "FINISHED") {
		t.Fatalf("the 512 MiB command answered %q; want it stopped by the quota", answer)
	}
	held := du(t, ws)
	t.Logf("the command was stopped with the workspace at %d bytes, %d over the %d-byte quota", held, held-edgeQuota, edgeQuota)
	for i := range 15 {
		if b, err := os.ReadFile(filepath.Join(ws, fmt.Sprintf("f%02d.bin", i))); err != nil || !bytes.Equal(b, mib) {
			t.Fatalf("f%02d.bin, stored before, was lost or changed: %v", i, err)
		}
	}
	if status, body := upload(t, p.URL, "late.bin", []byte("x")); status != http.StatusRequestEntityTooLarge {
		t.Errorf("an upload after the command = %d %s; want 413", status, body)
	}

	for path, want := range map[string]fs.FileMode{p.Dir: 0o700, filepath.Join(p.Dir, "wunder.db"): 0o600} {
		if info, err := os.Stat(path); err != nil || info.Mode().Perm() != want {
			t.Errorf("%s: %v %v; want mode %04o", path, info.Mode(), err, want)
		}
	}
	if !p.Alive() {
		t.Fatal("the server died")
	}
	peak := p.PeakRSS(t)
	t.Logf("peak RSS: %d MiB", peak>>20)
	if peak >= maxPeakRSS {
		t.Errorf("peak RSS %d MiB, over the %d MiB bound", peak>>20, maxPeakRSS>>20)
	}
}

// upload posts one file into mallory's workspace.
func upload(t *testing.T, base, name string, data []byte) (int, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("user_id", "mallory")
	fw, _ := mw.CreateFormFile("files", name)
	_, _ = fw.Write(data)
	_ = mw.Close()
	resp, err := http.Post(base+"/wunder/workspace/upload", mw.FormDataContentType(), &buf)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// ask runs question for mallory with execute_command and returns the
// answer (the fake model answers with the tool's result).
func ask(t *testing.T, base, question string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"user_id": "mallory", "question": question, "tool_names": []string{"execute_command"}, "stream": false})
	resp, err := http.Post(base+"/wunder", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Answer string }
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &out) != nil {
		t.Fatalf("POST /wunder = %d %s", resp.StatusCode, b)
	}
	return out.Answer
}

// du is the bytes of the regular files under dir.
func du(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
