package main

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/testutil/fakellm"
)

// keyedModel is an OpenAI-compatible model server (fakellm) that answers
// only a request with one of keys as its bearer token (401 otherwise), and
// remembers the last key it was sent.
type keyedModel struct {
	url  string
	mu   sync.Mutex
	last string // the last Authorization header; guarded by mu
}

func newKeyedModel(t *testing.T, keys ...string) *keyedModel {
	t.Helper()
	k := &keyedModel{}
	fake := &fakellm.Server{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		k.mu.Lock()
		k.last = auth
		k.mu.Unlock()
		for _, key := range keys {
			if auth == "Bearer "+key {
				fake.ServeHTTP(w, r)
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":{"message":"invalid api key","type":"invalid_request_error"}}`))
	}))
	t.Cleanup(srv.Close)
	k.url = srv.URL + "/v1"
	return k
}

func (k *keyedModel) lastAuth() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.last
}

// setField sets an input of the page as typing would (an input event).
func (b *browser) setField(css, value string) {
	b.t.Helper()
	sel, _ := json.Marshal(css)
	val, _ := json.Marshal(value)
	b.eval(`(() => { const i = document.querySelector(` + string(sel) + `); i.value = ` + string(val) + `; i.dispatchEvent(new Event('input', {bubbles: true})); return '' })()`)
}

// The models admin as a form (issue 40): a model whose key is stored shows
// no key; "Test connection" makes a real chat call with the stored key
// (the model server refuses any other) and shows the reply and latency;
// the same form pointed at a closed port shows the unreachable error
// naming the endpoint; saving the form changes the section (read back
// through the API) and keeps the stored key; a model added in the form
// sends the key typed in it.
func TestConsoleAdminModelsForm(t *testing.T) {
	const secret = "sk-stored-secret"
	keyed := newKeyedModel(t, secret, "sk-new")
	s := startServer(t, func(c *config.Config) {
		m := config.NewModel()
		m.Provider, m.BaseURL, m.Model, m.APIKey = config.ProviderLocal, keyed.url, "keyed-model", secret
		c.LLM.Models["keyed"] = m
		c.LLM.Default = "fake"
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()

	b := openAnon(t, s, "root")
	b.adminTab("models", `tr[data-model="keyed"]`)
	b.do("edit keyed", chromedp.Click(chromedp.Search(`//tr[@data-model="keyed"]//button[text()="Edit"]`)), chromedp.WaitVisible(chromedp.CSS(`form.model-form`)))
	b.until("the form filled in", `document.querySelector('input[name="model-model"]').value === 'keyed-model' && document.querySelector('input[name="model-base_url"]').value === `+jsString(keyed.url))
	if got := b.eval(`document.querySelector('input[name="model-api-key"]').value + '|' + document.querySelector('input[name="model-api-key"]').type`); got != "|password" {
		t.Errorf("the key field: %q; want empty, of type password", got)
	}
	if b.eval(`String(document.documentElement.outerHTML.includes(`+jsString(secret)+`) || [...document.querySelectorAll('textarea,input')].some(i => i.value.includes(`+jsString(secret)+`)))`) != "false" {
		t.Error("the page shows the stored key")
	}
	b.shot("admin-models-form")
	b.axe("admin, models form")

	b.do("test the connection", chromedp.Click(chromedp.CSS(`button.test-connection`)))
	b.until("the model's answer", `document.querySelector('.model-test[data-ok="true"]')?.textContent.includes('connection test') && /\d+ ms/.test(document.querySelector('.model-test').textContent)`)
	if got := keyed.lastAuth(); got != "Bearer "+secret {
		t.Errorf("the test sent %q; want the stored key", got)
	}
	b.shot("admin-models-test")

	b.setField(`input[name="model-base_url"]`, "http://"+dead+"/v1")
	b.do("test against a closed port", chromedp.Click(chromedp.CSS(`button.test-connection`)))
	b.until("the error naming the endpoint", `document.querySelector('.model-test[data-ok="false"][data-kind="unreachable"] .model-error')?.textContent.includes(`+jsString(dead)+`) && document.querySelector('.model-test[role="alert"]').textContent.includes('could not be reached')`)
	b.shot("admin-models-test-failed")
	b.axe("admin, models test failed")

	// Saved: the working endpoint again, a context window and a model id.
	b.setField(`input[name="model-base_url"]`, keyed.url)
	b.setField(`input[name="model-max_context"]`, "32768")
	b.setField(`input[name="model-max_output"]`, "")
	b.do("save", chromedp.Click(chromedp.Search(`//form[contains(@class,"model-form")]//button[@type="submit"]`)))
	b.until("saved and listed", `!!document.querySelector('.model-form [role="status"]') && document.querySelector('tr[data-model="keyed"]').textContent.includes('32768')`)
	var cur struct {
		LLM struct {
			Default string                    `json:"default"`
			Models  map[string]map[string]any `json:"models"`
		} `json:"llm"`
	}
	get := func() {
		t.Helper()
		r := restDo(t, "GET", s.url+"/wunder/admin/llm", "", nil)
		if err := json.NewDecoder(r.Body).Decode(&cur); err != nil {
			t.Fatal(err)
		}
	}
	get()
	k := cur.LLM.Models["keyed"]
	if k["max_context"] != 32768.0 || k["base_url"] != keyed.url || k["api_key"] != config.Mask || k["model"] != "keyed-model" || cur.LLM.Default != "fake" {
		t.Fatalf("keyed after the save: %v (default %q)", k, cur.LLM.Default)
	}
	r := restDo(t, "POST", s.url+"/wunder/admin/llm/test", `{"model_name":"keyed"}`, nil)
	var res map[string]any
	_ = json.NewDecoder(r.Body).Decode(&res)
	if res["ok"] != true || keyed.lastAuth() != "Bearer "+secret {
		t.Fatalf("the saved model's test: %v with %q; want ok with the stored key", res, keyed.lastAuth())
	}

	// A model added in the form, with a key typed in, made the default.
	b.do("add a model", chromedp.Click(chromedp.Search(`//button[text()="Add a model"]`)), chromedp.WaitVisible(chromedp.CSS(`input[name="model-name"]`)))
	b.until("an empty form", `document.querySelector('input[name="model-name"]').value === ''`)
	b.do("name it", chromedp.SendKeys(chromedp.CSS(`input[name="model-name"]`), "second"))
	b.eval(`(() => { const s = document.querySelector('select[name="model-provider"]'); s.value = 'local'; s.dispatchEvent(new Event('change', {bubbles: true})); return '' })()`)
	b.do("its settings",
		chromedp.SendKeys(chromedp.CSS(`input[name="model-base_url"]`), keyed.url),
		chromedp.SendKeys(chromedp.CSS(`input[name="model-model"]`), "second-model"),
		chromedp.SendKeys(chromedp.CSS(`input[name="model-api-key"]`), "sk-new"),
		chromedp.Click(chromedp.CSS(`input[name="model-default"]`)),
	)
	b.do("test it", chromedp.Click(chromedp.CSS(`button.test-connection`)))
	b.until("the model's answer", `!!document.querySelector('.model-test[data-ok="true"]')`)
	if got := keyed.lastAuth(); got != "Bearer sk-new" {
		t.Errorf("the new model's test sent %q; want the key typed", got)
	}
	b.do("save it", chromedp.Click(chromedp.Search(`//form[contains(@class,"model-form")]//button[@type="submit"]`)))
	b.until("listed as the default", `document.querySelector('tr[data-model="second"]')?.textContent.includes('default')`)
	get()
	if sec := cur.LLM.Models["second"]; cur.LLM.Default != "second" || sec["model"] != "second-model" || sec["api_key"] != config.Mask || sec["provider"] != "local" {
		t.Fatalf("second after the save: %v (default %q)", sec, cur.LLM.Default)
	}
	if b.eval(`String([...document.querySelectorAll('textarea,input')].some(i => i.value.includes('sk-new')))`) != "false" {
		t.Error("the page still shows the key typed after the save")
	}
	b.clean()
}
