package agentcard_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/wunder/wunder/agentcard"
)

// The card answers the version a client asks for, by the A2A-Version
// header or query parameter: 1.0's for 1.0 (or 1, 1.0.2), 0.3's for 0.3,
// and the union of both when it names none (the specification reads that
// as 0.3, and 1.0 SDKs that send none read the 1.0 fields); a version
// wunder does not speak is 400. Each card has its own ETag, and a
// conditional GET is answered for the card asked for.
func TestCardPerVersion(t *testing.T) {
	h := agentcard.New(tools, &agentcard.Options{APIKeyRequired: true, PublicURL: "https://a.example"})
	keys := func(b []byte) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	union := get(t, h, "GET", agentcard.Path)
	if k := keys(union.Body.Bytes()); union.Code != 200 || k["supportedInterfaces"] == nil || k["url"] != "https://a.example/a2a" || k["protocolVersion"] != "0.3.0" {
		t.Fatalf("the card without a version is not the union: %d %s", union.Code, union.Body)
	}
	v10 := get(t, h, "GET", agentcard.Path, "A2A-Version", "1.0")
	if k := keys(v10.Body.Bytes()); v10.Code != 200 || k["supportedInterfaces"] == nil || k["url"] != nil || k["protocolVersion"] != nil || k["security"] != nil {
		t.Fatalf("A2A-Version: 1.0 = %d %s; want the 1.0 card", v10.Code, v10.Body)
	}
	for _, ask := range [][]string{{"A2A-Version", "1"}, {"A2A-Version", "1.0.2"}, nil} {
		target := agentcard.Path
		if ask == nil {
			target += "?A2A-Version=1.0"
		}
		r := get(t, h, "GET", target, ask...)
		if r.Code != 200 || r.Body.String() != v10.Body.String() || r.Header().Get("ETag") != v10.Header().Get("ETag") {
			t.Errorf("%v %s = %d, ETag %s; want the 1.0 card", ask, target, r.Code, r.Header().Get("ETag"))
		}
	}
	v03 := get(t, h, "GET", agentcard.Path, "A2A-Version", "0.3")
	k := keys(v03.Body.Bytes())
	if v03.Code != 200 || k["url"] != "https://a.example/a2a" || k["protocolVersion"] != "0.3.0" || k["supportedInterfaces"] != nil || k["security"] == nil {
		t.Fatalf("A2A-Version: 0.3 = %d %s; want the 0.3 card", v03.Code, v03.Body)
	}
	if q := get(t, h, "GET", agentcard.Path+"?A2A-Version=0.3"); q.Body.String() != v03.Body.String() {
		t.Errorf("?A2A-Version=0.3 differs from the header's card")
	}
	eu, e10, e03 := union.Header().Get("ETag"), v10.Header().Get("ETag"), v03.Header().Get("ETag")
	if eu == "" || e10 == "" || e03 == "" || eu == e10 || e10 == e03 || eu == e03 {
		t.Fatalf("ETags union %q, 1.0 %q, 0.3 %q; want three", eu, e10, e03)
	}
	for _, c := range []struct {
		version, etag string
		want          int
	}{
		{"", eu, http.StatusNotModified},
		{"1.0", e10, http.StatusNotModified},
		{"0.3", e03, http.StatusNotModified},
		{"0.3", e10, http.StatusOK},
		{"1.0", eu, http.StatusOK},
		{"", e10, http.StatusOK},
	} {
		hdr := []string{"If-None-Match", c.etag}
		if c.version != "" {
			hdr = append(hdr, "A2A-Version", c.version)
		}
		if r := get(t, h, "GET", agentcard.Path, hdr...); r.Code != c.want {
			t.Errorf("version %q If-None-Match %s = %d; want %d", c.version, c.etag, r.Code, c.want)
		}
	}
	for _, bad := range []string{"9.9", "0.2", "two", strings.Repeat("9", 100)} {
		r := get(t, h, "GET", agentcard.Path, "A2A-Version", bad)
		var st struct {
			Error struct {
				Code    int
				Message string
				Details []struct{ Reason string }
			}
		}
		err := json.Unmarshal(r.Body.Bytes(), &st)
		if r.Code != http.StatusBadRequest || err != nil || st.Error.Code != 400 || len(st.Error.Details) != 1 || st.Error.Details[0].Reason != "VERSION_NOT_SUPPORTED" || len(st.Error.Message) > 100 {
			t.Errorf("A2A-Version %.20s = %d %s; want 400 VERSION_NOT_SUPPORTED naming the version (bounded)", bad, r.Code, r.Body)
		}
	}
	if cc := union.Header().Get("Cache-Control"); cc != "public, max-age=300" {
		t.Errorf("Cache-Control %q", cc)
	}
}
