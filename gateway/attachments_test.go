package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/internal/doc2md"
	"github.com/wunder/wunder/internal/doc2md/doc2mdtest"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// attachEnv is a gateway over a scripted model that can see images or
// not, and the store, to check that refused requests store nothing.
func attachEnv(t *testing.T, vision bool, gw gateway.Options) (*env, orchestrator.Store) {
	t.Helper()
	e := &env{model: orchestratortest.NewScriptedModel(orchestratortest.Turn{Content: "seen"}), files: orchestratortest.NewFiles()}
	models := orchestratortest.Models{Model: e.model, Settings: orchestrator.ModelSettings{Name: "scripted",
		ToolCallMode: orchestrator.ModeToolCall, MaxRounds: 2, SupportVision: vision}}
	store := orchestratortest.NewMemStore()
	e.o = orchestrator.New(store, models, orchestrator.NewRegistry("", nil), nil)
	e.srv = httptest.NewServer(gateway.New(e.o, &gw).Handler())
	t.Cleanup(func() {
		e.srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.o.Close(ctx)
	})
	return e, store
}

func attachmentsBody(t *testing.T, question string, atts ...map[string]string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"user_id": "alice", "question": question, "stream": false, "attachments": atts})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// lastUser is the last user message of the model's last request.
func lastUser(t *testing.T, m *orchestratortest.ScriptedModel) orchestrator.Message {
	t.Helper()
	reqs := m.Requests()
	if len(reqs) == 0 {
		t.Fatal("the model was not called")
	}
	msgs := reqs[len(reqs)-1].Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == orchestrator.RoleUser {
			return msgs[i]
		}
	}
	t.Fatal("no user message")
	return orchestrator.Message{}
}

func TestAttachmentsReachTheModel(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("pdftotext (poppler-utils) is not installed")
	}
	png := doc2mdtest.DataURL("image/png", doc2mdtest.PNG())
	for _, vision := range []bool{false, true} {
		e, _ := attachEnv(t, vision, gateway.Options{})
		resp := e.do(t, "POST", "/wunder", attachmentsBody(t, "summarise",
			map[string]string{"type": "file", "name": "report.pdf", "content": doc2mdtest.DataURL("application/pdf", doc2mdtest.PDF("Revenue grew 12 percent"))},
			map[string]string{"type": "file", "name": "plan.docx", "content": doc2mdtest.DataURL("application/octet-stream",
				doc2mdtest.DOCX("Roadmap", []string{"Ship attachments."}, nil))},
			map[string]string{"type": "image", "name": "chart.png", "content": png},
		))
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("vision %v: %d %s", vision, resp.StatusCode, body)
		}
		u := lastUser(t, e.model)
		for _, want := range []string{"summarise", "[Attachment: report.pdf (application/pdf)]", "Revenue grew 12 percent",
			"[Attachment: plan.docx", "# Roadmap", "Ship attachments.", "chart.png"} {
			if !strings.Contains(u.Content, want) {
				t.Errorf("vision %v: the model's user message lacks %q:\n%s", vision, want, u.Content)
			}
		}
		if vision {
			if len(u.Attachments) != 1 || u.Attachments[0].Content != png || u.Attachments[0].Type != orchestrator.AttachmentImage {
				t.Errorf("vision model: image parts %+v; want chart.png's data URL", u.Attachments)
			}
		} else {
			if len(u.Attachments) != 0 {
				t.Errorf("model without vision got image parts: %d", len(u.Attachments))
			}
			if !strings.Contains(u.Content, "an image this model cannot see") {
				t.Errorf("model without vision: no note about chart.png:\n%s", u.Content)
			}
		}

		// The session history shows the attachments.
		var run struct {
			SessionID string `json:"session_id"`
		}
		_ = json.Unmarshal(body, &run)
		resp = e.do(t, "GET", "/wunder/sessions/"+run.SessionID+"?user_id=alice", "")
		var sess struct {
			Messages []orchestrator.Message `json:"messages"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&sess); err != nil || len(sess.Messages) == 0 {
			t.Fatalf("history: %v %+v", err, sess)
		}
		q := sess.Messages[0]
		if q.Content != "summarise" || len(q.Attachments) != 3 {
			t.Fatalf("stored question: %q with %d attachments; want summarise with 3", q.Content, len(q.Attachments))
		}
		if a := q.Attachments[0]; a.Name != "report.pdf" || a.Type != "file" || !strings.Contains(a.Content, "Revenue grew") || a.Size == 0 {
			t.Errorf("stored PDF attachment: %+v", a)
		}
		if a := q.Attachments[2]; a.Type != "image" || a.Content != png {
			t.Errorf("stored image: %+v", a)
		}
	}
}

func TestAttachmentRefusals(t *testing.T) {
	t.Parallel()
	conv := doc2md.New(&doc2md.Options{MaxBytes: 4096})
	e, store := attachEnv(t, false, gateway.Options{Attachments: conv})
	elf := append([]byte("\x7fELF\x02\x01\x01\x00"), make([]byte, 100)...)
	for _, tc := range []struct {
		what   string
		att    map[string]string
		status int
		code   string
	}{
		{"oversized", map[string]string{"type": "file", "name": "huge.txt", "content": doc2mdtest.DataURL("text/plain", bytes.Repeat([]byte("a"), 5000))},
			http.StatusRequestEntityTooLarge, "attachment_too_large"},
		{"executable", map[string]string{"type": "file", "name": "tool.exe", "content": doc2mdtest.DataURL("application/pdf", elf)},
			http.StatusUnsupportedMediaType, "attachment_unsupported"},
		{"bad base64", map[string]string{"type": "file", "name": "broken.pdf", "content": "data:application/pdf;base64,@@not base64@@"},
			http.StatusBadRequest, "attachment_unreadable"},
	} {
		resp := e.do(t, "POST", "/wunder", attachmentsBody(t, "q", tc.att))
		p := wantProblem(t, resp, tc.status, tc.code)
		if !strings.Contains(p.Detail, tc.att["name"]) {
			t.Errorf("%s: detail %q does not name %s", tc.what, p.Detail, tc.att["name"])
		}
		resp = e.do(t, "POST", "/wunder/runs", attachmentsBody(t, "q", tc.att))
		wantProblem(t, resp, tc.status, tc.code)
	}
	// Nothing was stored for the refused requests.
	sessions, err := store.ListSessions(t.Context(), "alice", orchestrator.Page{})
	if err != nil || len(sessions) != 0 {
		t.Errorf("sessions after refused requests: %v %v; want none", sessions, err)
	}
	if n := len(e.model.Requests()); n != 0 {
		t.Errorf("the model was called %d times", n)
	}
}

func TestAttachmentBodyLimit(t *testing.T) {
	t.Parallel()
	// The attachment routes take more than max_body_bytes; others do not.
	e, _ := attachEnv(t, false, gateway.Options{MaxBodyBytes: 1024, AttachmentBodyBytes: 64 << 10})
	big := strings.Repeat("word ", 2000)
	resp := e.do(t, "POST", "/wunder", attachmentsBody(t, "q", map[string]string{"type": "text", "name": "notes.txt", "content": big}))
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("10 KB of attachments on POST /wunder: %d %s", resp.StatusCode, b)
	}
	resp = e.do(t, "POST", "/wunder/system_prompt", `{"user_id":"alice","question":"`+big+`"}`)
	wantProblem(t, resp, http.StatusRequestEntityTooLarge, "body_too_large")
	resp = e.do(t, "POST", "/wunder", attachmentsBody(t, "q", map[string]string{"type": "text", "name": "n", "content": strings.Repeat("x", 70<<10)}))
	wantProblem(t, resp, http.StatusRequestEntityTooLarge, "body_too_large")
}

func TestConvertRoutes(t *testing.T) {
	t.Parallel()
	e, _ := attachEnv(t, false, gateway.Options{Attachments: doc2md.New(&doc2md.Options{MaxBytes: 64 << 10})})
	docx := doc2mdtest.DOCX("Minutes", []string{"Agreed."}, [][]string{{"who", "what"}, {"ann", "docs"}})
	for _, path := range []string{"/wunder/doc2md/convert", "/wunder/attachments/convert"} {
		// JSON with a data URL.
		b, _ := json.Marshal(map[string]string{"name": "m.docx", "content": doc2mdtest.DataURL("application/octet-stream", docx)})
		resp := e.do(t, "POST", path, string(b))
		checkConverted(t, path+" JSON", resp, "m.docx", "# Minutes", "| ann | docs |")

		// Multipart, field file.
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		fw, _ := mw.CreateFormFile("file", "page.html")
		_, _ = fw.Write([]byte("<h1>Hello</h1><p>from <i>HTML</i></p>"))
		_ = mw.Close()
		resp = e.do(t, "POST", path, body.String(), "Content-Type", mw.FormDataContentType())
		checkConverted(t, path+" multipart", resp, "page.html", "# Hello", "from *HTML*")

		// Refusals, as for attachments.
		b, _ = json.Marshal(map[string]string{"name": "x.bin", "content": doc2mdtest.DataURL("application/octet-stream", []byte{0, 1, 2, 3, 0xff})})
		p := wantProblem(t, e.do(t, "POST", path, string(b)), http.StatusUnsupportedMediaType, "attachment_unsupported")
		if !strings.Contains(p.Detail, "x.bin") {
			t.Errorf("detail %q does not name x.bin", p.Detail)
		}
		wantProblem(t, e.do(t, "POST", path, `{"name":"y.pdf","content":"data:application/pdf;base64,!!"}`), http.StatusBadRequest, "attachment_unreadable")
		body.Reset()
		mw = multipart.NewWriter(&body)
		fw, _ = mw.CreateFormFile("file", "big.txt")
		_, _ = fw.Write(bytes.Repeat([]byte("a"), 65<<10))
		_ = mw.Close()
		wantProblem(t, e.do(t, "POST", path, body.String(), "Content-Type", mw.FormDataContentType()), http.StatusRequestEntityTooLarge, "attachment_too_large")
	}
}

func checkConverted(t *testing.T, what string, resp *http.Response, name string, want ...string) {
	t.Helper()
	var got struct {
		OK      bool   `json:"ok"`
		Name    string `json:"name"`
		Content string `json:"content"`
	}
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &got); err != nil || resp.StatusCode != http.StatusOK || !got.OK || got.Name != name {
		t.Fatalf("%s: %d %s", what, resp.StatusCode, b)
	}
	for _, w := range want {
		if !strings.Contains(got.Content, w) {
			t.Errorf("%s: content lacks %q:\n%s", what, w, got.Content)
		}
	}
}
