package connectapi_test

import (
	"bytes"
	"encoding/binary"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// Run's run may be stored with its first events
// (orchestrator.RunRequest.IDsWithEvents), so its response headers, which
// name the run and its session, must reach the client only once it is
// stored: with the first message. The request is made by hand (the
// Connect protocol's streaming envelope) to see when the headers arrive:
// http.Client.Do returns with them. The model is held, so the run cannot
// end; its first events are stored once the stream's delay passes.
func TestRunSendsIDsOnceStored(t *testing.T) {
	gate := make(chan struct{})
	e := newEnv(t, envOpts{
		orch:  orchestrator.Options{Events: orchestrator.EventPolicy{StreamDelay: orchestrator.DelayOf(100 * time.Millisecond)}},
		turns: []orchestratortest.Turn{{Content: "late", Wait: gate}},
	})
	msg := []byte(`{"userId":"alice","question":"q"}`)
	body := append([]byte{0}, binary.BigEndian.AppendUint32(nil, uint32(len(msg)))...)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.srv.URL+"/wunder.v1.RunService/Run", bytes.NewReader(append(body, msg...)))
	req.Header.Set("Content-Type", "application/connect+json")
	req.Header.Set("Connect-Protocol-Version", "1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sessionID := resp.Header.Get("Wunder-Session-Id")
	_, serr := e.o.GetSession(t.Context(), "alice", sessionID)
	close(gate)
	if resp.StatusCode != 200 || sessionID == "" || resp.Header.Get("Wunder-Run-Id") == "" {
		t.Fatalf("status %d, headers %v", resp.StatusCode, resp.Header)
	}
	if serr != nil {
		t.Fatalf("the session named by Run's headers: %v; want it stored", serr)
	}
	rest, err := io.ReadAll(resp.Body)
	if err != nil || !strings.Contains(string(rest), `"final"`) || !strings.Contains(string(rest), "late") {
		t.Fatalf("stream = %q, %v; want it to end with the final event", rest, err)
	}
}
