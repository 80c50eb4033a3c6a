package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wunder/wunder/orchestrator"
)

// The workspace quota (Options.MaxBytesPerUser, config
// workspace.max_bytes_per_user): the bytes of the regular files in one
// user's workspace — every file, denied ones and the tools' own (.wunder/)
// included; a file with several hard links counted once; directories and
// symlinks count nothing. Each write that makes the workspace grow asks
// first ([quota.reserve]) and is refused before a byte is written when
// the growth would take it over the quota; one that keeps or shrinks it
// always may, so a full workspace can still be trimmed. Commands are
// bounded in quota_watch.go.
//
// Knowing the usage must be cheap: a walk of a workspace of 10,000 files
// takes milliseconds, and a busy user writes many times a second. So each
// workspace keeps an account: the bytes last measured, plus the growth of
// every write since, plus what writes in flight have reserved. It is
// measured again
//
//   - at its first use, and when older than quotaMaxAge (something outside
//     the tools may have changed it: another replica, the janitor);
//   - at the end of every command (quota_watch.go), and after anything
//     else the account cannot follow: an entry removed, a copy cut short
//     (the account is then dirty until its next use);
//   - while a command runs, when older than quotaRecheck;
//   - before a refusal, when older than quotaRecheck, so a figure that
//     still counts deleted files never refuses a write.
//
// The count is conservative where it cannot be exact: a write's temporary
// file coexists with the file it replaces, and a measure may see a write's
// file and then count its growth again; both last until the next measure.

const (
	// quotaKey names the quota in every refusal.
	quotaKey = "workspace.max_bytes_per_user"
	// quotaMaxAge is how long a measure is trusted when nothing else says
	// it is stale.
	quotaMaxAge = time.Minute
	// quotaRecheck is how old a measure may be to refuse a write, or to be
	// used while a command may be changing the workspace.
	quotaRecheck = 2 * time.Second
	// maxAccounts bounds the accounts kept; past it an idle one is dropped
	// (and measured again at its next use).
	maxAccounts = 4096
)

// QuotaError refuses a change that would take a workspace over its quota.
// Nothing was written. It wraps [orchestrator.ErrPermissionDenied]; front-
// ends that answer it in their own way (the gateway: 413 quota_exceeded)
// find it by its QuotaExceeded method.
type QuotaError struct {
	// Used is what the workspace holds, with the writes in flight.
	Used int64
	// Adding is the growth refused (at least this much, for a stream).
	Adding int64
	// Limit is the quota.
	Limit int64
}

func (e *QuotaError) Error() string {
	if e.Adding <= 0 { // found over it (a command wrote past it)
		return fmt.Sprintf("workspace quota exceeded: the workspace holds %s, over its quota of %s (%s); "+
			"writes are refused until files are deleted", formatSize(e.Used), formatSize(e.Limit), quotaKey)
	}
	return fmt.Sprintf("workspace quota exceeded: the workspace holds %s and this would add %s, over its quota of %s (%s); "+
		"nothing was written: delete files to make room", formatSize(e.Used), formatSize(e.Adding), formatSize(e.Limit), quotaKey)
}

// Unwrap makes the refusal a permission denial for callers that know only
// the core's sentinels.
func (e *QuotaError) Unwrap() error { return orchestrator.ErrPermissionDenied }

// QuotaExceeded marks the error as a quota refusal.
func (e *QuotaError) QuotaExceeded() bool { return true }

// quota keeps one account per workspace directory (its real path). A nil
// or zero-limit quota allows everything and measures nothing.
type quota struct {
	limit int64

	mu       sync.Mutex
	accounts map[string]*account // guarded by mu
}

// account is one workspace's usage.
type account struct {
	mu       sync.Mutex
	measured bool      // bytes holds a measure (plus growth since)
	bytes    int64     // what the workspace holds
	reserved int64     // promised to writes in flight
	at       time.Time // when measured
	dirty    bool      // changed in a way the account did not follow
	running  int       // commands in flight in the workspace
}

func newQuota(limit int64) *quota {
	return &quota{limit: limit, accounts: make(map[string]*account)}
}

func (q *quota) on() bool { return q != nil && q.limit > 0 }

// account returns dir's account, making it on first use.
func (q *quota) account(dir string) *account {
	q.mu.Lock()
	defer q.mu.Unlock()
	if a, ok := q.accounts[dir]; ok {
		return a
	}
	if len(q.accounts) >= maxAccounts {
		for k, a := range q.accounts {
			// TryLock: an account in use is not idle; skip it.
			if a.mu.TryLock() {
				idle := a.reserved == 0 && a.running == 0
				a.mu.Unlock()
				if idle {
					delete(q.accounts, k)
					break
				}
			}
		}
	}
	a := &account{}
	q.accounts[dir] = a
	return a
}

// refresh measures the account when it cannot be trusted (see the file's
// doc), or when it is older than maxAge. The caller holds a.mu.
func (a *account) refresh(ctx context.Context, dir string, maxAge time.Duration) error {
	if a.running > 0 {
		maxAge = min(maxAge, quotaRecheck)
	}
	if a.measured && !a.dirty && time.Since(a.at) <= maxAge {
		return nil
	}
	return a.measure(ctx, dir)
}

// measure walks dir into the account. The caller holds a.mu.
func (a *account) measure(ctx context.Context, dir string) error {
	at := time.Now()
	n, err := measureDir(ctx, dir)
	if err != nil {
		return err
	}
	a.bytes, a.at, a.measured, a.dirty = n, at, true, false
	return nil
}

// reservation is room promised to one write; done settles it.
type reservation struct {
	q    *quota
	a    *account // nil when the quota is off
	dir  string
	n    int64 // reserved so far
	once sync.Once
}

// reserve promises n more bytes in dir's workspace to a write, or refuses
// with a *QuotaError when that would take the workspace over its quota.
// n <= 0 (a write that does not grow the workspace) is never refused.
func (q *quota) reserve(ctx context.Context, dir string, n int64) (*reservation, error) {
	r := &reservation{q: q, dir: dir}
	if !q.on() {
		return r, nil
	}
	r.a = q.account(dir)
	if err := r.grow(ctx, max(n, 0)); err != nil {
		return nil, err
	}
	return r, nil
}

// grow adds n bytes to the reservation, or refuses them (and keeps what it
// had).
func (r *reservation) grow(ctx context.Context, n int64) error {
	a := r.a
	if a == nil || n <= 0 {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.refresh(ctx, r.dir, quotaMaxAge); err != nil {
		return fmt.Errorf("workspace quota: %w", err)
	}
	if a.bytes+a.reserved+n > r.q.limit && time.Since(a.at) > quotaRecheck {
		if err := a.measure(ctx, r.dir); err != nil {
			return fmt.Errorf("workspace quota: %w", err)
		}
	}
	if a.bytes+a.reserved+n > r.q.limit {
		return &QuotaError{Used: a.bytes + a.reserved, Adding: n, Limit: r.q.limit}
	}
	a.reserved += n
	r.n += n
	return nil
}

// done settles the reservation: the write changed the workspace by delta
// bytes (0 when it failed and left nothing). Only the first call counts.
func (r *reservation) done(delta int64) {
	r.once.Do(func() {
		if a := r.a; a != nil {
			a.mu.Lock()
			a.reserved -= r.n
			a.bytes += delta
			a.mu.Unlock()
		}
	})
}

// changed marks dir's account as not knowing what dir holds (an entry
// removed, a copy cut short): the next use measures it.
func (q *quota) changed(dir string) {
	if !q.on() {
		return
	}
	a := q.account(dir)
	a.mu.Lock()
	a.dirty = true
	a.mu.Unlock()
}

// used is what dir's workspace holds, measured if the account is stale.
func (q *quota) used(ctx context.Context, dir string) (int64, error) {
	if !q.on() {
		return 0, nil
	}
	a := q.account(dir)
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.refresh(ctx, dir, quotaMaxAge); err != nil {
		return 0, err
	}
	return a.bytes, nil
}

// quotaReader counts a stream into a reservation: the first free bytes
// replace the old file's and cost nothing, the rest grows the reservation,
// and a growth the quota refuses ends the stream with its *QuotaError.
type quotaReader struct {
	ctx     context.Context
	r       io.Reader
	res     *reservation
	free    int64
	written int64
	err     error // the quota's refusal, if any
}

func (q *quotaReader) Read(p []byte) (int, error) {
	n, err := q.r.Read(p)
	k := int64(n)
	if use := min(k, q.free); use > 0 {
		q.free -= use
		k -= use
	}
	if k > 0 {
		if gerr := q.res.grow(q.ctx, k); gerr != nil {
			q.err = gerr
			return 0, gerr
		}
	}
	q.written += int64(n)
	return n, err
}

// measureDir adds up the sizes of the regular files under dir, each
// hard-linked file once. It walks by descriptors: every directory is
// opened relative to its parent's descriptor without following a symlink
// (openat, O_NOFOLLOW) and every file is looked at relative to it
// (fstatat, AT_SYMLINK_NOFOLLOW), so a directory swapped for a symlink
// during the walk is not followed out, and no name is refused (io/fs's
// walks skip a directory whose name is not UTF-8, which would hide what it
// holds from the quota).
func measureDir(ctx context.Context, dir string) (int64, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return 0, nil
	}
	if err != nil {
		return 0, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	m := &measurer{ctx: ctx}
	err = m.walk(fd)
	return m.total, err
}

// measurer is one walk of measureDir.
type measurer struct {
	ctx    context.Context
	total  int64
	linked map[[2]uint64]bool // files with more than one link, counted
}

// walk counts the directory open at fd, and closes it.
func (m *measurer) walk(fd int) error {
	d := os.NewFile(uintptr(fd), "")
	defer d.Close()
	for {
		entries, err := d.ReadDir(512)
		for _, e := range entries {
			if cerr := m.ctx.Err(); cerr != nil {
				return cerr
			}
			switch t := e.Type(); {
			case t.IsDir():
				sub, err := unix.Openat(fd, e.Name(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
				if err != nil {
					continue // gone, or no longer a directory
				}
				if err := m.walk(sub); err != nil {
					return err
				}
			case t.IsRegular():
				m.file(fd, e.Name())
			}
		}
		if errors.Is(err, io.EOF) || (err == nil && len(entries) == 0) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// file counts the regular file name in the directory open at fd.
func (m *measurer) file(fd int, name string) {
	var st unix.Stat_t
	if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return
	}
	if st.Nlink > 1 {
		k := [2]uint64{st.Dev, st.Ino}
		if m.linked[k] {
			return
		}
		if m.linked == nil {
			m.linked = make(map[[2]uint64]bool)
		}
		m.linked[k] = true
	}
	m.total += st.Size
}

// quotaOf returns err's *QuotaError, if it is one.
func quotaOf(err error) (*QuotaError, bool) {
	var q *QuotaError
	ok := errors.As(err, &q)
	return q, ok
}
