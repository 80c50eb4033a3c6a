package main

import (
	"net/http"
	"sync"
	"testing"

	"connectrpc.com/connect"

	wunderv1 "github.com/wunder/wunder/gen/wunder/v1"
	"github.com/wunder/wunder/gen/wunder/v1/wunderv1connect"
)

// connectApprovalRows are the isolation matrix's rows of ListApprovals and
// Decide over one RPC protocol. Alice starts two runs with Run over that
// protocol (approval_mode suggest makes write_file ask) and reads each
// stream up to its approval_required; she decides the first, the others
// try the second, still pending. bob finds neither (NOT_FOUND), bob naming
// alice is PERMISSION_DENIED, the admin key naming alice decides.
func (f *fixture) connectApprovalRows(frontend string, opts []connect.ClientOption, h2c bool) []matrixRow {
	client := func(c caller) wunderv1connect.RunServiceClient {
		return wunderv1connect.NewRunServiceClient(&http.Client{Transport: headerRT{hdr: c.hdr, h2c: h2c}}, f.s.url, opts...)
	}
	type waiting struct{ runID, approvalID string }
	var once sync.Once
	var runs [2]waiting
	setup := func(t *testing.T) {
		once.Do(func() {
			alice := client(caller{hdr: bearerOf(f.alice)})
			for i := range runs {
				s, err := alice.Run(t.Context(), connect.NewRequest(&wunderv1.RunRequest{Question: "write a note",
					ToolNames: []string{"write_file"}, ApprovalMode: wunderv1.ApprovalMode_APPROVAL_MODE_SUGGEST}))
				if err != nil {
					t.Fatalf("alice's %s run %d: %v", frontend, i, err)
				}
				for s.Receive() {
					if ev := s.Msg().GetEvent(); ev.GetType() == "approval_required" {
						id, _ := ev.GetData().AsMap()["approval_id"].(string)
						runs[i] = waiting{runID: ev.GetRunId(), approvalID: id}
						break
					}
				}
				_ = s.Close()
				if runs[i].approvalID == "" {
					t.Fatalf("alice's %s run %d does not wait for an approval: %v", frontend, i, s.Err())
				}
			}
		})
	}
	std := [4]string{ok, denied, forbidden, ok}
	return []matrixRow{
		{frontend: frontend, resource: "approvals", action: "list", want: std,
			try: func(t *testing.T, c caller) string {
				setup(t)
				res, err := client(c).ListApprovals(t.Context(), connect.NewRequest(&wunderv1.ListApprovalsRequest{UserId: c.names, RunId: runs[0].runID}))
				if err != nil {
					return connectOutcome(err)
				}
				for _, a := range res.Msg.GetApprovals() {
					if a.GetApprovalId() == runs[0].approvalID {
						return ok
					}
				}
				return denied
			}},
		{frontend: frontend, resource: "approval", action: "decide", want: std,
			try: func(t *testing.T, c caller) string {
				setup(t)
				w := runs[1]
				if c.name == "alice" {
					w = runs[0]
				}
				_, err := client(c).Decide(t.Context(), connect.NewRequest(&wunderv1.DecideRequest{UserId: c.names, RunId: w.runID,
					ApprovalId: w.approvalID, Decision: wunderv1.Decision_DECISION_REJECT, Reason: "not now"}))
				if connect.CodeOf(err) == connect.CodeFailedPrecondition {
					return "FAILED_PRECONDITION (decided by someone else)" // would hide who decided
				}
				return connectOutcome(err)
			}},
	}
}
