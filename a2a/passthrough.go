package a2a

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/orchestrator"
)

// The A2A pass-through: a peer agent published behind wunder at
// {Path}/{peer}, with wunder's identity, policy and audit in front of it.
//
//	POST {Path}/{peer}                            JSON-RPC (1.0 and 0.3), forwarded to the peer's JSON-RPC interface of that version
//	{Path}/{peer}/v1/...                          HTTP+JSON (1.0), forwarded to the peer's HTTP+JSON interface
//	GET  {Path}/{peer}/.well-known/agent-card.json  the peer's card, its interfaces rewritten to these URLs
//	gRPC, tenant "peers/{peer}"                   the gRPC binding (passthrough_grpc.go), forwarded to the peer's JSON-RPC 1.0 interface
//
// Each request is identified as wunder's own are (tenant.go), decided by
// the one policy point as a call of the tool a2a@{peer}
// (PassThroughOptions.Policy) and audited; it is checked against the
// owners of the tasks and contexts it names (passthrough_owner.go), since
// the peer sees one caller, wunder; and forwarded (passthrough_forward.go)
// with the peer's credentials, its own ids, params and results unchanged
// but for the tenant, which is wunder's (it names the user) and is
// replaced by the tenant of the peer's interface. Push notification
// configs and the extended card are refused.

// PassThroughOptions publish peers under {Path}/{peer}.
type PassThroughOptions struct {
	// Peers finds a published peer by name.
	Peers Peers
	// Policy decides and audits each call (*orchestrator.Orchestrator).
	Policy Policy
	// IDs keeps who owns the tasks and contexts made at a peer.
	IDs PeerIDStore
	// Card rewrites a peer's card for r's client: wunder's URLs for the
	// bindings forwarded, wunder's security schemes, wunder's signature
	// (agentcard.Handler.PeerCard). Required.
	Card func(r *http.Request, peer string, card json.RawMessage) (json.RawMessage, error)
	// MaxHops bounds a chain of pass-throughs (a peer published through
	// itself is a loop). Default 8.
	MaxHops int
	// CardTTL is how long a peer's card is kept. Default one minute.
	CardTTL time.Duration
}

// Peers finds the peers published at {Path}/{peer}; cmd/wunder backs it
// with adapters/a2atools.
type Peers interface {
	Peer(name string) (*Peer, bool)
}

// Peer is a published peer agent.
type Peer struct {
	Name string
	// Card reads the peer's card as it serves it to a client asking for
	// version ("" = none), checked as its service says.
	Card func(ctx context.Context, version string) (json.RawMessage, error)
	// Header goes with every request to the peer (its credentials).
	Header http.Header
	HTTP   *http.Client
	// Timeout bounds a call, and the wait for a stream's next event.
	Timeout time.Duration
	// Config identifies the peer's configuration (a comparable value,
	// such as a pointer): a card kept for another is read again, so a
	// reconfigured peer is reached where its card now says. nil: the
	// name alone.
	Config any
}

// Policy is the one policy point and its audit
// (*orchestrator.Orchestrator).
type Policy interface {
	DecideTool(ctx context.Context, c orchestrator.ToolCheck) orchestrator.Decision
	RecordToolCall(l *orchestrator.ToolLog)
}

// PeerIDStore keeps who owns the ids of tasks and contexts made at a peer
// through the pass-through; the first claim of an id wins. An id may
// expire some time after its last use (storage.Store: with
// storage.a2a_peer_id_retention_days); it is then no one's, as an id
// wunder never saw. storage.Store implements it; [MemoryPeerIDStore] is
// an in-memory one.
type PeerIDStore interface {
	// ClaimPeerIDs records userID as the owner of each id (of the kind at
	// the same index: "task", "context") at peer unless someone already
	// is, and returns the owners, in order; at once, so that a new task and
	// its context cost one write. A claim of one's own id is a use of it.
	ClaimPeerIDs(ctx context.Context, peer, userID string, kinds, ids []string) ([]string, error)
	// PeerIDOwners returns the owners of those ids someone claimed.
	// usedBy, when not "", is the user the look-up is for: those of the
	// ids it owns are used.
	PeerIDOwners(ctx context.Context, peer, kind string, ids []string, usedBy string) (map[string]string, error)
}

// hopsHeader counts the pass-throughs a request went through.
const hopsHeader = "X-Wunder-A2A-Hops"

// passThrough serves the published peers.
type passThrough struct {
	h    *Handler
	opts PassThroughOptions

	// mu guards cards.
	mu    sync.Mutex
	cards map[cardKey]*peerCard
}

func newPassThrough(h *Handler, o PassThroughOptions) *passThrough {
	if o.MaxHops <= 0 {
		o.MaxHops = 8
	}
	if o.CardTTL <= 0 {
		o.CardTTL = time.Minute
	}
	return &passThrough{h: h, opts: o, cards: map[cardKey]*peerCard{}}
}

// route finds the peer a path under {Path}/ is for: its name and the
// rest of the path ("" for the JSON-RPC endpoint). ok is false when the
// first segment is no published peer's.
func (p *passThrough) route(path string) (peer *Peer, sub string, ok bool) {
	rest, under := strings.CutPrefix(path, p.h.opts.Path+"/")
	if !under {
		return nil, "", false
	}
	name, sub, _ := strings.Cut(rest, "/")
	if name == "" {
		return nil, "", false
	}
	peer, ok = p.opts.Peers.Peer(name)
	return peer, sub, ok
}

// serve answers a request for a published peer.
func (p *passThrough) serve(rw http.ResponseWriter, r *http.Request, peer *Peer, sub string) {
	switch {
	case sub == "":
		p.serveJSONRPC(rw, r, peer)
	case sub == strings.TrimPrefix(w.WellKnownCardPath, "/"):
		p.serveCard(rw, r, peer)
	case strings.HasPrefix(sub, "v1/"):
		p.serveREST(rw, r, peer, strings.TrimPrefix(sub, "v1/"))
	default:
		writeRESTStatus(rw, http.StatusNotFound, "NOT_FOUND", "no A2A route "+r.Method+" "+r.URL.Path, nil)
	}
}

// passCall is one request for a peer.
type passCall struct {
	call
	peer  *Peer
	start time.Time
	// owner is who owns what the call makes: the user it acts for, or
	// the default user for an admin naming none (c.userID "").
	owner string
	// sent is what the peer is sent to read the ids from: the JSON-RPC
	// params, or the HTTP+JSON body (rules checks that it reads as
	// wunder reads it).
	sent []byte
}

// tool is the policy's name of the peer: the tool a2a@{peer}.
func (pc *passCall) tool() string { return "a2a@" + pc.peer.Name }

// admit identifies the call and asks the policy; a refusal is the error
// to answer with, audited.
func (p *passThrough) admit(r *http.Request, pc *passCall) error {
	if err := p.h.identify(r, &pc.call); err != nil {
		return err
	}
	pc.owner = p.h.actor(&pc.call)
	return p.decide(r.Context(), pc, true)
}

// decide asks the policy whether the call's user may use a2a@{peer};
// with audit, a refusal is recorded.
func (p *passThrough) decide(ctx context.Context, pc *passCall, audit bool) error {
	// The spec of the tool a2a@{peer} (adapters/a2atools): read-only, so
	// approval modes alone do not stop it; approvals.tools may.
	spec := &orchestrator.ToolSpec{Name: pc.tool(), Source: "a2a", ReadOnly: true}
	d := p.opts.Policy.DecideTool(ctx, orchestrator.ToolCheck{UserID: pc.owner, Tool: pc.tool(), Spec: spec, Via: orchestrator.ViaPassthrough})
	if d.Allowed() {
		return nil
	}
	reason := d.Reason
	if d.Verdict == orchestrator.VerdictNeedsApproval {
		reason = "it waits for a person's approval (" + d.Reason + "), and the pass-through cannot wait: call " + pc.tool() + " in a run, where approvals are asked"
	}
	if audit {
		p.audit(pc, orchestrator.OutcomeDenied, reason)
	}
	return errKind(orchestrator.ErrPermissionDenied, "permission denied: %s", reason)
}

// audit records the call: its method and params (left out past
// maxAuditArgs), how it went, and how long it took.
func (p *passThrough) audit(pc *passCall, outcome, reason string) {
	args, _ := json.Marshal(map[string]any{"method": pc.m.Method, "params": pc.m.Params})
	if len(args) > maxAuditArgs {
		args, _ = json.Marshal(map[string]string{"method": pc.m.Method})
	}
	p.opts.Policy.RecordToolCall(&orchestrator.ToolLog{UserID: pc.owner, Tool: pc.tool(), Arguments: args,
		FrontEnd: orchestrator.FrontendA2A, Via: orchestrator.ViaPassthrough, Outcome: outcome, Reason: reason,
		DurationMS: time.Since(pc.start).Milliseconds()})
}

// maxAuditArgs bounds the arguments an audit record keeps.
const maxAuditArgs = 4000

// refuse answers a call refused before it went to the peer.
func (p *passThrough) refuse(rw http.ResponseWriter, pc *passCall, err error) {
	pc.fail(rw, p.h.toError(pc.r.Context(), pc.v, err))
}

// hops is the count of pass-throughs r came through; a chain as long as
// MaxHops is refused.
func (p *passThrough) hops(r *http.Request) (int, error) {
	n := 0
	if v := r.Header.Get(hopsHeader); v != "" {
		for _, c := range v {
			if c < '0' || c > '9' || n > 1000 {
				return 0, errParams("%s must be a small number", hopsHeader)
			}
			n = n*10 + int(c-'0')
		}
	}
	if n >= p.opts.MaxHops {
		return 0, errKind(w.ErrUnsupportedOperation, "the request went through %d A2A pass-throughs: a loop? (a peer published through itself)", n)
	}
	return n, nil
}
