package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// PrepareRoot creates dir, the directory holding the workspaces, when
// missing, and, when commands run as another uid than wunder's, lets that
// uid search it (o+x; never o+r, so the user ids in it cannot be listed).
// The directories above it must be searchable already: [Sandbox.Start]
// says which one is not.
func (s *Sandbox) PrepareRoot(dir string) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	if !s.asRoot {
		return nil
	}
	info, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	if m := info.Mode().Perm(); m&0o001 == 0 {
		if err := os.Chmod(dir, m|0o001); err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
	}
	return nil
}

// prepare makes the workspace usable by the sandbox identity: every
// directory above it searchable (checked, not changed), and the tree owned
// by it.
func (s *Sandbox) prepare(workspace string) error {
	real, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		return fmt.Errorf("sandbox: workspace: %w", err)
	}
	for dir := filepath.Dir(real); ; dir = filepath.Dir(dir) {
		if err := s.searchable(dir); err != nil {
			return err
		}
		if dir == "/" {
			break
		}
	}
	return own(real, s.opts.UID, s.opts.GID)
}

// searchable checks that the sandbox identity may pass through dir.
func (s *Sandbox) searchable(dir string) error {
	info, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	m := info.Mode().Perm()
	switch {
	case int(st.Uid) == s.opts.UID && m&0o100 != 0,
		int(st.Gid) == s.opts.GID && m&0o010 != 0,
		m&0o001 != 0:
		return nil
	}
	return fmt.Errorf("sandbox: %s (mode %04o) is not searchable by the sandbox user %d:%d, so its workspaces "+
		"cannot be mounted: give it o+x (chmod o+x), or move the workspace root", dir, m, s.opts.UID, s.opts.GID)
}

// own lchowns the tree at dir to uid:gid through an [os.Root], so a symlink
// in the tree is changed itself and never followed, and no path leads out.
// Entries already owned are left alone; so are regular files with more
// than one link, which might be shared with a file outside.
func own(dir string, uid, gid int) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("sandbox: workspace: %w", err)
	}
	defer root.Close()
	var first error
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) && first == nil {
				first = err
			}
			return nil
		}
		info, err := root.Lstat(p)
		if err != nil {
			return nil // removed meanwhile
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok || (int(st.Uid) == uid && int(st.Gid) == gid) {
			return nil
		}
		if info.Mode().IsRegular() && st.Nlink > 1 {
			return nil
		}
		if err := root.Lchown(p, uid, gid); err != nil && !errors.Is(err, fs.ErrNotExist) && first == nil {
			first = err
		}
		return nil
	})
	if err == nil {
		err = first
	}
	if err != nil {
		return fmt.Errorf("sandbox: give the workspace to the sandbox user: %w", err)
	}
	return nil
}
