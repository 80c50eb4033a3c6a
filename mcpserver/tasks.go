package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/orchestrator"
)

// wunder@run as an MCP task: the task is the run. Its id is the run's id,
// its status the run's state, its result the answer a plain wunder@run
// call gives, and every lookup is the caller's (another user's task id is
// not found). A task holds no state of its own: it lives in the store with
// its run, so it survives a restart and is served by any replica.
//
// Two revisions define tasks, differently:
//
//	                 2025-11-25 (sessions)             2026-07-28 (extension io.modelcontextprotocol/tasks)
//	offered          capabilities.tasks in initialize  capabilities.extensions in server/discover
//	                 execution.taskSupport "optional"
//	                 on wunder__run in tools/list
//	created when     tools/call has params.task        the request's clientCapabilities declare the
//	                                                   extension (the server decides: wunder__run is
//	                                                   always a task then)
//	tools/call says  {task: Task}                      {resultType: "task", ...Task}
//	tasks/get        Task                              Task + result (completed) / error (failed) /
//	                                                   inputRequests (input_required)
//	tasks/result     waits for the end; the result     -32601 (the result is in tasks/get)
//	                 of a plain call, _meta
//	                 related-task
//	input            elicitation/create on the         inputRequests in tasks/get, answered with
//	                 tasks/result stream (elicit.go),  tasks/update (the forms and the decisions of
//	                 or wunder@approve                 input.go), or wunder@approve
//	tasks/cancel     Task (cancelled); -32602 when     {} (idempotent)
//	                 the task had ended
//	tasks/list       the caller's tasks, paged         -32601
//	ttl, poll        ttl / pollInterval                ttlMs / pollIntervalMs
//
// Status: queued, running → working; waiting with pending approvals or
// questions → input_required; cancelling, cancelled →
// cancelled; finished → completed; failed → failed on 2025-11-25 (a tool
// result with isError), completed with that result on 2026-07-28 (failed
// is for JSON-RPC errors only). ttl is null: a run is kept until its
// session is deleted.
//
// go-sdk v1.8.0 knows no tasks. The tasks/* methods are custom methods
// of the SDK's server, served by tasksMiddleware with the request's
// principal; the results are types of this file. The SDK drops a
// tools/call's params.task, so taskHeaders, in front of the SDK's handler,
// moves it into _meta (metaTaskParam) on a 2025-11-25 session's request,
// and checks a 2026-07-28 tasks request's Mcp-Name against its taskId.
// Over stdio (no HTTP, no taskHeaders) 2025-11-25 offers no tasks.

// Tasks' wire names.
const (
	tasksExtension  = "io.modelcontextprotocol/tasks"
	metaRelatedTask = "io.modelcontextprotocol/related-task"
	metaImmediate   = "io.modelcontextprotocol/model-immediate-response"
	// metaTaskParam is where taskHeaders puts a 2025-11-25 tools/call's
	// params.task for the SDK's handler to keep.
	metaTaskParam = "io.github.wunder/task"
	// revisionTasks is the first revision with tasks (2025-11-25); from
	// protocolNoServerRequests on they are the extension.
	revisionTasks = "2025-11-25"
	// taskMarker, in a run's Metadata, says the run was started as a task
	// (tasks/get, tasks/list find only those).
	taskMarker = "mcp_task"
	// taskPollInterval is the polling interval a task suggests, in ms.
	taskPollInterval = 2000
	// taskListSize is how many tasks a page of tasks/list holds.
	taskListSize = 50
)

// The methods of tasks (all revisions); the revision says which it serves.
var taskMethods = []string{"tasks/get", "tasks/result", "tasks/cancel", "tasks/list", "tasks/update"}

// taskParams are the params of tasks/get, tasks/result, tasks/cancel and
// tasks/update (its inputResponses), and of tasks/list (its cursor).
type taskParams struct {
	mcp.ParamsBase
	TaskID         string               `json:"taskId,omitempty"`
	InputResponses mcp.InputResponseMap `json:"inputResponses,omitempty"`
	Cursor         string               `json:"cursor,omitempty"`
}

// addTaskMethods makes the SDK accept the tasks/* methods; tasksMiddleware
// serves them (it has the request's principal, which a custom method's
// handler is not given), so these handlers never run.
func (h *Handler) addTaskMethods(s *mcp.Server) {
	for _, m := range taskMethods {
		err := mcp.AddReceivingCustomMethod(s, m, func(context.Context, *mcp.ServerSession, *taskParams) (*resultV2, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: m + " was not served"}
		})
		if err != nil {
			panic(err) // the SDK knows no tasks/* method: cannot fail
		}
	}
}

// task is a task's state, as either revision writes it.
type task struct {
	id, status, message string
	created, updated    time.Time
}

// taskV1 is a Task of 2025-11-25.
type taskV1 struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           *int64 `json:"ttl"` // null: unlimited
	PollInterval  int    `json:"pollInterval,omitempty"`
}

// taskV2 is a Task of the 2026-07-28 extension.
type taskV2 struct {
	TaskID         string `json:"taskId"`
	Status         string `json:"status"`
	StatusMessage  string `json:"statusMessage,omitempty"`
	CreatedAt      string `json:"createdAt"`
	LastUpdatedAt  string `json:"lastUpdatedAt"`
	TTLMs          *int64 `json:"ttlMs"` // null: unlimited
	PollIntervalMs int    `json:"pollIntervalMs,omitempty"`
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

func (t task) v1() taskV1 {
	return taskV1{TaskID: t.id, Status: t.status, StatusMessage: t.message, CreatedAt: stamp(t.created), LastUpdatedAt: stamp(t.updated), PollInterval: taskPollInterval}
}

func (t task) v2() taskV2 {
	return taskV2{TaskID: t.id, Status: t.status, StatusMessage: t.message, CreatedAt: stamp(t.created), LastUpdatedAt: stamp(t.updated), PollIntervalMs: taskPollInterval}
}

// The results of the tasks. 2025-11-25: CreateTaskResult (createV1),
// GetTaskResult and CancelTaskResult (resultV1), ListTasksResult
// (listV1). 2026-07-28: CreateTaskResult (resultType task), GetTaskResult
// (with result, error or inputRequests) and the empty acknowledgements
// (resultType complete), all resultV2.
type (
	createV1 struct {
		mcp.ResultBase
		Task taskV1 `json:"task"`
	}
	resultV1 struct {
		mcp.ResultBase
		taskV1
	}
	listV1 struct {
		mcp.ResultBase
		Tasks      []taskV1 `json:"tasks"`
		NextCursor string   `json:"nextCursor,omitempty"`
	}
	resultV2 struct {
		mcp.ResultBase
		ResultType string `json:"resultType"`
		*taskV2
		Result        *mcp.CallToolResult `json:"result,omitempty"`
		Error         *jsonrpc.Error      `json:"error,omitempty"`
		InputRequests mcp.InputRequestMap `json:"inputRequests,omitempty"`
	}
)

// taskOf is the task of a run, its status per revision rev; pending is
// how many approvals it waits for.
func taskOf(r *orchestrator.Run, rev string, pending int) task {
	t := task{id: r.ID, created: r.CreatedAt, updated: r.CreatedAt}
	for _, at := range []*time.Time{r.StartedAt, r.FinishedAt} {
		if at != nil && at.After(t.updated) {
			t.updated = *at
		}
	}
	switch r.State {
	case orchestrator.RunWaitingApproval, orchestrator.RunWaitingInput:
		t.status, t.message = "input_required", fmt.Sprintf("The run waits for a person: %d decision(s) or answer(s).", pending)
		if pending == 0 {
			t.status, t.message = "working", "" // decided meanwhile: it goes on
		}
	case orchestrator.RunCancelling, orchestrator.RunCancelled:
		t.status = "cancelled"
	case orchestrator.RunFinished:
		t.status = "completed"
	case orchestrator.RunFailed:
		t.status, t.message = "failed", r.Error
		if rev >= protocolNoServerRequests {
			t.status = "completed" // a tool result with isError
		}
	default:
		t.status = "working"
	}
	return t
}

// relatedTask is the _meta of a message that belongs to task id
// (2025-11-25).
func relatedTask(id string) mcp.Meta {
	return mcp.Meta{metaRelatedTask: map[string]any{"taskId": id}}
}

// revisionOf is the revision of a request: its _meta's (2026-07-28), else
// its session's.
func revisionOf(req mcp.Request) string {
	if p := req.GetParams(); p != nil {
		if v, ok := p.GetMeta()[mcp.MetaKeyProtocolVersion].(string); ok {
			return v
		}
	}
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
		if p := ss.InitializeParams(); p != nil {
			return p.ProtocolVersion
		}
	}
	return ""
}

// declaresTasks reports whether a 2026-07-28 request's client capabilities
// declare the tasks extension.
func declaresTasks(caps *mcp.ClientCapabilities) bool {
	if caps == nil {
		return false
	}
	_, ok := caps.Extensions[tasksExtension]
	return ok
}

// overHTTP reports whether a request came over HTTP (through taskHeaders),
// not stdio.
func overHTTP(req mcp.Request) bool {
	e := req.GetExtra()
	return e != nil && e.Header != nil
}

// tasksMiddleware offers tasks (initialize, server/discover, tools/list),
// creates them (tools/call of wunder@run) and serves tasks/*.
func (h *Handler) tasksMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "initialize":
			res, err := next(ctx, method, req)
			if ir, ok := res.(*mcp.InitializeResult); ok && err == nil && ir.ProtocolVersion == revisionTasks && overHTTP(req) {
				return &tasksInitialize{ir}, nil
			}
			return res, err
		case "server/discover":
			res, err := next(ctx, method, req)
			if dr, ok := res.(*mcp.DiscoverResult); ok && err == nil && dr.Capabilities != nil {
				dr.Capabilities.AddExtension(tasksExtension, nil) // the SDK's copy
			}
			return res, err
		case "tools/list":
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil && revisionOf(req) == revisionTasks && overHTTP(req) {
				return &tasksToolList{lr, h.runName()}, nil
			}
			return res, err
		case "tools/call":
			if cr, ok := req.(*mcp.CallToolRequest); ok {
				if res, err, served := h.createTask(ctx, cr); served {
					return res, err
				}
			}
		case "tasks/get", "tasks/result", "tasks/cancel", "tasks/list", "tasks/update":
			sr, _ := req.(*mcp.ServerRequest[*taskParams])
			if sr == nil {
				break
			}
			if sr.Params == nil {
				sr.Params = &taskParams{}
			}
			return h.serveTask(ctx, method, sr)
		}
		return next(ctx, method, req)
	}
}

// createTask serves a tools/call that asks for a task, and reports whether
// it did: one with params.task on 2025-11-25 (moved into _meta by
// taskHeaders), and a call of wunder@run whose 2026-07-28 client declares
// the extension. It starts the run (DeliverTask: its ids at once, the
// answer whole) and answers with the task, working; the run is stored
// before the answer, so tasks/get finds it on any replica.
func (h *Handler) createTask(ctx context.Context, req *mcp.CallToolRequest) (mcp.Result, error, bool) {
	rev, lang := revisionOf(req), h.langOf(req.Extra)
	if rev >= protocolNoServerRequests {
		if req.Params.Name != h.runName() || req.Params.RequestState != "" || !declaresTasks(req.ClientCapabilities()) {
			return nil, nil, false
		}
	} else {
		if _, asked := req.Params.Meta[metaTaskParam]; !asked || rev != revisionTasks {
			return nil, nil, false
		}
		if req.Params.Name != h.runName() {
			// 2025-11-25: a tool without taskSupport called as a task.
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("tool %q does not support tasks (only %s does)", req.Params.Name, h.runName())}, true
		}
	}
	var in RunInput
	if len(req.Params.Arguments) > 0 {
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, invalidParams(lang, "arguments: "+err.Error()), true
		}
	}
	if in.Task == "" {
		return nil, invalidParams(lang, "task is required"), true
	}
	run, err := h.startRun(ctx, req, in, orchestrator.DeliverTask, map[string]string{taskMarker: "1"})
	if err != nil {
		res, _, rpcErr := failed(lang, err)
		if rpcErr != nil {
			return nil, rpcErr, true
		}
		return res, nil, true // as the plain call answers it: no task was made
	}
	t := taskOf(run, rev, 0)
	t.status, t.message = "working", "" // a task begins working
	if rev >= protocolNoServerRequests {
		v2 := t.v2()
		return &resultV2{ResultType: "task", taskV2: &v2}, nil, true
	}
	res := &createV1{Task: t.v1()}
	res.Meta = mcp.Meta{metaImmediate: fmt.Sprintf("wunder runs the task as task %s; its result comes when the run ends.", run.ID)}
	return res, nil, true
}

// taskNotFound is the error of a task id the caller has no task of: none,
// another user's, or a run not started as a task.
func taskNotFound(lang, id string) error {
	return invalidParams(lang, fmt.Sprintf("Failed to retrieve task: task %q not found", id))
}

// serveTask serves a tasks/* method as the caller.
func (h *Handler) serveTask(ctx context.Context, method string, req *mcp.ServerRequest[*taskParams]) (mcp.Result, error) {
	rev, lang, user := revisionOf(req), h.langOf(req.Extra), h.userOf(req.Extra)
	v2 := rev >= protocolNoServerRequests
	switch {
	case v2 && (method == "tasks/result" || method == "tasks/list"):
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("%s is not part of the tasks extension: the result is in tasks/get", method)}
	case v2 && !declaresTasks(req.ClientCapabilities()):
		data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{tasksExtension: map[string]any{}}}})
		return nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: "Missing required client capability: " + tasksExtension, Data: data}
	case !v2 && (rev != revisionTasks || method == "tasks/update" || !overHTTP(req)):
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method %q not found at revision %s", method, rev)}
	}
	if method == "tasks/list" {
		return h.listTasks(ctx, user, lang, req.Params.Cursor)
	}
	id := req.Params.TaskID
	if id == "" {
		return nil, invalidParams(lang, "taskId is required")
	}
	run, err := h.b.GetRun(ctx, user, id) // as the caller: another user's run is not found
	switch {
	case errors.Is(err, orchestrator.ErrNotFound), errors.Is(err, orchestrator.ErrInvalidArgument),
		err == nil && (run.Spec == nil || run.Spec.Metadata[taskMarker] == ""):
		return nil, taskNotFound(lang, id)
	case err != nil:
		_, rpcErr := toolError(lang, err)
		return nil, cmpErr(rpcErr, err)
	}
	switch method {
	case "tasks/get":
		return h.getTask(ctx, req, run, rev)
	case "tasks/result":
		return h.taskAnswer(ctx, req, run)
	case "tasks/cancel":
		return h.cancelTask(ctx, user, lang, run, rev)
	default: // tasks/update
		return h.updateTask(ctx, user, lang, run, req.Params.InputResponses)
	}
}

// cmpErr is rpcErr, else err as an internal error.
func cmpErr(rpcErr, err error) error {
	if rpcErr != nil {
		return rpcErr
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

// pendingOf lists a waiting run's pending approvals.
func (h *Handler) pendingOf(ctx context.Context, user string, run *orchestrator.Run) ([]*orchestrator.Approval, error) {
	if !run.State.Waiting() {
		return nil, nil
	}
	f := &follower{h: h, user: user, runID: run.ID}
	return f.pending(ctx)
}

// getTask is tasks/get: the task; on 2026-07-28 with what its status
// carries (inputRequests, result, error).
func (h *Handler) getTask(ctx context.Context, req *mcp.ServerRequest[*taskParams], run *orchestrator.Run, rev string) (mcp.Result, error) {
	user, lang := h.userOf(req.Extra), h.langOf(req.Extra)
	pending, err := h.pendingOf(ctx, user, run)
	if err != nil {
		_, rpcErr := toolError(lang, err)
		return nil, cmpErr(rpcErr, err)
	}
	t := taskOf(run, rev, len(pending))
	if rev < protocolNoServerRequests {
		return &resultV1{taskV1: t.v1()}, nil
	}
	v2 := t.v2()
	res := &resultV2{ResultType: "complete", taskV2: &v2}
	switch t.status {
	case "input_required":
		res.InputRequests = approvalRequests(run.ID, pending, nil)
	case "completed", "failed":
		ans, err := h.taskAnswer(ctx, req, run)
		var rpcErr *jsonrpc.Error
		switch {
		case errors.As(err, &rpcErr):
			v2.Status, v2.StatusMessage, res.Error = "failed", rpcErr.Message, rpcErr
		case err != nil:
			return nil, err
		default:
			res.Result = ans.(*mcp.CallToolResult)
			res.Result.Meta = nil // no related-task here: taskId is the task's
		}
	}
	return res, nil
}

// taskAnswer is tasks/result (and a 2026-07-28 tasks/get's result): the
// answer a plain wunder@run call gives, read with the core's Wait. It
// waits for the run's end; on the way a 2025-11-25 caller that can be
// asked decides the run's approvals by elicitation (elicit.go), related
// to the task; a caller that leaves leaves the run running.
func (h *Handler) taskAnswer(ctx context.Context, req *mcp.ServerRequest[*taskParams], run *orchestrator.Run) (mcp.Result, error) {
	call := &mcp.CallToolRequest{Session: req.Session, Extra: req.Extra, Params: &mcp.CallToolParamsRaw{Name: h.runName()}}
	f := &follower{h: h, req: call, user: h.userOf(req.Extra), runID: run.ID, sessionID: run.SessionID, task: run.ID}
	if run.State.Terminal() && run.LastSeq > 0 {
		f.from = run.LastSeq - 1 // the final event is the last
	}
	res, out, err := f.follow(ctx)
	if err != nil {
		return nil, err
	}
	if b, err := json.Marshal(out); err == nil { // as the SDK fills a typed tool's result
		res.StructuredContent = json.RawMessage(b)
	}
	res.Meta = relatedTask(run.ID)
	return res, nil
}

// cancelTask is tasks/cancel: the run is cancelled as the caller.
// 2025-11-25 answers the task (cancelled), and -32602 for a task that had
// ended; 2026-07-28 answers an empty result either way.
func (h *Handler) cancelTask(ctx context.Context, user, lang string, run *orchestrator.Run, rev string) (mcp.Result, error) {
	c, err := h.b.Cancel(ctx, user, run.ID)
	switch {
	case err == nil:
		run = c
	case errors.Is(err, orchestrator.ErrConflict): // it had ended
		if rev >= protocolNoServerRequests {
			return &resultV2{ResultType: "complete"}, nil
		}
		if c != nil {
			run = c
		}
		return nil, invalidParams(lang, fmt.Sprintf("Cannot cancel task: already in terminal status '%s'", taskOf(run, rev, 0).status))
	default:
		_, rpcErr := toolError(lang, err)
		return nil, cmpErr(rpcErr, err)
	}
	if rev >= protocolNoServerRequests {
		return &resultV2{ResultType: "complete"}, nil
	}
	t := taskOf(run, rev, 0)
	t.status, t.message = "cancelled", "The task was cancelled by request."
	return &resultV1{taskV1: t.v1()}, nil
}

// updateTask is tasks/update (2026-07-28): the answers to the task's
// inputRequests decide its run's approvals as the caller (input.go's
// decisions); a key that is no pending approval is ignored. An answer
// that cannot be used is invalid params naming it, its approval still
// pending.
func (h *Handler) updateTask(ctx context.Context, user, lang string, run *orchestrator.Run, answers mcp.InputResponseMap) (mcp.Result, error) {
	pending, err := h.pendingOf(ctx, user, run)
	if err == nil {
		var problems map[string]string
		problems, _, err = h.decideAnswers(ctx, user, run.ID, pending, answers)
		for id, p := range problems {
			return nil, invalidParams(lang, fmt.Sprintf("inputResponses[%q]: %s", id, p))
		}
	}
	if err != nil {
		_, rpcErr := toolError(lang, err)
		return nil, cmpErr(rpcErr, err)
	}
	return &resultV2{ResultType: "complete"}, nil
}

// listTasks is tasks/list (2025-11-25): the caller's runs started as
// tasks, newest first, paged by the core's one cursor. It reads the
// caller's runs a page at a time and keeps the tasks; after
// taskListScan pages without enough it answers the tasks found so far,
// with a cursor after the last run read.
func (h *Handler) listTasks(ctx context.Context, user, lang, cursor string) (mcp.Result, error) {
	pg, err := orchestrator.NewPager("cursor", cursor, taskListSize, "mcp_tasks", user)
	if err != nil {
		_, rpcErr := toolError(lang, err)
		return nil, cmpErr(rpcErr, err)
	}
	var tasks []*orchestrator.Run
	after := pg.Page.After
	for range taskListScan {
		runs, err := h.b.ListRuns(ctx, orchestrator.RunFilter{UserID: user, Page: orchestrator.Page{Limit: pg.Page.Limit, After: after}})
		if err != nil {
			_, rpcErr := toolError(lang, err)
			return nil, cmpErr(rpcErr, err)
		}
		for _, r := range runs {
			if r.Spec != nil && r.Spec.Metadata[taskMarker] != "" {
				tasks = append(tasks, r)
			}
		}
		if len(runs) < pg.Page.Limit || len(tasks) > pg.Size {
			after = nil
			break
		}
		after = orchestrator.RunKey(runs[len(runs)-1])
	}
	page, next := orchestrator.CutPage(pg, tasks, orchestrator.RunKey)
	if after != nil && next == "" { // scanned out before the list's end
		next = pg.Cursor(after)
	}
	res := &listV1{Tasks: make([]taskV1, len(page)), NextCursor: next}
	for i, r := range page {
		res.Tasks[i] = taskOf(r, revisionTasks, 0).v1()
	}
	return res, nil
}

// taskListScan bounds the pages of runs one tasks/list reads.
const taskListScan = 10
