package i18n

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
)

// Every key exists in every language, and no language has a key English
// lacks.
func TestCatalogComplete(t *testing.T) {
	for _, lang := range Languages() {
		if len(messages[lang]) == 0 {
			t.Fatalf("catalog has no %s messages", lang)
		}
		for key := range messages[English] {
			if messages[lang][key] == "" {
				t.Errorf("key %q has no %s message", key, lang)
			}
		}
		for key := range messages[lang] {
			if _, ok := messages[English][key]; !ok {
				t.Errorf("key %q is in %s but not in en", key, lang)
			}
		}
	}
}

// Every 4xx and 5xx status net/http names has a title in every language.
func TestTitlesComplete(t *testing.T) {
	for _, lang := range Languages() {
		if lang == English {
			continue
		}
		for status := 400; status < 600; status++ {
			if http.StatusText(status) == "" && status != 499 {
				continue
			}
			if titles[lang][status] == "" {
				t.Errorf("status %d has no %s title", status, lang)
			}
		}
	}
	if got := Title(English, 499); got != "Client Closed Request" {
		t.Errorf("Title(en, 499) = %q", got)
	}
	if got := Title(English, 404); got != "Not Found" {
		t.Errorf("Title(en, 404) = %q", got)
	}
	if got := Title(Chinese, 404); got != "未找到" {
		t.Errorf("Title(zh, 404) = %q", got)
	}
}

func TestDetail(t *testing.T) {
	for _, tc := range []struct {
		lang, key, english string
		prefixes           []string
		want               string
	}{
		{"en", "not_found", "not found: run run_abc", []string{"not found"}, "not found: run run_abc"},
		{"", "not_found", "not found: run run_abc", []string{"not found"}, "not found: run run_abc"},
		{"zh", "not_found", "not found: run run_abc", []string{"not found"}, "未找到：run run_abc"},
		{"zh", "not_found", "not found", []string{"not found"}, "未找到"},
		{"zh", "missing_user_id", "user_id is required", nil, "缺少 user_id"},
		{"zh", "invalid_argument", "limit must be positive", []string{"invalid argument"}, "参数无效：limit must be positive"},
		{"zh", "no_such_key", "whatever", nil, "whatever"},
		{"fr", "not_found", "not found: x", []string{"not found"}, "not found: x"},
	} {
		if got := Detail(tc.lang, tc.key, tc.english, tc.prefixes...); got != tc.want {
			t.Errorf("Detail(%q, %q, %q) = %q, want %q", tc.lang, tc.key, tc.english, got, tc.want)
		}
	}
}

func TestContext(t *testing.T) {
	if got := FromContext(context.Background()); got != English {
		t.Errorf("FromContext(background) = %q, want en", got)
	}
	if got := FromContext(WithLanguage(context.Background(), Chinese)); got != Chinese {
		t.Errorf("FromContext(zh) = %q", got)
	}
}

// keyedErr is an error naming its sentence, as the core's KeyedError.
type keyedErr struct {
	msg, key string
	args     []any
}

func (e *keyedErr) Error() string               { return e.msg }
func (e *keyedErr) MessageKey() (string, []any) { return e.key, e.args }

// sameText wraps an error without adding text (a retry hint).
type sameText struct{ error }

func (e sameText) Unwrap() error { return e.error }

func TestErrorMessage(t *testing.T) {
	busy := &keyedErr{"busy: user alice already has a running run", "busy_user", []any{"alice"}}
	for _, tc := range []struct {
		name string
		err  error
		want string
		ok   bool
	}{
		{"keyed", busy, "忙碌中：用户 alice 已有正在进行的运行", true},
		{"wrapped without text", sameText{busy}, "忙碌中：用户 alice 已有正在进行的运行", true},
		{"wrapped with more text", fmt.Errorf("starting: %w", busy), "", false},
		{"unknown key", &keyedErr{"x", "no_such_key", nil}, "", false},
		{"not keyed", errors.New("busy: x"), "", false},
	} {
		got, ok := ErrorMessage(Chinese, tc.err)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	if got, _ := ErrorMessage(English, busy); got != busy.msg {
		t.Errorf("English: %q, want %q", got, busy.msg)
	}
}
