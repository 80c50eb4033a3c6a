package a2a_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/wunder/wunder/a2a"
	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/internal/i18n"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// inLanguage serves h with lang on every request's context, as the
// gateway's middleware puts it there.
func inLanguage(lang string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(rw, r.WithContext(i18n.WithLanguage(r.Context(), lang)))
	})
}

// rpc posts a JSON-RPC request and returns the error of the response.
func rpc(t *testing.T, url, body string) *w.Error {
	t.Helper()
	resp, err := http.Post(url, "application/json", bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out w.Response
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.Error == nil {
		t.Fatalf("%s: no error in the response", body)
	}
	return out.Error
}

// A JSON-RPC error's message follows the request's language; its code and
// data do not change, and English is what it was.
func TestErrorMessageLanguage(t *testing.T) {
	b := refusing{fmt.Errorf("%w: run run_x", orchestrator.ErrInvalidArgument)}
	en := httptest.NewServer(a2a.New(b, nil))
	t.Cleanup(en.Close)
	zh := httptest.NewServer(inLanguage(i18n.Chinese, a2a.New(b, nil)))
	t.Cleanup(zh.Close)

	for _, tc := range []struct {
		name, body, wantEN, wantZH string
	}{
		{"a core error", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"run_x"}}`,
			"invalid argument: run run_x", "参数无效：run run_x"},
		{"an unknown method", `{"jsonrpc":"2.0","id":1,"method":"NoSuchMethod"}`,
			"method not found: NoSuchMethod", "未找到方法：NoSuchMethod"},
		{"bad params", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":[1]}`, "", ""},
	} {
		e, z := rpc(t, en.URL, tc.body), rpc(t, zh.URL, tc.body)
		if e.Code != z.Code || !bytes.Equal(e.Data, z.Data) {
			t.Errorf("%s: en %d %s, zh %d %s; code and data must not change", tc.name, e.Code, e.Data, z.Code, z.Data)
		}
		if tc.wantEN == "" { // bad params: the decoder's English after the sentence
			tc.wantEN = e.Message
			tc.wantZH = i18n.Detail(i18n.Chinese, "invalid_params", e.Message, "invalid params")
			if tc.wantZH == e.Message {
				t.Errorf("%s: %q has no Chinese", tc.name, e.Message)
			}
		}
		if e.Message != tc.wantEN || z.Message != tc.wantZH {
			t.Errorf("%s: en %q, zh %q; want %q, %q", tc.name, e.Message, z.Message, tc.wantEN, tc.wantZH)
		}
	}

	// A sentence of its own (task not found) is translated whole; the
	// retryable -32000 keeps its data.
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("%w: run run_x", orchestrator.ErrNotFound), "未找到任务"},
		{fmt.Errorf("%w: queue full", orchestrator.ErrUnavailable), "服务暂不可用：queue full"},
	} {
		srv := httptest.NewServer(inLanguage(i18n.Chinese, a2a.New(refusing{tc.err}, nil)))
		_, err := (&w.Client{URL: srv.URL, Version: w.V03}).GetTask(t.Context(), "run_x")
		srv.Close()
		var re *w.Error
		if !errors.As(err, &re) || re.Message != tc.want || !errors.Is(err, errors.Unwrap(tc.err)) {
			t.Errorf("GetTask with %v in zh: %v; want message %q", tc.err, err, tc.want)
		}
	}
}

// A refusal of the core that names its sentence (here: a core that shut
// down) is translated whole; the retry data stays.
func TestErrorMessageWholeSentence(t *testing.T) {
	o := orchestrator.New(orchestratortest.NewMemStore(), orchestratortest.Models{Model: orchestratortest.NewScriptedModel()},
		orchestrator.NewRegistry("", nil), nil)
	if err := o.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	_, refusal := o.Start(t.Context(), orchestrator.RunRequest{UserID: "u", Question: "q"})
	if refusal == nil || refusal.Error() != "unavailable: shutting down" {
		t.Fatalf("Start on a closed core: %v", refusal)
	}
	srv := httptest.NewServer(inLanguage(i18n.Chinese, a2a.New(refusing{refusal}, nil)))
	t.Cleanup(srv.Close)
	e := rpc(t, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"run_x"}}`)
	if e.Code != w.CodeServerError || e.Message != "服务暂不可用：正在关闭" || !bytes.Contains(e.Data, []byte("UNAVAILABLE")) {
		t.Errorf("a closed core in zh: %d %q %s", e.Code, e.Message, e.Data)
	}
}
