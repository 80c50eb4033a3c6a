package auth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sync/semaphore"
)

// MemoryPerHash is what one argon2id derivation with wunder's parameters
// holds while it runs: 64 MiB.
const MemoryPerHash = argonMemory << 10

// ErrBusy is returned by a [Hasher] whose derivations in flight took its
// whole memory budget for as long as a request may wait.
var ErrBusy = errors.New("password hashing is at its memory limit")

// Hasher hashes and checks passwords within a memory budget. Each argon2id
// derivation holds its memory parameter (64 MiB for the hashes wunder
// makes) until it returns, so the budget bounds how many run at once: a
// derivation that does not fit waits, up to the wait given, for others to
// end, and then fails with ErrBusy without deriving anything. A flood of
// logins thus costs the budget and a queue of goroutines, never a hash's
// memory per request.
//
//	h := auth.NewHasher(256<<20, 2*time.Second) // four at once
//	ok, err := h.Check(ctx, user.PasswordHash, pw) // errors.Is(err, auth.ErrBusy): 503
//
// It is safe for concurrent use.
type Hasher struct {
	sem    *semaphore.Weighted // in KiB, argon2's unit
	budget int64               // KiB
	wait   time.Duration
	derive deriveFunc // argonKey; a recorder in tests
}

// NewHasher returns a hasher whose derivations take at most maxMemory
// bytes at once (at least one derivation's worth, MemoryPerHash), and
// whose callers wait at most wait for room (0: not at all).
func NewHasher(maxMemory int64, wait time.Duration) *Hasher {
	budget := max(maxMemory>>10, argonMemory)
	return &Hasher{sem: semaphore.NewWeighted(budget), budget: budget, wait: max(wait, 0), derive: argonKey}
}

// Slots is how many derivations with wunder's parameters run at once.
func (h *Hasher) Slots() int { return int(h.budget / argonMemory) }

// Hash is [HashPassword] within the budget.
func (h *Hasher) Hash(ctx context.Context, pw string) (string, error) {
	if len(pw) > MaxPasswordBytes {
		return "", ErrPasswordTooLong
	}
	release, err := h.acquire(ctx, argonMemory)
	if err != nil {
		return "", err
	}
	defer release()
	return hashPassword(pw, h.derive)
}

// Check is [CheckPassword] within the budget. An empty or malformed
// encoded hash (a user without a password; a login naming no such user)
// costs one derivation with the default parameters, exactly as a wrong
// password does, so that the answer's timing does not tell them apart.
func (h *Hasher) Check(ctx context.Context, encoded, pw string) (bool, error) {
	p, possible := checkParams(encoded, pw)
	if int64(p.memory) > h.budget {
		// A stored hash made with more memory than the whole budget (by
		// another tool, or parameters since lowered) can never be checked.
		return false, fmt.Errorf("auth: the password hash needs %d MiB, more than the hashing budget of %d MiB", p.memory>>10, h.budget>>10)
	}
	release, err := h.acquire(ctx, int64(p.memory))
	if err != nil {
		return false, err
	}
	defer release()
	return matches(p, possible, pw, h.derive), nil
}

// acquire takes kib of the budget, waiting at most h.wait (and no longer
// than ctx) for it.
func (h *Hasher) acquire(ctx context.Context, kib int64) (release func(), err error) {
	if h.sem.TryAcquire(kib) {
		return func() { h.sem.Release(kib) }, nil
	}
	if h.wait <= 0 {
		return nil, ErrBusy
	}
	wctx, cancel := context.WithTimeout(ctx, h.wait)
	defer cancel()
	if err := h.sem.Acquire(wctx, kib); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err() // the caller went away
		}
		return nil, ErrBusy
	}
	return func() { h.sem.Release(kib) }, nil
}
