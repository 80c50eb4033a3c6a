// Package a2a is wunder's A2A front-end: JSON-RPC 2.0 on one endpoint
// (POST /a2a and /a2a/; other paths under /a2a/ are 404 but the HTTP+JSON
// binding's, see routes.go) serving both method sets, A2A 1.0 (SendMessage,
// SendStreamingMessage, GetTask, ListTasks, CancelTask, SubscribeToTask,
// the four TaskPushNotificationConfig methods, GetExtendedAgentCard) and
// 0.3 (message/send, message/stream, tasks/get, tasks/cancel,
// tasks/resubscribe, tasks/pushNotificationConfig/*,
// agent/getAuthenticatedExtendedCard). The method name picks the set; the
// A2A-Version header or query parameter (absent = 0.3) must agree, and an
// unknown version is -32009.
//
// It is thin (STYLE.md habit 3): decode with internal/a2awire, call the
// core through the consumer-defined [Backend], map the error with the one
// table in errors.go, encode in the caller's version.
//
// The mapping onto the core: a task is a run, contextId is a session (a
// client may name one; names are kept apart per user, context.go), and
// runs started here use orchestrator.CallerAgent. Streams start with the
// Task, carry status and artifact updates built from the run's event log
// (the answer is the artifact "answer" and the final status message), and
// end at the final event. A run's A2UI batches are artifacts of DataParts
// for a call that activates the A2UI extension, their text otherwise, and
// A2UI DataParts a client sends are actions the model reads (a2ui.go).
// SubscribeToTask replays the log from the start,
// so a client that reconnects loses nothing. JSON-RPC errors always travel
// with HTTP 200; in 1.0 their data is an array holding a
// google.rpc.ErrorInfo.
//
// The files and data parts of a message that starts a task become files of
// the caller's workspace ([Options.Files], files.go; a file by URL is
// fetched through the SSRF guard), and the client's message id travels
// with the run as its metadata ([MessageIDKey]).
//
// Tenants (tenant.go): the A2A 1.0 tenant of a request (the HTTP+JSON
// path prefix, the tenant field of JSON-RPC and gRPC params) names the
// user it acts for, as X-Wunder-User does, through Options.Tenants.
//
// The A2A pass-through (passthrough*.go): a peer agent published at
// {Path}/{peer} (Options.PassThrough) is served behind wunder's identity,
// the one policy point (the tool a2a@{peer}) and the audit; its card is
// rewritten to wunder's URLs, its JSON-RPC and HTTP+JSON calls forwarded
// with their ids, results and streams unchanged, and each user kept to
// the tasks and contexts they made there (PeerIDStore).
//
// Goroutines: streams run on their request's goroutine plus one heartbeat
// goroutine each, stopped before the handler returns. Push delivery runs
// one watcher per task that has configs, owned by the Handler and ended by
// [Handler.Close]; deliveries retry with backoff and pass an SSRF guard
// (checked when the config is created and again at connect time). A file
// part's URL is fetched on its request's goroutine, bounded in time.
//
//	gw.Mount("POST /a2a", a2a.New(orch, &a2a.Options{Push: &a2a.PushOptions{Store: st}}))
package a2a
