// Package fsperm tightens the permissions of wunder's own files: what an
// older wunder, or an operator's umask, left readable by others. It is a
// leaf shared by storage (the database's files) and cmd/wunder (the data
// directory and its secrets).
package fsperm

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"syscall"
)

// Tighten takes every permission but want's away from p when the process's
// user owns it, and logs the change with what (a few words: "a database
// file"). A missing path, a symlink (never followed) and a path another
// user owns are left alone; so is a directory when regularOnly.
func Tighten(p string, want fs.FileMode, regularOnly bool, what string, log *slog.Logger) error {
	info, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	mode := info.Mode()
	if !ok || int(st.Uid) != os.Geteuid() || mode&fs.ModeSymlink != 0 || (regularOnly && !mode.IsRegular()) {
		return nil
	}
	old := mode.Perm()
	if old&^want == 0 {
		return nil
	}
	if err := os.Chmod(p, old&want); err != nil {
		return err
	}
	if log != nil {
		log.Info("tightened the mode of "+what, "path", p, "from", fmt.Sprintf("%04o", old), "to", fmt.Sprintf("%04o", old&want))
	}
	return nil
}
