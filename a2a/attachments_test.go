package a2a_test

import (
	"encoding/base64"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/doc2md/doc2mdtest"
)

// Files sent as inline file parts reach the model converted, as the
// attachments of POST /wunder do: a PDF and a DOCX as Markdown, a picture
// as a note for a model without vision (the echo model repeats its
// question, attachments included).
func TestFileParts(t *testing.T) {
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("pdftotext (poppler-utils) is not installed")
	}
	e := newEnv(t, nil)
	b64 := func(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
	pdf, docx, png := b64(doc2mdtest.PDF("Invoice total 42 EUR")), b64(doc2mdtest.DOCX("Agenda", []string{"Item one."}, nil)), b64(doc2mdtest.PNG())

	// 1.0: {raw, mediaType, filename}.
	r := post(t, e, "1.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[`+
		`{"text":"what do these say?"},{"raw":"`+pdf+`","mediaType":"application/pdf","filename":"invoice.pdf"},`+
		`{"raw":"`+docx+`","filename":"agenda.docx"},{"raw":"`+png+`","mediaType":"image/png","filename":"photo.png"}]}}}`)
	if r.Error != nil {
		t.Fatalf("1.0: %s", r.Error.Message)
	}
	answer := string(r.Result)
	for _, want := range []string{"what do these say?", "Invoice total 42 EUR", "[Attachment: invoice.pdf", "# Agenda", "Item one.",
		"photo.png (image/png): an image this model cannot see"} {
		if !strings.Contains(answer, jsonText(want)) {
			t.Errorf("1.0: the answer lacks %q: %s", want, answer)
		}
	}

	// 0.3: {kind:file, file:{bytes, mimeType, name}}, no text part.
	r = post(t, e, "", `{"jsonrpc":"2.0","id":2,"method":"message/send","params":{"message":{"kind":"message","messageId":"m2","role":"user","parts":[`+
		`{"kind":"file","file":{"bytes":"`+docx+`","name":"agenda.docx"}}]}}}`)
	if r.Error != nil {
		t.Fatalf("0.3: %s", r.Error.Message)
	}
	if !strings.Contains(string(r.Result), "# Agenda") || !strings.Contains(string(r.Result), "Read the attached files.") {
		t.Errorf("0.3: %s", r.Result)
	}
}

func TestFilePartRefusals(t *testing.T) {
	e := newEnv(t, nil)
	elf := base64.StdEncoding.EncodeToString(append([]byte("\x7fELF\x02\x01\x01\x00"), make([]byte, 64)...))
	for _, tc := range []struct {
		what, part string
		code       int
	}{
		{"executable", `{"raw":"` + elf + `","filename":"run.exe"}`, -32005},
		{"bad data URL", `{"url":"data:application/pdf;base64,@@@","filename":"broken.pdf"}`, -32602},
	} {
		r := post(t, e, "1.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"q"},`+tc.part+`]}}}`)
		if r.Error == nil || r.Error.Code != tc.code {
			t.Errorf("%s: %s %+v; want error %d", tc.what, r.Result, r.Error, tc.code)
			continue
		}
		var name struct{ Filename string }
		_ = json.Unmarshal([]byte(tc.part), &name)
		if !strings.Contains(r.Error.Message, name.Filename) {
			t.Errorf("%s: message %q does not name %s", tc.what, r.Error.Message, name.Filename)
		}
	}
	// No task was created for them.
	r := post(t, e, "1.0", `{"jsonrpc":"2.0","id":2,"method":"ListTasks","params":{}}`)
	if strings.Contains(string(r.Result), `"id"`) {
		t.Errorf("tasks after refused messages: %s", r.Result)
	}
}

// jsonText is s as it appears inside a JSON string.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}
