package connectapi_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/wunder/wunder/gateway/connectapi"
	wunderv1 "github.com/wunder/wunder/gen/wunder/v1"
	"github.com/wunder/wunder/internal/i18n"
	"github.com/wunder/wunder/orchestrator"
	ot "github.com/wunder/wunder/orchestrator/orchestratortest"
)

// A Connect error's message follows the request's language — the Run's
// language field, else Accept-Language (the gateway's middleware) — in all
// three protocols; the code and the reason do not change, and English is
// what it was.
func TestErrorMessageLanguage(t *testing.T) {
	e := newEnv(t, envOpts{noModel: true})
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			ctx := context.Background()
			en, zh := e.clients(p), e.clients(p, headerInterceptor("Accept-Language", "zh-CN,zh;q=0.9"))

			_, errEN := en.runs.GetRun(ctx, connect.NewRequest(&wunderv1.GetRunRequest{RunId: "run_nope"}))
			_, errZH := zh.runs.GetRun(ctx, connect.NewRequest(&wunderv1.GetRunRequest{RunId: "run_nope"}))
			msgEN, msgZH := connectMessage(errEN), connectMessage(errZH)
			rest, ok := strings.CutPrefix(msgEN, "not found: ")
			if !ok || connect.CodeOf(errZH) != connect.CodeNotFound || errorInfoReason(errZH) != "NOT_FOUND" || msgZH != "未找到："+rest {
				t.Errorf("GetRun of an unknown run: en %v, zh %v (reason %q); want NOT_FOUND with 未找到：%s", errEN, errZH, errorInfoReason(errZH), rest)
			}

			// The request's language field, without Accept-Language.
			run := func(c clients, lang string) error {
				s, err := c.runs.Run(ctx, connect.NewRequest(&wunderv1.RunRequest{UserId: "u-" + p.name, Question: "q", Language: lang}))
				if err != nil {
					return err
				}
				for s.Receive() {
				}
				return s.Err()
			}
			errEN, errZH = run(en, ""), run(en, "zh")
			msgEN, msgZH = connectMessage(errEN), connectMessage(errZH)
			rest, ok = strings.CutPrefix(msgEN, "unavailable: ")
			if !ok || connect.CodeOf(errZH) != connect.CodeUnavailable || msgZH != "服务暂不可用："+rest {
				t.Errorf("Run without a model: en %v, zh %v; want UNAVAILABLE with 服务暂不可用：%s", errEN, errZH, rest)
			}
			// The field beats the header.
			if msg := connectMessage(run(zh, "en")); msg != msgEN {
				t.Errorf("Run in en with Accept-Language zh: %q, want %q", msg, msgEN)
			}
		})
	}
}

func connectMessage(err error) string {
	if ce := new(connect.Error); err != nil && errors.As(err, &ce) {
		return ce.Message()
	}
	return ""
}

// Every reason of the error table has a sentence in every language of the
// catalog.
func TestEveryConnectErrorInCatalog(t *testing.T) {
	reasons := connectapi.Reasons()
	if len(reasons) < 9 {
		t.Fatalf("only %d reasons", len(reasons))
	}
	for _, r := range append(reasons, "internal_see_server_log") {
		if !i18n.Has(strings.ToLower(r)) {
			t.Errorf("reason %s has no message in every language of internal/i18n's catalog", r)
		}
	}
}

// A refusal of the core that names its sentence is translated whole.
func TestErrorMessageWholeSentence(t *testing.T) {
	gate, started := make(chan struct{}), make(chan struct{})
	e := newEnv(t, envOpts{
		orch:  orchestrator.Options{MaxActiveRuns: 1, QueueSize: -1, QueueRetryAfter: 3 * time.Second},
		turns: []ot.Turn{{Content: "slow", Wait: gate, Started: started}},
	})
	defer close(gate)
	ctx := context.Background()
	c := e.clients(protocols[0])
	if _, err := c.runs.Submit(ctx, connect.NewRequest(&wunderv1.SubmitRequest{UserId: "alice", Question: "q"})); err != nil {
		t.Fatal(err)
	}
	<-started
	for lang, want := range map[string]string{
		"en": "unavailable: 1 runs active and the queue of 0 is full",
		"zh": "服务暂不可用：1 个运行正在进行，0 个位置的队列已满",
	} {
		_, err := c.runs.Submit(ctx, connect.NewRequest(&wunderv1.SubmitRequest{UserId: "bob", Question: "q", Language: lang}))
		if connect.CodeOf(err) != connect.CodeUnavailable || connectMessage(err) != want {
			t.Errorf("a full queue in %s: %v; want UNAVAILABLE %q", lang, err, want)
		}
	}
}
