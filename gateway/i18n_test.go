package gateway_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// A problem's title and detail follow the request's language: the body's
// "language", else the "language" query parameter, else Accept-Language,
// else i18n.default_language; English stays as it was.
func TestProblemLanguage(t *testing.T) {
	e := newEnv(t, envOpts{noModel: true})
	const run = `{"user_id":"u","question":"q"}`

	// English: the sentinel's text and the specifics, as before.
	en := wantProblem(t, e.do(t, "POST", "/wunder", run), 503, "unavailable")
	if en.Title != "Service Unavailable" || !strings.HasPrefix(en.Detail, "unavailable: no model configured") {
		t.Fatalf("English problem = %+v", en)
	}
	zhDetail := "服务暂不可用：" + strings.TrimPrefix(en.Detail, "unavailable: ")

	for _, c := range []struct {
		name, path, body string
		hdr              []string
	}{
		{"body language", "/wunder", `{"user_id":"u","question":"q","language":"zh"}`, nil},
		{"body language, an alias's primary subtag", "/wunder", `{"user_id":"u","question":"q","language":"zh-Hans"}`, nil},
		{"body language beats Accept-Language", "/wunder", `{"user_id":"u","question":"q","language":"zh"}`, []string{"Accept-Language", "en"}},
		{"query parameter", "/wunder?language=zh", run, nil},
		{"Accept-Language", "/wunder", run, []string{"Accept-Language", "fr;q=0.9, zh-CN;q=0.8, en;q=0.1"}},
	} {
		p := wantProblem(t, e.do(t, "POST", c.path, c.body, c.hdr...), 503, "unavailable")
		if p.Title != "服务不可用" || p.Detail != zhDetail {
			t.Errorf("%s: title %q detail %q; want 服务不可用, %q", c.name, p.Title, p.Detail, zhDetail)
		}
	}
	// The body's language names English: the header is passed over.
	p := wantProblem(t, e.do(t, "POST", "/wunder", `{"user_id":"u","question":"q","language":"en"}`, "Accept-Language", "zh"), 503, "unavailable")
	if p.Title != en.Title || p.Detail != en.Detail {
		t.Errorf("language en with Accept-Language zh: %+v, want %+v", p, en)
	}
	// A fixed sentence is translated whole; a 404 of a run names the run.
	p = wantProblem(t, e.do(t, "POST", "/wunder", `{"user_id":"u","language":"zh"}`), 400, "missing_question")
	if p.Title != "请求错误" || p.Detail != "缺少 question" {
		t.Errorf("missing question in zh: %+v", p)
	}
	enRun := wantProblem(t, e.do(t, "GET", "/wunder/runs/run_nope", ""), 404, "not_found")
	p = wantProblem(t, e.do(t, "GET", "/wunder/runs/run_nope", "", "Accept-Language", "zh"), 404, "not_found")
	if want := "未找到：" + strings.TrimPrefix(enRun.Detail, "not found: "); p.Title != "未找到" || p.Detail != want || want == "未找到："+enRun.Detail {
		t.Errorf("run not found in zh: %+v, want detail %q (English %q)", p, want, enRun.Detail)
	}
	// The mux's own 404 too.
	p = wantProblem(t, e.do(t, "GET", "/wunder/nothing-here", "", "Accept-Language", "zh"), 404, "route_not_found")
	if p.Title != "未找到" || !strings.HasPrefix(p.Detail, "没有这个路由：no route for GET /wunder/nothing-here") {
		t.Errorf("route not found in zh: %+v", p)
	}
}

// Without a language in the request, i18n.default_language decides; the
// request still overrides it.
func TestProblemDefaultLanguage(t *testing.T) {
	e := newEnv(t, envOpts{noModel: true, gw: gateway.Options{I18n: gateway.I18n{Default: "zh"}}})
	p := wantProblem(t, e.do(t, "POST", "/wunder", `{"user_id":"u"}`), 400, "missing_question")
	if p.Title != "请求错误" || p.Detail != "缺少 question" {
		t.Errorf("default zh: %+v", p)
	}
	p = wantProblem(t, e.do(t, "POST", "/wunder", `{"user_id":"u"}`, "Accept-Language", "en-US"), 400, "missing_question")
	if p.Title != "Bad Request" || p.Detail != "question is required" {
		t.Errorf("default zh, Accept-Language en-US: %+v", p)
	}
	p = wantProblem(t, e.do(t, "POST", "/wunder", `{"user_id":"u","language":"en"}`), 400, "missing_question")
	if p.Title != "Bad Request" || p.Detail != "question is required" {
		t.Errorf("default zh, language en: %+v", p)
	}
}

// The core's most common refusals name their sentence, so they are
// translated whole; English is what it was.
func TestProblemLanguageWholeSentence(t *testing.T) {
	gate := make(chan struct{})
	started := make(chan struct{})
	e := newEnv(t, envOpts{
		orch:  orchestrator.Options{MaxActiveRuns: 1, QueueSize: -1, QueueRetryAfter: 3 * time.Second},
		turns: []orchestratortest.Turn{{Content: "slow", Wait: gate, Started: started}, {Content: "ok"}},
	})
	defer close(gate)
	if first := e.do(t, "POST", "/wunder/runs", `{"user_id":"alice","question":"q"}`); first.StatusCode != 202 {
		t.Fatalf("first %d", first.StatusCode)
	}
	<-started
	for _, tc := range []struct {
		body, lang string
		status     int
		code, want string
	}{
		{`{"user_id":"alice","question":"again"}`, "en", 429, "busy", "busy: user alice already has a running run"},
		{`{"user_id":"alice","question":"again"}`, "zh", 429, "busy", "忙碌中：用户 alice 已有正在进行的运行"},
		{`{"user_id":"bob","question":"q"}`, "en", 503, "unavailable", "unavailable: 1 runs active and the queue of 0 is full"},
		{`{"user_id":"bob","question":"q"}`, "zh", 503, "unavailable", "服务暂不可用：1 个运行正在进行，0 个位置的队列已满"},
	} {
		resp := e.do(t, "POST", "/wunder", tc.body, "Accept-Language", tc.lang)
		if p := wantProblem(t, resp, tc.status, tc.code); p.Detail != tc.want {
			t.Errorf("%s in %s: detail %q, want %q", tc.code, tc.lang, p.Detail, tc.want)
		}
	}
}

// An internal error's message is translated whole, with its request id.
func TestInternalProblemLanguage(t *testing.T) {
	srv := httptest.NewServer(gateway.New(panicky{}, nil).Handler())
	defer srv.Close()
	for lang, want := range map[string]string{
		"en": "internal error; see the server log for request %s",
		"zh": "内部错误；详情见服务器日志（请求 %s）",
	} {
		resp, err := http.Get(srv.URL + "/wunder/tools?user_id=u&language=" + lang)
		if err != nil {
			t.Fatal(err)
		}
		p := wantProblem(t, resp, 500, "internal")
		resp.Body.Close()
		if p.Detail != fmt.Sprintf(want, p.RequestID) {
			t.Errorf("%s: detail %q, want %q", lang, p.Detail, fmt.Sprintf(want, p.RequestID))
		}
	}
}
