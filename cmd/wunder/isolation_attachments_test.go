package main

import (
	"encoding/json"
	"testing"

	"github.com/wunder/wunder/internal/doc2md/doc2mdtest"
)

// attachmentRows are the isolation matrix's rows of attachments: alice's
// attachment is stored with her question and read back only through her
// session's history; the convert routes hold nothing of anyone's (every
// caller may convert, no caller can name a user there).
func (f *fixture) attachmentRows(t *testing.T) []matrixRow {
	const marker = "alice-attachment-7f3c"
	body, _ := json.Marshal(map[string]any{"question": "read this", "stream": false,
		"attachments": []map[string]string{{"type": "text", "name": "secret.txt", "content": marker}}})
	var run struct {
		SessionID string `json:"session_id"`
	}
	decodeInto(t, f.rest(t, "POST", "/wunder", string(body), bearerOf(f.alice)), 200, &run)
	history := "/wunder/sessions/" + run.SessionID
	rows := []matrixRow{{frontend: "REST", resource: "attachment (session history)", action: "get", want: [4]string{ok, denied, forbidden, ok},
		try: func(t *testing.T, c caller) string {
			p := history
			if c.names != "" {
				p += "?user_id=" + c.names
			}
			return listOutcome(f.rest(t, "GET", p, "", c.hdr), marker)
		}}}
	doc, _ := json.Marshal(map[string]string{"name": "n.docx", "content": doc2mdtest.DataURL("application/octet-stream",
		doc2mdtest.DOCX("Converted", nil, nil))})
	for _, path := range []string{"/wunder/doc2md/convert", "/wunder/attachments/convert"} {
		rows = append(rows, matrixRow{frontend: "REST", resource: "document conversion (no stored resource)", action: "convert (POST " + path + ")",
			want: [4]string{ok, ok, na, na},
			try: func(t *testing.T, c caller) string {
				if c.names != "" {
					return na // the route takes no user
				}
				return listOutcome(f.rest(t, "POST", path, string(doc), c.hdr), "# Converted")
			}})
	}
	return rows
}
