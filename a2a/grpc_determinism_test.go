package a2a_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"testing"

	"connectrpc.com/connect"
	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/protobuf/proto"

	"github.com/wunder/wunder/a2a"
)

// rawFrame is a gRPC stream message kept as the bytes the server wrote.
type rawFrame struct{ b []byte }

// rawCodec marshals requests as protobuf and keeps responses as bytes.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(m any) ([]byte, error) { return proto.Marshal(m.(proto.Message)) }

func (rawCodec) Unmarshal(b []byte, m any) error {
	f, ok := m.(*rawFrame)
	if !ok {
		return fmt.Errorf("rawCodec: %T", m)
	}
	f.b = bytes.Clone(b)
	return nil
}

// One event read by two subscribers is the same bytes: the gRPC binding
// writes map entries (a DataPart's Struct) in key order, not in Go's
// random map order (TCK STREAM-ORDER-003 compares the bytes).
func TestGRPCStreamBytesAreDeterministic(t *testing.T) {
	e := newEnv(t, nil)
	res, err := sdkClient(t, e).SendMessage(t.Context(), userMsg("#deploy"))
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*sdk.Task)
	if task.Status.State != sdk.TaskStateInputRequired {
		t.Fatalf("task %s; want input-required", task.Status.State)
	}
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true) // gRPC over h2c, as wunder serves it
	read := func() [][]byte {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel() // the subscription goes on to the task's end; two events are enough
		c := connect.NewClient[a2apb.SubscribeToTaskRequest, rawFrame](&http.Client{Transport: tr},
			e.url+a2a.GRPCServicePath+"SubscribeToTask", connect.WithGRPC(), connect.WithCodec(rawCodec{}))
		req := connect.NewRequest(&a2apb.SubscribeToTaskRequest{Id: string(task.ID)})
		req.Header().Set("A2A-Version", "1.0")
		st, err := c.CallServerStream(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		var out [][]byte
		for len(out) < 2 && st.Receive() {
			out = append(out, st.Msg().b)
		}
		if len(out) != 2 {
			t.Fatalf("subscription: %d messages (%v); want the task and its input-required status", len(out), st.Err())
		}
		return out
	}
	first := read()
	for i := range 5 {
		again := read()
		for j := range first {
			if !bytes.Equal(first[j], again[j]) {
				t.Fatalf("read %d, message %d: the bytes differ from the first read's", i+2, j)
			}
		}
	}
	// The status's input message carries a DataPart (a Struct with
	// several keys), so the comparison above is over a map.
	var ev a2apb.StreamResponse
	if err := proto.Unmarshal(first[1], &ev); err != nil {
		t.Fatal(err)
	}
	parts := ev.GetStatusUpdate().GetStatus().GetMessage().GetParts()
	if len(parts) < 2 || len(parts[1].GetData().GetStructValue().GetFields()) < 3 {
		t.Fatalf("input-required status parts %v; want a data part of several fields", parts)
	}
}
