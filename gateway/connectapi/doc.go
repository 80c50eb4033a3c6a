// Package connectapi is the Connect front-end of wunder: the wunder.v1
// services (RunService, SessionService, ToolService; proto/wunder/v1) over
// the orchestration core, served by connect-go as Connect, gRPC and gRPC-Web
// from one handler per service, plus gRPC health (grpc.health.v1) and server
// reflection (v1 and v1alpha) so grpcurl and buf curl work without the
// .proto files.
//
// It is a thin front-end, like every other (DESIGN.md section 4): each
// method decodes its message, calls the core through [Backend] (which
// *orchestrator.Orchestrator satisfies), maps an error through the one
// table in errors.go to a connect.Code, and encodes the answer.
//
//	api := connectapi.New(orch, &connectapi.Options{Scope: gateway.ScopeOf})
//	api.MountOn(gatewayServer) // behind the gateway's middleware
//
// The handlers are mounted on the gateway, so they run behind its
// middleware (request id, access log, recovery, CORS, API key, body limit);
// the principal the gateway puts on the context reaches this package only
// through [Options.Scope]. Runs started here are agent callers
// (orchestrator.CallerAgent).
//
// Approvals (a person in the loop): a run's approval_required events flow
// through Run and Follow like any other event, and the stream stays open
// while the run waits; RunService.ListApprovals and RunService.Decide are
// the REST approval routes over Connect (approvals.go).
//
// Goroutines: none of its own. A Run or Follow stream ranges over
// Backend.Events on the request's goroutine; the run itself executes in the
// core, detached from the request, so a client that disconnects never stops
// a run.
package connectapi
