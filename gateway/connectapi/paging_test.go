package connectapi_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/wunder/wunder/gateway/connectapi"
	"github.com/wunder/wunder/orchestrator"
)

func TestPageTokenRoundTrip(t *testing.T) {
	last := &orchestrator.Session{ID: "sess_b", UpdatedAt: time.Date(2026, 11, 27, 10, 0, 0, 123456000, time.UTC)}
	tok := connectapi.NextToken(20, last)
	size, p, err := connectapi.DecodePage(20, tok)
	want := orchestrator.Page{Limit: 21, After: &orchestrator.PageKey{At: last.UpdatedAt, ID: "sess_b"}}
	if err != nil || size != 20 || !reflect.DeepEqual(p, want) {
		t.Fatalf("DecodePage(NextToken(20, %v)) = %d, %+v, %v; want 20, %+v", last, size, p, err, want)
	}
	if _, _, err := connectapi.DecodePage(20, tok, "another filter"); err == nil {
		t.Error("a token decoded for a listing with another filter")
	}
	// A token issued before keyset pages (v1: an offset) still reads.
	if size, p, err := connectapi.DecodePage(20, connectapi.OffsetToken(60)); err != nil || size != 20 || p.Offset != 60 || p.After != nil {
		t.Fatalf("DecodePage(v1 token at 60) = %d, %+v, %v", size, p, err)
	}
	if size, _, _ := connectapi.DecodePage(0, ""); size != 50 {
		t.Errorf("default page size %d", size)
	}
	if size, _, _ := connectapi.DecodePage(10000, ""); size != 500 {
		t.Errorf("capped page size %d", size)
	}
}

// Page tokens are untrusted bytes: any input decodes to a valid page or an
// error, never a panic or a negative offset.
func FuzzPageToken(f *testing.F) {
	f.Add(int32(2), connectapi.NextToken(2, &orchestrator.Session{ID: "s", UpdatedAt: time.Unix(1, 0)}))
	f.Add(int32(2), connectapi.OffsetToken(4))
	f.Add(int32(0), "")
	f.Add(int32(-1), "djEuLTEuMA")
	f.Add(int32(5), "%%%")
	f.Fuzz(func(t *testing.T, size int32, token string) {
		s, p, err := connectapi.DecodePage(size, token)
		if err != nil {
			return
		}
		if s <= 0 || s > 500 || p.Offset < 0 || p.Limit != s+1 || (p.After != nil && p.After.ID == "") {
			t.Fatalf("DecodePage(%d, %q) = %d, %+v", size, token, s, p)
		}
	})
}

func TestHandlersCoverReflectionVersions(t *testing.T) {
	h := connectapi.New(nil, nil).Handlers()
	for _, p := range []string{
		"/wunder.v1.RunService/", "/wunder.v1.SessionService/", "/wunder.v1.ToolService/",
		"/grpc.health.v1.Health/", "/grpc.reflection.v1.ServerReflection/", "/grpc.reflection.v1alpha.ServerReflection/",
	} {
		if h[p] == nil {
			t.Errorf("no handler for %s", p)
		}
	}
}

// Tool-call arguments come from model output: any bytes convert to a Struct
// (or nil for nothing) without a panic, and a JSON object keeps its keys.
func FuzzObject(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[true,null,"x"]}`, `[1,2]`, `"str"`, `null`, ``, `{"a":`, `{"n":1e400}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		s := connectapi.Object(raw)
		var m map[string]any
		if json.Unmarshal(raw, &m) == nil && m != nil && s != nil {
			if _, isRaw := s.GetFields()["_raw"]; !isRaw && len(s.GetFields()) != len(m) {
				t.Fatalf("%s -> %v", raw, s)
			}
		}
	})
}
