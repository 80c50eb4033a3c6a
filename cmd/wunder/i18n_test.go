package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/config"
)

// GET /wunder/i18n answers without credentials; a request's language is
// resolved through the aliases, and without one Accept-Language chooses
// the prompt's language by its q-values.
func TestLanguages(t *testing.T) {
	s := startServer(t, func(c *config.Config) {
		c.Security.APIKey = "k"
		c.I18n.Aliases = map[string]string{"zh-CN": "zh", "mandarin": "zh"}
	})
	resp, err := http.Get(s.url + "/wunder/i18n")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var got struct {
		Default   string            `json:"default_language"`
		Supported []string          `json:"supported_languages"`
		Aliases   map[string]string `json:"aliases"`
	}
	if err := json.Unmarshal(b, &got); err != nil || resp.StatusCode != 200 || got.Default != "en" ||
		len(got.Supported) != 2 || got.Aliases["zh-cn"] != "zh" || resp.Header.Get("Content-Language") != "en" {
		t.Fatalf("GET /wunder/i18n without credentials: %d %s %+v", resp.StatusCode, b, resp.Header)
	}

	chinese := func(prompt string) bool { return strings.ContainsAny(prompt, "你的工具是") }
	prompt := func(body string, hdr ...string) (int, string) {
		code, out := adminDo(t, s, "POST", "/wunder/system_prompt", body, hdr...)
		p, _ := out["prompt"].(string)
		return code, p
	}
	cases := []struct {
		name, body, accept string
		zh                 bool
	}{
		{"no language", `{"user_id":"alice"}`, "", false},
		{"zh", `{"user_id":"alice","language":"zh"}`, "", true},
		{"alias zh-CN", `{"user_id":"alice","language":"zh-CN"}`, "", true},
		{"alias, any case", `{"user_id":"alice","language":"MANDARIN"}`, "", true},
		{"primary subtag", `{"user_id":"alice","language":"en-NZ"}`, "", false},
		{"Accept-Language zh first", `{"user_id":"alice"}`, "zh-TW,zh;q=0.9,en;q=0.8", true},
		{"Accept-Language by q", `{"user_id":"alice"}`, "en;q=0.4, zh-CN;q=0.9", true},
		{"Accept-Language unsupported", `{"user_id":"alice"}`, "fr-FR, de;q=0.5", false},
		{"the field beats the header", `{"user_id":"alice","language":"en"}`, "zh", false},
	}
	for _, c := range cases {
		var hdr []string
		if c.accept != "" {
			hdr = []string{"Accept-Language", c.accept}
		}
		code, p := prompt(c.body, hdr...)
		if code != 200 || chinese(p) != c.zh {
			t.Errorf("%s: %d, Chinese prompt = %v, want %v", c.name, code, chinese(p), c.zh)
		}
	}
	if code, _ := prompt(`{"user_id":"alice","language":"klingon"}`); code != 400 {
		t.Errorf("an unknown language: %d, want 400", code)
	}
}
