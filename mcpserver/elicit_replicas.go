package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/orchestrator"
)

// Elicitation across replicas. A wunder@run call of a 2025-11-25 client
// asks its approvals with elicitation/create on the call's stream, on the
// replica that serves the call; the client POSTs its answer, which a load
// balancer may send to another replica. Two things make that work:
//
//   - The server's own requests get ids unique across replicas
//     (replicaConn: "wunder-" and a random text, mapped back to the SDK
//     session's ids on the way in, and in notifications/cancelled on the
//     way out): two replicas' copies of one session never send the client
//     the same id.
//   - An elicitation/create of an approval is recorded in the session's
//     state (its wire id → run and approval) before it goes out. A replica
//     that receives an answer its own copy of the session did not ask
//     (answerElsewhere) looks it up there and decides the approval as the
//     session's user, as the asking replica would have. Approvals are
//     durable and decidable from any replica; the asking call follows the
//     run, withdraws its request when the approval is decided, and goes on.
//
// An answer that cannot be used (a decision not offered, arguments that
// are not a JSON object) is not asked again from the other replica: it is
// logged, and the approval stays pending for wunder@approve or the REST
// API.

// wirePrefix begins the ids of the server's own requests.
const wirePrefix = "wunder-"

// pendingElicit is an approval asked with elicitation/create, by the
// request's wire id, in the session's state.
type pendingElicit struct {
	Run      string `json:"run"`
	Approval string `json:"approval"`
}

// elicitKey carries an *elicitAsk on the context of an elicitation.
type elicitKey struct{}

// elicitAsk names the approval an elicitation asks; wire is set to the
// request's id once it was written.
type elicitAsk struct {
	run, approval string
	wire          string
}

// replicaTransport is the StreamableServerTransport of a session of
// /wunder/mcp, whose connection is a replicaConn.
type replicaTransport struct {
	*mcp.StreamableServerTransport
	h    *Handler
	conn *replicaConn
}

func (t *replicaTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.StreamableServerTransport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.conn = &replicaConn{Connection: c, h: t.h, sid: t.SessionID, wire: map[jsonrpc.ID]jsonrpc.ID{}, local: map[jsonrpc.ID]jsonrpc.ID{}}
	return t.conn, nil
}

// replicaConn gives the server's own requests ids unique across replicas.
type replicaConn struct {
	mcp.Connection
	h   *Handler
	sid string

	mu    sync.Mutex
	wire  map[jsonrpc.ID]jsonrpc.ID // wire id -> the SDK session's id
	local map[jsonrpc.ID]jsonrpc.ID // the SDK session's id -> wire id
}

func (c *replicaConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return c.Connection.Write(ctx, msg)
	}
	if req.IsCall() {
		wire, _ := jsonrpc.MakeID(wirePrefix + rand.Text())
		c.mu.Lock()
		c.wire[wire], c.local[req.ID] = req.ID, wire
		c.mu.Unlock()
		if ask, _ := ctx.Value(elicitKey{}).(*elicitAsk); ask != nil && req.Method == "elicitation/create" {
			ask.wire = wire.Raw().(string)
			c.h.setState(ctx, c.sid, func(st *sessionState) {
				if st.Elicits == nil {
					st.Elicits = map[string]pendingElicit{}
				}
				st.Elicits[ask.wire] = pendingElicit{Run: ask.run, Approval: ask.approval}
			})
		}
		out := *req
		out.ID = wire
		return c.Connection.Write(ctx, &out)
	}
	if req.Method == "notifications/cancelled" {
		var p map[string]json.RawMessage
		if json.Unmarshal(req.Params, &p) == nil {
			var raw any
			_ = json.Unmarshal(p["requestId"], &raw)
			if id, err := jsonrpc.MakeID(raw); err == nil {
				c.mu.Lock()
				wire, ok := c.local[id]
				if ok {
					delete(c.local, id)
					delete(c.wire, wire)
				}
				c.mu.Unlock()
				if ok {
					p["requestId"], _ = json.Marshal(wire.Raw())
					out := *req
					out.Params, _ = json.Marshal(p)
					return c.Connection.Write(ctx, &out)
				}
			}
		}
	}
	return c.Connection.Write(ctx, msg)
}

func (c *replicaConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil {
		c.mu.Lock()
		id, known := c.wire[resp.ID]
		if known {
			delete(c.wire, resp.ID)
			delete(c.local, id)
		}
		c.mu.Unlock()
		if known {
			in := *resp
			in.ID = id
			return &in, nil
		}
	}
	return msg, err
}

// asked reports whether this copy of the session sent the request id.
func (c *replicaConn) asked(id jsonrpc.ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.wire[id]
	return ok
}

// forgetElicit drops an elicitation's entry from the session's state once
// its call no longer waits for it.
func (h *Handler) forgetElicit(ctx context.Context, sid, wire string) {
	h.setState(ctx, sid, func(st *sessionState) { delete(st.Elicits, wire) })
}

// answeredElsewhere serves a POST that answers a request this replica's
// copy of session s did not send: an elicitation another replica asked,
// decided here (answerElsewhere); 202 and true. Any other POST is left
// for the transport, its body put back.
func (f *sessionFront) answeredElsewhere(w http.ResponseWriter, r *http.Request, s *localSession) bool {
	body, err := io.ReadAll(r.Body)
	r.Body = readCloser{io.MultiReader(bytes.NewReader(body), errReader{err}), r.Body}
	if err != nil || !bytes.Contains(body, []byte(`"`+wirePrefix)) {
		return false
	}
	msg, err := jsonrpc.DecodeMessage(body)
	resp, ok := msg.(*jsonrpc.Response)
	if err != nil || !ok {
		return false
	}
	wire, _ := resp.ID.Raw().(string)
	if !strings.HasPrefix(wire, wirePrefix) || s.conn.asked(resp.ID) {
		return false
	}
	f.answerElsewhere(r.Context(), s.id, wire, resp)
	w.WriteHeader(http.StatusAccepted)
	return true
}

// answerElsewhere decides the approval that the elicitation wire asked,
// with resp's answer, as the session's user.
func (f *sessionFront) answerElsewhere(ctx context.Context, sid, wire string, resp *jsonrpc.Response) {
	h := f.h
	log := h.opts.Logger.With("session", sid, "request", wire)
	rec, err := f.store.MCPSession(ctx, sid)
	if err != nil {
		log.Warn("an answer to another replica's request: no session", "err", err)
		return
	}
	e, ok := readState(rec.State).Elicits[wire]
	if !ok {
		return // not an elicitation of an approval, or its call no longer waits
	}
	if resp.Error != nil {
		log.Info("an elicitation another replica asked was refused", "err", resp.Error)
		return
	}
	user := rec.UserID
	if user == "" {
		user = h.opts.UserID
	}
	pending, err := h.b.Approvals(ctx, user, e.Run)
	if err != nil {
		log.Warn("an elicitation another replica asked: the run's approvals", "err", err)
		return
	}
	var a *orchestrator.Approval
	for _, p := range pending {
		if p.ID == e.Approval {
			a = p
		}
	}
	if a == nil || a.State != orchestrator.ApprovalPending {
		return // decided meanwhile
	}
	res := new(mcp.ElicitResult)
	if err := json.Unmarshal(resp.Result, res); err != nil {
		log.Warn("an elicitation another replica asked: the answer", "err", err)
		return
	}
	d, err := newApprovalForm(a, e.Run).decision(res)
	if err == nil {
		_, err = h.b.Decide(ctx, user, e.Run, a.ID, d)
	}
	if err != nil && !errors.Is(err, orchestrator.ErrConflict) {
		log.Warn("an elicitation another replica asked could not be used; the approval stays pending", "err", err)
		return
	}
	h.forgetElicit(ctx, sid, wire)
}

// errReader returns err, or io.EOF when it is nil.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	return 0, io.EOF
}
