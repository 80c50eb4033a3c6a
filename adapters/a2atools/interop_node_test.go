package a2atools_test

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/adapters/a2atools"
	"github.com/wunder/wunder/internal/testutil/npmpeers"
)

// startJSEcho runs the @a2a-js/sdk 1.3.0 echo agent of testdata/a2a-js and
// returns its base URL; closing its stdin stops it.
func startJSEcho(t *testing.T) string {
	dir := a2aJSPeers(t)
	cmd := exec.Command("node", filepath.Join(dir, "server.mjs"))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if port, ok := strings.CutPrefix(sc.Text(), "LISTENING "); ok {
			go func() {
				for sc.Scan() { // drain
				}
			}()
			return "http://127.0.0.1:" + port
		}
	}
	t.Fatalf("the JS echo agent did not start: %v", sc.Err())
	return ""
}

// wunder's a2a@service against an @a2a-js/sdk agent, in 1.0 (from its
// card) and 0.3 (legacyCompat endpoint).
func TestCallJSSDKPeer(t *testing.T) {
	url := startJSEcho(t)
	s := newSet(t,
		a2atools.Service{Name: "js10", URL: url},
		a2atools.Service{Name: "js03", URL: url + "/rpc", Version: "0.3"},
	)
	for _, name := range []string{"a2a@js10", "a2a@js03"} {
		rec := &recorder{}
		res, err := toolNamed(t, s, name).Call(t.Context(), invocation(`{"message":"hi `+name+`"}`, rec, nil))
		if err != nil || res.IsError || !strings.HasPrefix(res.Content, "echo: hi "+name) {
			t.Fatalf("%s: %+v %v (events %v)", name, res, err, rec.evs)
		}
	}
}

// a2aJSPeers returns testdata/a2a-js with @a2a-js/sdk installed.
func a2aJSPeers(t *testing.T) string {
	t.Helper()
	npmpeers.Require(t, "node", "@a2a-js/sdk peers")
	return npmpeers.Dir(t, "a2a-js", "@a2a-js/sdk peers", "@a2a-js/sdk/package.json")
}
