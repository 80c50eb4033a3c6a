//go:build !unix

package storage

import (
	"errors"
	"os"
)

// holdSole cannot lock a file here: the database counts as shared.
func holdSole(*os.File) error { return errors.New("no advisory file locks on this system") }
