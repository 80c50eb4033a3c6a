// Package edge holds the process-level tests of wunder's edge: the real
// binary (internal/testutil/wunderproc, built without the race detector)
// attacked as a hostile client would attack it, with the server's peak
// memory read from /proc. Each test proves a refusal and that the server
// stays up within its memory bound; docs/security.md's threat table names
// the limit behind each.
package edge
