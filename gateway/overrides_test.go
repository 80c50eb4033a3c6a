package gateway_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// config_overrides of POST /wunder: only the settings
// llm.request_overrides allows, each in its range; a refusal names the
// key and starts no run; what passes reaches the model's request.
func TestConfigOverrides(t *testing.T) {
	e := newEnv(t, envOpts{turns: []orchestratortest.Turn{{Content: "ok"}},
		gw: gateway.Options{RequestOverrides: []string{"temperature", "max_output", "max_rounds", "tool_call_mode"}}})
	strict := newEnv(t, envOpts{turns: []orchestratortest.Turn{{Content: "ok"}}, gw: gateway.Options{RequestOverrides: []string{"temperature"}}})
	ask := func(env *env, overrides string) *http.Response {
		return env.do(t, "POST", "/wunder", `{"user_id":"u","question":"q","stream":false,"config_overrides":`+overrides+`}`)
	}
	for _, tc := range []struct {
		env       *env
		overrides string
		mention   string
	}{
		{e, `{"colour":1}`, "config_overrides.colour is not a setting"},
		{strict, `{"max_rounds":2}`, "config_overrides.max_rounds is not allowed here"},
		{e, `{"temperature":2.01}`, "config_overrides.temperature must be a number from 0 to 2"},
		{e, `{"temperature":-0.1}`, "config_overrides.temperature"},
		{e, `{"temperature":"hot"}`, "config_overrides.temperature"},
		{e, `{"max_rounds":0}`, "config_overrides.max_rounds must be a whole number >= 1"},
		{e, `{"max_rounds":1.5}`, "config_overrides.max_rounds"},
		{e, `{"max_output":-3}`, "config_overrides.max_output"},
		{e, `{"tool_call_mode":"telepathy"}`, `config_overrides.tool_call_mode must be "tool_call" or "function_call"`},
		{e, `{"tool_call_mode":1}`, "config_overrides.tool_call_mode"},
		// Keys are checked in order: the first bad one is named.
		{e, `{"temperature":9,"colour":1}`, "config_overrides.colour"},
	} {
		p := wantProblem(t, ask(tc.env, tc.overrides), 400, "invalid_argument")
		if !strings.Contains(p.Detail, tc.mention) {
			t.Errorf("%s: detail %q lacks %q", tc.overrides, p.Detail, tc.mention)
		}
	}
	if n := len(e.model.Requests()) + len(strict.model.Requests()); n != 0 {
		t.Fatalf("refused overrides reached the model %d times", n)
	}
	if runs, _ := e.o.ListRuns(t.Context(), orchestrator.RunFilter{UserID: "u"}); len(runs) != 0 {
		t.Fatalf("refused overrides started %d runs", len(runs))
	}

	if r := ask(e, `{"temperature":0,"max_output":77,"tool_call_mode":"function_call","max_rounds":1}`); r.StatusCode != 200 {
		t.Fatalf("valid overrides = %d", r.StatusCode)
	}
	reqs := e.model.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests", len(reqs))
	}
	if got := reqs[0]; got.Temperature == nil || *got.Temperature != 0 || got.MaxOutput != 77 {
		t.Errorf("the model got temperature %v max_output %d; want 0 and 77", got.Temperature, got.MaxOutput)
	}
}
