package main

import (
	"testing"

	"github.com/wunder/wunder/internal/evaluation"
)

// evalRows are the isolation matrix's rows of the load test and the
// capability evaluation: admin only, whatever user a caller names. The
// admin's load test runs (duration mode) from its start row to its stop
// row; the evaluation rows use a finished one-case run made here (its
// cancel is a 409: found, and already ended).
func (f *fixture) evalRows(t *testing.T) []matrixRow {
	var run evaluation.Run
	decodeInto(t, f.rest(t, "POST", "/wunder/admin/evaluation/start", `{"case_ids":["json-answer"]}`, adminKey), 202, &run)
	f.evalEvents(t, run.ID, nil) // to its end
	adminOnly := [4]string{forbidden, forbidden, forbidden, ok}
	row := func(resource, action, method, path, body string) matrixRow {
		return matrixRow{frontend: "REST", resource: resource, action: action, want: adminOnly,
			try: func(t *testing.T, c caller) string {
				p := path
				if c.names != "" {
					p += sep(p) + "user_id=" + c.names
				}
				return restOutcome(f.rest(t, method, p, body, c.hdr))
			}}
	}
	ev := "/wunder/admin/evaluation/"
	return []matrixRow{
		row("load test", "start", "POST", "/wunder/admin/throughput/start", `{"concurrency_list":[1],"duration_s":60}`),
		row("load test", "status", "GET", "/wunder/admin/throughput/status", ""),
		row("load test", "report", "GET", "/wunder/admin/throughput/report", ""),
		row("load test", "stop", "POST", "/wunder/admin/throughput/stop", ""),
		row("evaluation", "start", "POST", ev+"start", `{"case_ids":["json-answer"]}`),
		row("evaluation: cases", "list", "GET", ev+"cases", ""),
		row("evaluation: runs", "list", "GET", ev+"runs", ""),
		row("evaluation: run", "get", "GET", ev+run.ID, ""),
		row("evaluation: run", "follow (SSE)", "GET", ev+"stream/"+run.ID, ""),
		row("evaluation: run", "cancel", "POST", ev+run.ID+"/cancel", ""),
		row("evaluation: run", "delete", "DELETE", ev+run.ID, ""),
	}
}
