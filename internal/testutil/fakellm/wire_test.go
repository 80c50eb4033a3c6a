package fakellm_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/testutil/fakellm"
	"github.com/wunder/wunder/internal/testutil/fakemodel"
)

func post(t *testing.T, srv *httptest.Server, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The wire as clients other than wunder's see it: a directive without
// tools in the request is a <tool_call> block; image parts reach the
// engine as image attachments; a content part of another type is a 400 in
// the provider's error shape; a 500 carries the fault.
func TestWire(t *testing.T) {
	m := fakemodel.Directives()
	srv := httptest.NewServer(&fakellm.Server{Model: m})
	defer srv.Close()

	var out struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	code, body := post(t, srv, `{"model":"m","messages":[{"role":"user","content":"call read_file {\"path\":\"a.txt\"}"}]}`)
	if err := json.Unmarshal([]byte(body), &out); code != 200 || err != nil || len(out.Choices) != 1 {
		t.Fatalf("%d %s", code, body)
	}
	if got := out.Choices[0].Message.Content; !strings.Contains(got, `<tool_call>{"name":"read_file","arguments":{"path":"a.txt"}}</tool_call>`) {
		t.Fatalf("content %q", got)
	}

	code, body = post(t, srv, `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"look #attachments"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]}]}`)
	if code != 200 || !strings.Contains(body, `images=1\nlook #attachments`) {
		t.Fatalf("attachments: %d %s", code, body)
	}
	if reqs := m.Requests(); len(reqs) != 2 || len(reqs[1].Messages[0].Attachments) != 1 {
		t.Fatalf("recorded %+v", reqs)
	}

	code, body = post(t, srv, `{"model":"m","messages":[{"role":"user","content":[{"type":"audio"}]}]}`)
	if code != 400 || !strings.Contains(body, `"type":"invalid_request_error"`) {
		t.Fatalf("bad part: %d %s", code, body)
	}
	code, body = post(t, srv, `{"model":"m","messages":[{"role":"user","content":"hi #500"}]}`)
	if code != 500 || strings.TrimSpace(body) != `{"error":{"message":"fault: internal error","type":"server_error"}}` {
		t.Fatalf("#500: %d %s", code, body)
	}
}
