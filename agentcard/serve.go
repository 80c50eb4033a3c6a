package agentcard

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wunder/wunder/internal/a2awire"
)

// Path is where the card is served (the well-known path peers fetch).
const Path = a2awire.WellKnownCardPath

// refresh is how long a built card is served before the catalog is asked
// again (MCP servers and peers may come and go).
const refresh = time.Minute

// Handler serves the public card, pre-marshalled per base URL, with
// Cache-Control, ETag (If-None-Match gives 304) and CORS (the card is
// public: any origin may read it).
type Handler struct {
	cat  Catalog
	opts Options

	// mu guards cards.
	mu    sync.Mutex
	cards map[string]*built
}

type built struct {
	body []byte
	etag string
	at   time.Time
	// modified is when the card last changed (Last-Modified): a rebuild
	// that yields the same card keeps it.
	modified time.Time
}

// New returns the card handler.
func New(cat Catalog, opts *Options) *Handler {
	var o Options
	if opts != nil {
		o = *opts
	}
	return &Handler{cat: cat, opts: o.withDefaults(), cards: map[string]*built{}}
}

// maxBases bounds the per-host cache when the base URL comes from requests.
const maxBases = 32

func (h *Handler) get(ctx context.Context, base string, v a2awire.Version) (*built, error) {
	key := string(v) + " " + base // Unversioned: " " + base
	h.mu.Lock()
	b := h.cards[key]
	h.mu.Unlock()
	if b != nil && time.Since(b.at) < refresh {
		return b, nil
	}
	body, err := h.opts.signed(Build(ctx, h.cat, h.opts, base, h.opts.UserID, v))
	if err != nil {
		if b != nil {
			return b, nil // serve the last good card
		}
		return nil, err
	}
	sum := sha256.Sum256(body)
	now := time.Now()
	next := &built{body: body, etag: `"` + hex.EncodeToString(sum[:12]) + `"`, at: now, modified: now.UTC().Truncate(time.Second)}
	if b != nil && b.etag == next.etag {
		next.modified = b.modified
	}
	b = next
	h.mu.Lock()
	if len(h.cards) >= maxBases {
		clear(h.cards)
	}
	h.cards[key] = b
	h.mu.Unlock()
	return b, nil
}

// BaseURL is the configured public URL or the one the request reached.
func (h *Handler) BaseURL(r *http.Request) string {
	if h.opts.PublicURL != "" {
		return strings.TrimSuffix(h.opts.PublicURL, "/")
	}
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// ServeHTTP answers GET and HEAD (and CORS preflight).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Access-Control-Allow-Origin", "*")
	hd.Set("Access-Control-Expose-Headers", "ETag, Last-Modified")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodOptions:
		hd.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
		hd.Set("Access-Control-Allow-Headers", "Content-Type, If-None-Match, Authorization, A2A-Version")
		hd.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		hd.Set("Allow", "GET, HEAD, OPTIONS")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	v, ok := cardVersion(r)
	if !ok {
		// The HTTP+JSON binding's VersionNotSupported (its row of the
		// error table), the version echoed at most 32 bytes long.
		asked := requested(r)
		if len(asked) > 32 {
			asked = asked[:32] + "..."
		}
		st := a2awire.NewError(a2awire.V10, a2awire.CodeVersionNotSupported, "A2A-Version "+strconv.Quote(asked)+" is not supported; ask for 1.0 or 0.3").Status()
		hd.Set("Content-Type", "application/json")
		w.WriteHeader(st.Error.Code)
		_ = json.NewEncoder(w).Encode(st)
		return
	}
	b, err := h.get(r.Context(), h.BaseURL(r), v)
	if err != nil {
		http.Error(w, "agent card unavailable", http.StatusServiceUnavailable)
		return
	}
	hd.Set("Cache-Control", "public, max-age="+strconv.Itoa(h.opts.MaxAge))
	hd.Set("ETag", b.etag)
	hd.Set("Last-Modified", b.modified.Format(http.TimeFormat))
	hd.Set("Vary", "Host, A2A-Version")
	if notModified(r, b) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hd.Set("Content-Type", "application/json")
	hd.Set("Content-Length", strconv.Itoa(len(b.body)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(b.body)
	}
}

// notModified applies the conditional headers: If-None-Match when present
// (RFC 9110 section 13.2.2), else If-Modified-Since.
func notModified(r *http.Request, b *built) bool {
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		return strings.Contains(inm, b.etag) || strings.TrimSpace(inm) == "*"
	}
	if ims := r.Header.Get("If-Modified-Since"); ims != "" {
		t, err := http.ParseTime(ims)
		return err == nil && !b.modified.After(t)
	}
	return false
}

// Extended returns the authenticated extended card of a user in version
// v: the card with the skills of that user's whole catalog. It plugs into
// a2a.Options.ExtendedCard.
func (h *Handler) Extended(r *http.Request, userID string, v a2awire.Version) (json.RawMessage, error) {
	o := h.opts
	o.offered, o.ToolNames = o.ToolNames, nil // the whole catalog; what runs are offered still decides the extensions
	return o.signed(Build(r.Context(), h.cat, o, h.BaseURL(r), userID, v))
}

// cardVersion is the version of card a request asks for: its A2A-Version
// header, else its A2A-Version query parameter; Unversioned when it names
// none. ok is false for a version wunder does not speak.
//
// A request that names no version gets the union of both cards. The
// specification reads such a request as 0.3's (section 3.6.2), and 0.3
// clients, which send no version, read url and preferredTransport; 1.0
// clients that send none (a2a-go v2.4.0's resolver, @a2a-js 1.x) read
// supportedInterfaces. Only the union serves both. A 1.0 client that says
// so (A2A-Version: 1.0, as section 3.6.1 says it MUST) gets the 1.0 card,
// which validates against the 1.0 schema.
func cardVersion(r *http.Request) (a2awire.Version, bool) {
	hv := requested(r)
	if hv == "" {
		return Unversioned, true
	}
	return a2awire.ParseVersion(hv)
}

func requested(r *http.Request) string {
	if v := r.Header.Get(a2awire.VersionHeader); v != "" {
		return v
	}
	return r.URL.Query().Get(a2awire.VersionHeader)
}
