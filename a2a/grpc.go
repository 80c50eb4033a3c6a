package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"time"

	"connectrpc.com/connect"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/internal/a2ui"
)

// The gRPC binding of A2A 1.0: the spec's A2AService (lf.a2a.v1, with the
// message types of a2a-go's a2apb) served through connect-go, so gRPC,
// gRPC-Web and Connect clients all work on the main port. A request message
// in ProtoJSON is exactly the JSON-RPC 1.0 params of the method of the same
// name, so each RPC goes through the one dispatcher as that method; its
// result (ProtoJSON) becomes the response message, its stream items
// StreamResponses, its errors Connect errors with the gRPC code of a2a-go's
// table and the ErrorInfo (and RetryInfo) as details.

// GRPCServiceName is the A2A gRPC service, as reflection lists it.
const GRPCServiceName = "lf.a2a.v1.A2AService"

// GRPCServicePath is the path prefix of the A2A gRPC service.
const GRPCServicePath = "/" + GRPCServiceName + "/"

// grpcResult collects a call's outcome (call.grpc): the response message
// its result fills, or its error.
type grpcResult struct {
	// out is the response message of a unary call; nil for a stream.
	out proto.Message
	err *w.Error
	// bug is why err is an internal error, for the log.
	bug error
}

// errNoFit is a result or stream item that does not fit its message: a
// bug of wunder's own, a peer's bad answer through the pass-through.
var errNoFit = errors.New("the result does not fit its gRPC message")

// errStreamFailed stops a stream whose error the sink took.
var errStreamFailed = errors.New("the stream failed")

// fill reads a result into the response message ("null": none).
func (g *grpcResult) fill(raw []byte) error {
	if g.out == nil || len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if err := decode.Unmarshal(raw, g.out); err != nil {
		return fmt.Errorf("%w: %w", errNoFit, err)
	}
	return nil
}

// GRPC returns the handler of the gRPC binding, to be mounted at
// GRPCServicePath behind the same authentication as JSON-RPC.
func (h *Handler) GRPC(opts ...connect.HandlerOption) http.Handler {
	mux := http.NewServeMux()
	opts = append([]connect.HandlerOption{connect.WithCodec(deterministicProto{})}, opts...)
	ms := w.Methods10
	unary[a2apb.SendMessageRequest, a2apb.SendMessageResponse](mux, h, ms.Send, opts)
	unary[a2apb.GetTaskRequest, a2apb.Task](mux, h, ms.Get, opts)
	unary[a2apb.ListTasksRequest, a2apb.ListTasksResponse](mux, h, ms.List, opts)
	unary[a2apb.CancelTaskRequest, a2apb.Task](mux, h, ms.Cancel, opts)
	unary[a2apb.TaskPushNotificationConfig, a2apb.TaskPushNotificationConfig](mux, h, ms.PushSet, opts)
	unary[a2apb.GetTaskPushNotificationConfigRequest, a2apb.TaskPushNotificationConfig](mux, h, ms.PushGet, opts)
	unary[a2apb.ListTaskPushNotificationConfigsRequest, a2apb.ListTaskPushNotificationConfigsResponse](mux, h, ms.PushList, opts)
	unary[a2apb.DeleteTaskPushNotificationConfigRequest, emptypb.Empty](mux, h, ms.PushDelete, opts)
	unary[a2apb.GetExtendedAgentCardRequest, a2apb.AgentCard](mux, h, ms.ExtendedCard, opts)
	serverStream[a2apb.SendMessageRequest](mux, h, ms.Stream, opts)
	serverStream[a2apb.SubscribeToTaskRequest](mux, h, ms.Subscribe, opts)
	return mux
}

// message is a generated message type: a pointer to T.
type message[T any] interface {
	*T
	proto.Message
}

// decode reads the dispatcher's ProtoJSON into a message.
var decode = protojson.UnmarshalOptions{DiscardUnknown: true}

func unary[Req, Res any, PReq message[Req], PRes message[Res]](mux *http.ServeMux, h *Handler, method string, opts []connect.HandlerOption) {
	proc := GRPCServicePath + method
	mux.Handle(proc, connect.NewUnaryHandler(proc, func(ctx context.Context, req *connect.Request[Req]) (*connect.Response[Res], error) {
		c, serve, err := h.grpcCall(ctx, req.Header(), method, PReq(req.Msg))
		if err != nil {
			return nil, err
		}
		out := new(Res)
		c.grpc = &grpcResult{out: PRes(out)}
		hdr := http.Header{}
		serve(hdr)
		if c.grpc.err != nil {
			if c.grpc.bug != nil {
				h.opts.Logger.ErrorContext(ctx, "a2a grpc: result does not fit its message", "method", method, "err", c.grpc.bug)
			}
			return nil, connectError(c.grpc.err)
		}
		res := connect.NewResponse(out)
		maps.Copy(res.Header(), hdr)
		return res, nil
	}, opts...))
}

func serverStream[Req any, PReq message[Req]](mux *http.ServeMux, h *Handler, method string, opts []connect.HandlerOption) {
	proc := GRPCServicePath + method
	mux.Handle(proc, connect.NewServerStreamHandler(proc, func(ctx context.Context, req *connect.Request[Req], st *connect.ServerStream[a2apb.StreamResponse]) error {
		c, serve, err := h.grpcCall(ctx, req.Header(), method, PReq(req.Msg))
		if err != nil {
			return err
		}
		c.grpc = &grpcResult{}
		var failed *w.Error
		c.sink = func(raw json.RawMessage, e *w.Error) error {
			if e != nil {
				failed = e
				return errStreamFailed
			}
			var sr a2apb.StreamResponse
			if err := decode.Unmarshal(raw, &sr); err != nil {
				return fmt.Errorf("%w: %w", errNoFit, err)
			}
			return st.Send(&sr)
		}
		serve(st.ResponseHeader()) // sent with the first message
		switch {
		case c.grpc.err != nil:
			return connectError(c.grpc.err)
		case failed != nil:
			return connectError(failed)
		}
		return nil
	}, opts...))
}

// grpcCall builds the 1.0 call an RPC stands for and returns it with
// serve, which answers it, setting the response's headers in hdr: as
// wunder's own (identified as JSON-RPC identifies its callers, the gateway
// having authenticated the request) or, when the request's tenant names a
// published peer (w.PeerTenantPrefix), through that peer's pass-through
// (passthrough_grpc.go).
func (h *Handler) grpcCall(ctx context.Context, hdr http.Header, method string, in proto.Message) (c *call, serve func(hdr http.Header), err error) {
	params, err := protojson.Marshal(in)
	if err != nil {
		return nil, nil, connect.NewError(connect.CodeInvalidArgument, err)
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, GRPCServicePath+method, http.NoBody)
	if err != nil {
		return nil, nil, connect.NewError(connect.CodeInternal, err)
	}
	r.Header = hdr.Clone()
	if err := onlyV10(r); err != nil {
		return nil, nil, connectError(h.toError(ctx, w.V10, err))
	}
	m := w.Request{JSONRPC: "2.0", ID: json.RawMessage("1"), Method: method, Params: params}
	if t, ok := in.(interface{ GetTenant() string }); ok && strings.HasPrefix(t.GetTenant(), w.PeerTenantPrefix) {
		return h.grpcPeerCall(r, m, strings.TrimPrefix(t.GetTenant(), w.PeerTenantPrefix))
	}
	c = &call{v: w.V10, r: r, rest: true, m: m}
	if err := h.identify(r, c); err != nil {
		return nil, nil, connectError(h.toError(ctx, c.v, err))
	}
	activate(c, nil) // the handlers name it in their response headers
	return c, func(hdr http.Header) {
		if c.a2ui {
			hdr.Set(ExtensionsHeader, a2ui.ExtensionURI)
		}
		h.dispatch(nil, c.r, c)
	}, nil
}

// connectError turns an A2A error into a Connect error with the gRPC code
// of its row of the error table and the ErrorInfo and RetryInfo of its
// data as details (a2a-go's gRPC client reads the reason from them;
// connect-go's codes are gRPC's numbers).
func connectError(e *w.Error) *connect.Error {
	ce := connect.NewError(connect.Code(e.Kind().GRPC), errors.New(e.Message))
	var details []struct {
		Type       string            `json:"@type"`
		Reason     string            `json:"reason"`
		Domain     string            `json:"domain"`
		Metadata   map[string]string `json:"metadata"`
		RetryDelay string            `json:"retryDelay"`
	}
	_ = json.Unmarshal(e.Data, &details)
	for _, d := range details {
		var m proto.Message
		switch d.Type {
		case "type.googleapis.com/google.rpc.ErrorInfo":
			m = &errdetails.ErrorInfo{Reason: d.Reason, Domain: d.Domain, Metadata: d.Metadata}
		case "type.googleapis.com/google.rpc.RetryInfo":
			after, err := time.ParseDuration(d.RetryDelay)
			if err != nil {
				continue
			}
			m = &errdetails.RetryInfo{RetryDelay: durationpb.New(after)}
		default:
			continue
		}
		if detail, err := connect.NewErrorDetail(m); err == nil {
			ce.AddDetail(detail)
		}
	}
	return ce
}

// deterministicProto is the binary codec of the gRPC binding: protobuf
// with map entries in key order (proto.MarshalOptions.Deterministic), so
// that one event sent to two subscribers, or read twice, is the same bytes
// on the wire (a DataPart's Struct is a map, which plain proto.Marshal
// writes in Go's random map order). A client that compares events by
// re-serializing them must still ask its own runtime for deterministic
// output (docs/a2a.md, the TCK's STREAM-ORDER-003).
type deterministicProto struct{}

func (deterministicProto) Name() string { return "proto" }

func (deterministicProto) Marshal(m any) ([]byte, error) {
	pm, ok := m.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("a2a grpc: %T is not a protobuf message", m)
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(pm)
}

func (deterministicProto) Unmarshal(b []byte, m any) error {
	pm, ok := m.(proto.Message)
	if !ok {
		return fmt.Errorf("a2a grpc: %T is not a protobuf message", m)
	}
	return proto.Unmarshal(b, pm)
}
