package builtin

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// What a command writes is bounded by three things, none of which alone
// holds:
//
//   - Before it starts, its headroom (the quota less what the workspace
//     holds and what writes in flight reserved) becomes its RLIMIT_FSIZE
//     in the sandbox: no file can grow past it, so the fastest way to fill
//     a disk — one large file — stops there (SIGXFSZ, or EFBIG for a
//     program that handles it). A full workspace gives it 1 byte: the
//     command may still read, list and delete, so the model can make room.
//   - While it runs, a watcher reads the free space of the workspace's
//     file system every quotaTick (statfs: one system call, which sees
//     allocations at once, delayed ones included). When it has dropped by
//     more than the headroom since the last measure — the command may
//     have written that much, or other writers on the same disk did — or
//     quotaWalkEvery has passed, the watcher measures the workspace, and
//     kills the command if it is over the quota (or, when it started
//     over, holds more than it did then). A measure is a walk, so
//     the next one waits at least quotaWalkGap times the last one's cost:
//     the watcher spends at most about a tenth of one core on a workspace
//     that keeps it busy, and a hundred statfs calls a second on one that
//     does not.
//   - When it ends, the workspace is measured (one walk, as many
//     milliseconds as the workspace has thousands of files, about), and a
//     workspace over the quota is told to the model.
//
// What remains: a command that writes many files, each under its headroom,
// can go over the quota by what it writes between two looks of the
// watcher (quotaTick, plus one walk, plus the kill) before it is stopped:
// 1 to 25 MiB in the tests on a loaded 2-core machine, Python writing
// 1 MiB files into the page cache as fast as it can. What it wrote stays,
// and every write after it is refused until files are deleted.
// Apparent sizes beyond allocated blocks (sparse files) do not show in the
// free space; each is bounded by RLIMIT_FSIZE and counted at the next
// measure. Without the sandbox (sandbox.mode: none) or without prlimit
// there is no RLIMIT_FSIZE; the watcher still runs.

const (
	quotaTick      = 10 * time.Millisecond
	quotaWalkEvery = 5 * time.Second
	quotaWalkGap   = 10 // times the last walk's duration
)

// commandQuota is the quota's watch over one command in a workspace.
type commandQuota struct {
	q        *quota
	a        *account
	dir      string
	headroom int64 // bytes the command may add, as of its start
	// ceiling is what the workspace may hold before the command is
	// stopped: the quota, or what it held at the start when that was
	// more (a command in a workspace already over may delete, not grow).
	ceiling int64
	free0   int64 // free bytes of the file system at the start; -1 unknown

	stop chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	over *QuotaError // set when the workspace was found over the quota
}

// command starts the quota's watch of a command in dir; nil when there is
// no quota. The caller calls [commandQuota.watch] once the command runs and
// always [commandQuota.end].
func (q *quota) command(ctx context.Context, dir string) (*commandQuota, error) {
	if !q.on() {
		return nil, nil
	}
	a := q.account(dir)
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.refresh(ctx, dir, quotaMaxAge); err != nil {
		return nil, fmt.Errorf("workspace quota: %w", err)
	}
	// A small headroom is a refusal in part (it bounds every file): as
	// before a refusal, a figure older than quotaRecheck is measured
	// again, lest it still count files deleted behind the account's back
	// (the janitor's, another replica's).
	if a.bytes+a.reserved > q.limit/2 && time.Since(a.at) > quotaRecheck {
		if err := a.measure(ctx, dir); err != nil {
			return nil, fmt.Errorf("workspace quota: %w", err)
		}
	}
	a.running++
	return &commandQuota{q: q, a: a, dir: dir, headroom: max(q.limit-a.bytes-a.reserved, 0),
		ceiling: max(q.limit, a.bytes), free0: freeBytes(dir), stop: make(chan struct{})}, nil
}

// fileLimit is the RLIMIT_FSIZE of the command: its headroom, at least 1
// byte (0 would mean no limit to the sandbox).
func (cq *commandQuota) fileLimit() int64 {
	if cq == nil {
		return 0
	}
	return max(cq.headroom, 1)
}

// watch starts the watcher of a started command; kill ends the command.
func (cq *commandQuota) watch(kill func()) {
	if cq == nil {
		return
	}
	cq.wg.Add(1)
	go func() {
		defer cq.wg.Done()
		defer func() { _ = recover() }() // a watcher's fault must not take the server down
		cq.loop(kill)
	}()
}

func (cq *commandQuota) loop(kill func()) {
	t := time.NewTicker(quotaTick)
	defer t.Stop()
	base, headroom := cq.free0, cq.headroom
	last, gap := time.Now(), time.Duration(0)
	for {
		select {
		case <-cq.stop:
			return
		case <-t.C:
		}
		free := freeBytes(cq.dir)
		dropped := base >= 0 && free >= 0 && base-free > headroom
		if !dropped && time.Since(last) < quotaWalkEvery || time.Since(last) < gap {
			continue
		}
		start := time.Now()
		used, reserved, err := cq.measure()
		last, gap = time.Now(), quotaWalkGap*time.Since(start)
		if err != nil {
			continue // the end's check, and the next write's, measure again
		}
		if used > cq.ceiling {
			cq.setOver(&QuotaError{Used: used, Limit: cq.q.limit})
			kill()
			return
		}
		base, headroom = free, max(cq.q.limit-used-reserved, 0)
	}
}

// measure walks the workspace into the account.
func (cq *commandQuota) measure() (used, reserved int64, err error) {
	a := cq.a
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.measure(context.Background(), cq.dir); err != nil {
		return 0, 0, err
	}
	return a.bytes, a.reserved, nil
}

func (cq *commandQuota) setOver(e *QuotaError) {
	cq.mu.Lock()
	cq.over = e
	cq.mu.Unlock()
}

// end stops the watcher and waits for it, measures the workspace (what
// the command did is known no other way: the free space mixes in every
// writer of the disk), and returns the quota's verdict: killed says the
// watcher stopped the command, over is set when the command took the
// workspace over its quota (or, already over, grew it). A measure that
// fails leaves the account dirty.
func (cq *commandQuota) end() (over *QuotaError, killed bool) {
	if cq == nil {
		return nil, false
	}
	close(cq.stop)
	cq.wg.Wait()
	cq.mu.Lock()
	over, killed = cq.over, cq.over != nil
	cq.mu.Unlock()
	a := cq.a
	a.mu.Lock()
	defer a.mu.Unlock()
	a.running--
	// Measured even after a kill: the command wrote on between the
	// watcher's walk and its death.
	if err := a.measure(context.Background(), cq.dir); err != nil {
		a.dirty = true
		return over, killed
	}
	if killed || a.bytes > cq.ceiling {
		over = &QuotaError{Used: a.bytes, Limit: cq.q.limit}
	}
	return over, killed
}

// freeBytes is the free space of the file system holding dir, every
// block counted (those reserved for root too: the sandbox user may be
// allowed them); -1 when statfs fails.
func freeBytes(dir string) int64 {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return -1
	}
	return int64(st.Bfree) * st.Bsize
}

// killGroup ends a child at once (SIGKILL to its process group: bwrap's
// end ends its sandbox).
func killGroup(ch child) func() { return func() { _ = ch.Signal(syscall.SIGKILL) } }
