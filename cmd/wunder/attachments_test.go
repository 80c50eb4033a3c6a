package main

import (
	"encoding/base64"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/doc2md/doc2mdtest"
	"github.com/wunder/wunder/orchestrator"
)

// Attachments through the wired server and the real model wire (fakellm
// reports what it got): a PDF (pdftotext in the sandbox when bubblewrap
// is there), a DOCX and a picture, to a model without vision and to one
// with it; the same files as A2A file parts in a message over 1 MiB (the
// attachment body limit, not max_body_bytes); the history keeps them.
func TestAttachmentsEndToEnd(t *testing.T) {
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("pdftotext (poppler-utils) is not installed")
	}
	s := startServer(t, func(c *config.Config) {
		eyes := c.LLM.Models["fake"]
		eyes.SupportVision = true
		c.LLM.Models["eyes"] = eyes
		c.LLM.Default = "fake"
	})
	pdf, docx, png := doc2mdtest.PDF("Revenue grew 12 percent"), doc2mdtest.DOCX("Roadmap", []string{"Ship it."}, nil), doc2mdtest.PNG()
	atts := []map[string]string{
		{"type": "file", "name": "report.pdf", "content": doc2mdtest.DataURL("application/pdf", pdf)},
		{"type": "file", "name": "plan.docx", "content": doc2mdtest.DataURL("application/octet-stream", docx)},
		{"type": "image", "name": "chart.png", "content": doc2mdtest.DataURL("image/png", png)},
	}
	for _, tc := range []struct{ model, images, imageNote string }{
		{"fake", "images=0", "chart.png (image/png): an image this model cannot see"},
		{"eyes", "images=1", "chart.png (image/png): the image follows"},
	} {
		body, _ := json.Marshal(map[string]any{"user_id": "ann", "question": "#attachments what is in these?", "stream": false,
			"model_name": tc.model, "attachments": atts})
		var out struct {
			Answer    string `json:"answer"`
			SessionID string `json:"session_id"`
		}
		decodeInto(t, s.rest(t, "POST", "/wunder", string(body), nil), 200, &out)
		for _, want := range []string{tc.images, "Revenue grew 12 percent", "[Attachment: plan.docx", "# Roadmap", tc.imageNote} {
			if !strings.Contains(out.Answer, want) {
				t.Errorf("%s: the model did not get %q:\n%s", tc.model, want, out.Answer)
			}
		}
		var sess struct {
			Messages []orchestrator.Message `json:"messages"`
		}
		decodeInto(t, s.rest(t, "GET", "/wunder/sessions/"+out.SessionID+"?user_id=ann", "", nil), 200, &sess)
		if len(sess.Messages) == 0 || len(sess.Messages[0].Attachments) != 3 || sess.Messages[0].Attachments[1].Name != "plan.docx" {
			t.Fatalf("%s: history: %+v", tc.model, sess.Messages)
		}
	}

	// A2A, a message of more than max_body_bytes (1 MiB).
	b64 := base64.StdEncoding.EncodeToString
	filler := strings.Repeat("lorem ipsum dolor sit amet\n", 50000) // 1.35 MB
	params, _ := json.Marshal(map[string]any{"message": map[string]any{"messageId": "m1", "role": "ROLE_USER", "parts": []map[string]any{
		{"text": "#attachments read"},
		{"raw": b64(pdf), "mediaType": "application/pdf", "filename": "report.pdf"},
		{"raw": b64(docx), "filename": "plan.docx"},
		{"raw": b64([]byte(filler)), "mediaType": "text/plain", "filename": "notes.txt"},
	}}})
	r := s.rest(t, "POST", "/a2a", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":`+string(params)+`}`, map[string]string{"A2A-Version": "1.0"})
	var rpc struct {
		Result json.RawMessage
		Error  *struct{ Message string }
	}
	decodeInto(t, r, 200, &rpc)
	if rpc.Error != nil {
		t.Fatalf("A2A: %s", rpc.Error.Message)
	}
	for _, want := range []string{"Revenue grew 12 percent", "# Roadmap", "[Attachment: notes.txt", "clipped: the document has"} {
		if !strings.Contains(string(rpc.Result), want) {
			t.Errorf("A2A: the model did not get %q", want)
		}
	}
}
