package skills

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/toolconfig"
)

// cache unpacks uploaded packages from the store into folders under root,
// one per package content: the folder's name is a hash of the owner, the
// skill's name and every file's path and digest, so a folder is never
// shared between owners and a changed package gets a new one. A folder is
// written as a temporary folder and renamed into place (atomic), and a
// folder found on disk is checked against the store's digests before this
// process first uses it (never trusted as it is).
type cache struct {
	root  string
	store toolconfig.FileStore
	log   *slog.Logger

	// unpackMu serialises unpacking, so two runs that need the same new
	// package unpack it once. Never held by readers of the fields below.
	unpackMu sync.Mutex

	// mu guards parsed, failed, current and retired.
	mu     sync.Mutex
	parsed map[string]*Skill // by package key, checked in this process
	failed map[string]error  // by package key: stored packages that do not parse
	// current is the key in use per owner/name; retired holds folders of
	// replaced packages, removed after a grace period (a script may still
	// be running in one).
	current map[string]string
	retired []retiredDir
}

type retiredDir struct {
	key string
	at  time.Time
}

func newCache(root string, store toolconfig.FileStore, log *slog.Logger) *cache {
	return &cache{root: root, store: store, log: log, parsed: map[string]*Skill{}, failed: map[string]error{},
		current: map[string]string{}}
}

// packageKey is the content key of a package: owner, name and each file's
// path and digest, in path order (the store lists them so).
func packageKey(owner, name string, files []toolconfig.File) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", owner, name)
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00%s\n", f.Path, f.SHA256)
	}
	return hex.EncodeToString(h.Sum(nil))[:40]
}

// skill returns the parsed skill of the package whose listing (without
// data) is files, unpacking it first when needed.
func (c *cache) skill(ctx context.Context, owner, name string, files []toolconfig.File) (*Skill, error) {
	key := packageKey(owner, name, files)
	if sk, err, ok := c.lookup(key); ok {
		c.use(owner, name, key)
		return sk, err
	}
	c.unpackMu.Lock()
	defer c.unpackMu.Unlock()
	if sk, err, ok := c.lookup(key); ok {
		c.use(owner, name, key)
		return sk, err
	}
	dir := filepath.Join(c.root, key)
	if err := verify(dir, files); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			c.log.Warn("skill cache folder does not match the store; unpacking again", "dir", dir, "reason", err)
		}
		withData, err := c.store.ListToolFiles(ctx, owner, toolconfig.KindSkill, name, true)
		if err != nil {
			return nil, err
		}
		if k := packageKey(owner, name, withData); k != key {
			return nil, fmt.Errorf("%w: skill %q changed while being read", orchestrator.ErrUnavailable, name)
		}
		if err := unpack(c.root, dir, withData); err != nil {
			return nil, fmt.Errorf("unpack skill %q: %w", name, err)
		}
	}
	sk, err := ParseSkill(dir)
	if err == nil && sk.Name != name {
		err = fmt.Errorf("its SKILL.md names it %q", sk.Name)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		err = fmt.Errorf("stored skill %q of %q does not load: %w", name, owner, err)
		c.failed[key] = err
		return nil, err
	}
	sk.Source, sk.Owner, sk.Hash = SourceUpload, owner, key
	c.parsed[key] = sk
	c.useLocked(owner, name, key)
	return sk, nil
}

func (c *cache) lookup(key string) (*Skill, error, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sk, ok := c.parsed[key]; ok {
		return sk, nil, true
	}
	if err, ok := c.failed[key]; ok {
		return nil, err, true
	}
	return nil, nil, false
}

func (c *cache) use(owner, name, key string) {
	c.mu.Lock()
	c.useLocked(owner, name, key)
	c.mu.Unlock()
}

// useLocked records key as the package in use for owner/name, retiring
// the folder of the one it replaces.
func (c *cache) useLocked(owner, name, key string) {
	id := owner + "\x00" + name
	if old, ok := c.current[id]; ok && old != key {
		c.retired = append(c.retired, retiredDir{key: old, at: time.Now()})
	}
	c.current[id] = key
}

// forget retires the folder of a deleted package.
func (c *cache) forget(owner, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := owner + "\x00" + name
	if old, ok := c.current[id]; ok {
		c.retired = append(c.retired, retiredDir{key: old, at: time.Now()})
		delete(c.current, id)
	}
}

// sweep removes folders retired more than grace ago.
func (c *cache) sweep(grace time.Duration) {
	c.mu.Lock()
	var gone []string
	keep := c.retired[:0]
	for _, r := range c.retired {
		inUse := false
		for _, k := range c.current {
			inUse = inUse || k == r.key
		}
		switch {
		case inUse:
		case time.Since(r.at) >= grace:
			gone = append(gone, r.key)
			delete(c.parsed, r.key)
		default:
			keep = append(keep, r)
		}
	}
	c.retired = keep
	c.mu.Unlock()
	for _, k := range gone {
		if err := os.RemoveAll(filepath.Join(c.root, k)); err != nil {
			c.log.Warn("old skill folder not removed", "dir", filepath.Join(c.root, k), "err", err)
		}
	}
}

// verify checks that dir holds exactly files (regular files with these
// digests, no other files, no links).
func verify(dir string, files []toolconfig.File) error {
	if _, err := os.Lstat(dir); err != nil {
		return err
	}
	want := map[string]string{}
	for _, f := range files {
		want[f.Path] = f.SHA256
	}
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", rel)
		}
		sum, ok := want[rel]
		if !ok {
			return fmt.Errorf("%s is not in the package", rel)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if got := sha256.Sum256(b); hex.EncodeToString(got[:]) != sum {
			return fmt.Errorf("%s differs from the stored file", rel)
		}
		n++
		return nil
	})
	if err == nil && n != len(want) {
		err = fmt.Errorf("%d of %d files are there", n, len(want))
	}
	return err
}

// unpack writes files into a temporary folder under root and renames it
// to dir (replacing a stale dir).
func unpack(root, dir string, files []toolconfig.File) error {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(root, ".unpack-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	// The sandbox user reads skills: folders 0755, files 0644.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		// The store's rule again: the path stays inside the folder.
		if err := toolconfig.CheckFilePath(f.Path); err != nil {
			return err
		}
		p := filepath.Join(tmp, filepath.FromSlash(f.Path))
		if !strings.HasPrefix(p, tmp+string(filepath.Separator)) {
			return fmt.Errorf("%q leaves the folder", f.Path)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}
