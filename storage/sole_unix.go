//go:build unix

package storage

import (
	"errors"
	"os"
	"syscall"
)

// holdSole takes an exclusive flock on f without waiting.
func holdSole(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errSoleHeld
	}
	return err
}
