package gateway

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"connectrpc.com/connect"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/wunder/wunder/internal/i18n"
)

// Cross-cutting HTTP concerns live here and only here, each as a
// func(http.Handler) http.Handler; identity travels on the context under
// unexported key types.

type ctxKey int

const (
	requestIDKey ctxKey = iota
	loggerKey
)

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

func logger(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey).(*slog.Logger); ok {
		return l
	}
	return slog.New(slog.DiscardHandler)
}

// withRequestID takes a sane X-Request-Id from the client or makes one, and
// puts it and a request-scoped logger on the context.
func withRequestID(base *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id := r.Header.Get("X-Request-Id")
			if id == "" || len(id) > 128 || strings.ContainsFunc(id, func(c rune) bool { return c < 0x21 || c > 0x7e }) {
				id = strings.ToLower(rand.Text())
			}
			w.Header().Set("X-Request-Id", id)
			ctx := context.WithValue(r.Context(), requestIDKey, id)
			log := base.With("request_id", id)
			// With tracing on, the request id goes on the request's span
			// and the trace id on its log lines.
			if span := trace.SpanFromContext(ctx); span.SpanContext().IsValid() {
				span.SetAttributes(attribute.String("wunder.request_id", id))
				log = log.With("trace_id", span.SpanContext().TraceID().String())
			}
			ctx = context.WithValue(ctx, loggerKey, log)
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

// statusWriter records the status for the access log. It forwards Flush and
// the rest through Unwrap, so http.ResponseController keeps working.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += int64(n)
	return n, err
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Flush lets code that type-asserts http.Flusher stream through us.
func (s *statusWriter) Flush() { _ = http.NewResponseController(s.ResponseWriter).Flush() }

// accessLog logs one line per request.
func accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		lvl := slog.LevelInfo
		switch {
		case sw.status == http.StatusServiceUnavailable:
			lvl = slog.LevelWarn // no model, a full queue, shutting down: not a bug
		case sw.status >= 500:
			lvl = slog.LevelError
		}
		logger(r.Context()).Log(r.Context(), lvl, "http", "method", r.Method, "path", r.URL.Path,
			"status", sw.status, "bytes", sw.bytes, "duration_ms", time.Since(start).Milliseconds())
	})
}

// recoverPanics turns a handler panic into a 500 problem; the process lives.
func recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				logger(r.Context()).ErrorContext(r.Context(), "handler panicked", "panic", p, "stack", string(debug.Stack()))
				writeProblem(w, r, http.StatusInternalServerError, "internal", internalDetail(r, i18n.English))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// limitBody caps request bodies at n, or at the route's own limit for the
// paths in routes; decodeJSON reports the overflow as 413.
func limitBody(def func() int64, routes map[string]int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n := def()
			if l, ok := routes[r.URL.Path]; ok {
				n = l
			}
			if r.ContentLength > n {
				writeProblem(w, r, http.StatusRequestEntityTooLarge, "body_too_large", "the body is larger than "+strconv.FormatInt(n, 10)+" bytes")
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, n)
			next.ServeHTTP(w, r)
		})
	}
}

// routeBodyLimit gives the exact path its own body limit (an upload
// route's), instead of MaxBodyBytes. Call it while registering routes.
func (s *Server) routeBodyLimit(path string, n int64) {
	if s.bodyLimits == nil {
		s.bodyLimits = map[string]int64{}
	}
	s.bodyLimits[path] = n
}

// CORSOptions configure cross-origin access; no origins means CORS is off.
type CORSOptions struct {
	AllowOrigins     []string
	AllowMethods     []string
	AllowHeaders     []string
	AllowCredentials bool
}

func cors(get func() *corsPolicy) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c := get()
			if c == nil {
				next.ServeHTTP(w, r)
				return
			}
			o := c.o
			origin := r.Header.Get("Origin")
			allowed := origin != "" && (slices.Contains(o.AllowOrigins, "*") || slices.Contains(o.AllowOrigins, origin))
			if allowed {
				h := w.Header()
				h.Add("Vary", "Origin")
				if slices.Contains(o.AllowOrigins, "*") && !o.AllowCredentials {
					h.Set("Access-Control-Allow-Origin", "*")
				} else {
					h.Set("Access-Control-Allow-Origin", origin)
				}
				if o.AllowCredentials {
					h.Set("Access-Control-Allow-Credentials", "true")
				}
				h.Set("Access-Control-Expose-Headers", "X-Request-Id, X-Run-Id, X-Session-Id, Retry-After")
			}
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				if allowed {
					w.Header().Set("Access-Control-Allow-Methods", c.methods)
					w.Header().Set("Access-Control-Allow-Headers", c.headers)
					w.Header().Set("Access-Control-Max-Age", "600")
				}
				w.WriteHeader(http.StatusNoContent)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// corsPolicy is CORSOptions ready for the middleware; nil = CORS off.
type corsPolicy struct {
	o                CORSOptions
	methods, headers string
}

func newCORSPolicy(o CORSOptions) *corsPolicy {
	if len(o.AllowOrigins) == 0 {
		return nil
	}
	return &corsPolicy{o: o, methods: strings.Join(o.AllowMethods, ", "), headers: strings.Join(o.AllowHeaders, ", ")}
}

// isRPC recognises Connect, gRPC and gRPC-Web requests, which expect errors
// in their own shape rather than problem JSON.
func isRPC(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	return strings.HasPrefix(ct, "application/grpc") || strings.HasPrefix(ct, "application/connect+") ||
		r.Header.Get("Connect-Protocol-Version") != ""
}

// writeRPCUnauthenticated answers an RPC request with UNAUTHENTICATED in its
// protocol's error shape (Connect JSON, gRPC or gRPC-Web trailers), in the
// request's language.
func writeRPCUnauthenticated(w http.ResponseWriter, r *http.Request, detail string) {
	detail = localize(r, i18n.FromContext(r.Context()), "unauthenticated", detail)
	err := connect.NewError(connect.CodeUnauthenticated, errors.New(detail))
	if werr := connect.NewErrorWriter().Write(w, r, err); werr != nil {
		logger(r.Context()).DebugContext(r.Context(), "rpc error not written", "err", werr)
	}
}
