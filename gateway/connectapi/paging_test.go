package connectapi_test

import (
	"encoding/json"
	"testing"

	"github.com/wunder/wunder/gateway/connectapi"
)

func TestPageTokenRoundTrip(t *testing.T) {
	tok := connectapi.NextToken(20, 40)
	size, off, err := connectapi.DecodePage(20, tok)
	if err != nil || size != 20 || off != 60 {
		t.Fatalf("DecodePage(NextToken(20, 40)) = %d, %d, %v; want 20, 60", size, off, err)
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
	f.Add(int32(2), connectapi.NextToken(2, 0))
	f.Add(int32(0), "")
	f.Add(int32(-1), "djEuLTEuMA")
	f.Add(int32(5), "%%%")
	f.Fuzz(func(t *testing.T, size int32, token string) {
		s, off, err := connectapi.DecodePage(size, token)
		if err != nil {
			return
		}
		if s <= 0 || s > 500 || off < 0 {
			t.Fatalf("DecodePage(%d, %q) = %d, %d", size, token, s, off)
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
