package agentcard_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/wunder/wunder/agentcard"
)

// The card answers the version a client asks for, by the A2A-Version
// header or query parameter: 1.0's when it names none (or 1.0, 1, 1.0.2),
// 0.3's for 0.3; a version wunder does not speak is 400. Each version has
// its own ETag, and a conditional GET is answered for the version asked:
// one version's ETag does not match the other's card.
func TestCardPerVersion(t *testing.T) {
	h := agentcard.New(tools, &agentcard.Options{APIKeyRequired: true, PublicURL: "https://a.example"})
	base := get(t, h, "GET", agentcard.Path)
	if base.Code != http.StatusOK {
		t.Fatalf("GET = %d", base.Code)
	}
	keys := func(b []byte) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	if k := keys(base.Body.Bytes()); k["supportedInterfaces"] == nil || k["url"] != nil || k["protocolVersion"] != nil {
		t.Fatalf("the card without a version is not 1.0's: %s", base.Body)
	}
	for _, ask := range [][]string{{"A2A-Version", "1.0"}, {"A2A-Version", "1"}, {"A2A-Version", "1.0.2"}, nil} {
		target := agentcard.Path
		if ask == nil {
			target += "?A2A-Version=1.0"
		}
		r := get(t, h, "GET", target, ask...)
		if r.Code != 200 || r.Body.String() != base.Body.String() || r.Header().Get("ETag") != base.Header().Get("ETag") {
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
	e10, e03 := base.Header().Get("ETag"), v03.Header().Get("ETag")
	if e10 == "" || e03 == "" || e10 == e03 {
		t.Fatalf("ETags 1.0 %q, 0.3 %q; want two", e10, e03)
	}
	for _, c := range []struct {
		version, etag string
		want          int
	}{
		{"", e10, http.StatusNotModified},
		{"1.0", e10, http.StatusNotModified},
		{"0.3", e03, http.StatusNotModified},
		{"0.3", e10, http.StatusOK},
		{"", e03, http.StatusOK},
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
	if cc := base.Header().Get("Cache-Control"); cc != "public, max-age=300" {
		t.Errorf("Cache-Control %q", cc)
	}
}
