package skills

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/toolconfig"
)

// Limits bound an uploaded package. The zero value of a field means its
// default.
type Limits struct {
	// ZipBytes caps the ZIP itself. Default 8 MiB.
	ZipBytes int64
	// Files caps the files in it. Default 200.
	Files int
	// UnpackedBytes caps the files' total size once unpacked (what the
	// headers declare and what is actually read). Default 32 MiB.
	UnpackedBytes int64
}

// Defaults of [Limits].
const (
	DefaultMaxZipBytes      = 8 << 20
	DefaultMaxFiles         = 200
	DefaultMaxUnpackedBytes = 32 << 20
)

func (l Limits) withDefaults() Limits {
	if l.ZipBytes <= 0 {
		l.ZipBytes = DefaultMaxZipBytes
	}
	if l.Files <= 0 {
		l.Files = DefaultMaxFiles
	}
	if l.UnpackedBytes <= 0 {
		l.UnpackedBytes = DefaultMaxUnpackedBytes
	}
	return l
}

// Package is a checked upload: its files (paths relative to the skill's
// folder, SKILL.md among them) and the skill its SKILL.md declares.
type Package struct {
	Skill *Skill
	Files []toolconfig.File
}

// invalid wraps a refusal of an upload as a bad argument.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: skill package: %s", orchestrator.ErrInvalidArgument, fmt.Sprintf(format, args...))
}

// ReadPackage checks an uploaded ZIP before anything of it is stored: its
// size, its entry count, the declared and the actual unpacked size (zip
// bombs), every path ([toolconfig.CheckFilePath]: relative, clean,
// no "..", no backslash), no symlinks, devices or other special files, no
// path twice; one top-level folder holding everything is stripped; a valid
// SKILL.md must be at the (stripped) root. Errors wrap
// [orchestrator.ErrInvalidArgument].
func ReadPackage(data []byte, lim Limits) (*Package, error) {
	lim = lim.withDefaults()
	if int64(len(data)) > lim.ZipBytes {
		return nil, invalid("the ZIP is %d bytes, over the limit of %d (skills.max_zip_bytes)", len(data), lim.ZipBytes)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, invalid("not a ZIP archive (%v)", err)
	}
	if len(zr.File) > lim.Files*2+16 {
		// Directory entries count too, but not without bound.
		return nil, invalid("the ZIP has %d entries, over the limit of %d files (skills.max_files)", len(zr.File), lim.Files)
	}
	var entries []*zip.File
	var declared uint64
	for _, f := range zr.File {
		name := f.Name
		if strings.HasPrefix(name, "__MACOSX/") || path.Base(name) == ".DS_Store" {
			continue // the Finder's metadata, never part of a skill
		}
		mode := f.Mode()
		switch {
		case mode&fs.ModeSymlink != 0:
			return nil, invalid("%q is a symbolic link; links are not allowed", name)
		case mode.IsDir() || strings.HasSuffix(name, "/"):
			if err := checkPath(strings.TrimSuffix(name, "/")); err != nil {
				return nil, err
			}
			continue
		case !mode.IsRegular():
			return nil, invalid("%q is not a regular file (%v)", name, mode.Type())
		}
		if err := checkPath(name); err != nil {
			return nil, err
		}
		declared += f.UncompressedSize64
		if declared > uint64(lim.UnpackedBytes) {
			return nil, invalid("the files unpack to more than %d bytes (skills.max_unpacked_bytes)", lim.UnpackedBytes)
		}
		entries = append(entries, f)
	}
	if len(entries) > lim.Files {
		return nil, invalid("the ZIP has %d files, over the limit of %d (skills.max_files)", len(entries), lim.Files)
	}
	if len(entries) == 0 {
		return nil, invalid("the ZIP holds no files; it needs a SKILL.md")
	}
	prefix := commonFolder(entries)
	files := make([]toolconfig.File, 0, len(entries))
	seen := map[string]bool{}
	budget := lim.UnpackedBytes
	for _, f := range entries {
		p := strings.TrimPrefix(f.Name, prefix)
		if seen[strings.ToLower(p)] {
			return nil, invalid("%q is in the ZIP twice", p)
		}
		seen[strings.ToLower(p)] = true
		b, err := readCapped(f, budget)
		if err != nil {
			return nil, err
		}
		budget -= int64(len(b))
		files = append(files, toolconfig.File{Path: p, Data: b})
	}
	sk, err := packageSkill(files)
	if err != nil {
		return nil, err
	}
	return &Package{Skill: sk, Files: files}, nil
}

// checkPath applies the store's path rule to a ZIP entry name.
func checkPath(name string) error {
	if err := toolconfig.CheckFilePath(name); err != nil {
		return invalid("%s", strings.TrimPrefix(err.Error(), orchestrator.ErrInvalidArgument.Error()+": "))
	}
	return nil
}

// commonFolder returns "dir/" when every file is under that one top-level
// folder and no SKILL.md is at the root, else "".
func commonFolder(files []*zip.File) string {
	first, _, ok := strings.Cut(files[0].Name, "/")
	if !ok {
		return ""
	}
	for _, f := range files {
		if dir, _, ok := strings.Cut(f.Name, "/"); !ok || dir != first {
			return ""
		}
	}
	return first + "/"
}

// readCapped reads one entry, refusing more than budget bytes whatever its
// header says.
func readCapped(f *zip.File, budget int64) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, invalid("%q cannot be read: %v", f.Name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, budget+1))
	switch {
	case int64(len(b)) > budget:
		return nil, invalid("the files unpack to more than their headers say and over the limit (a zip bomb?)")
	case err != nil:
		return nil, invalid("%q cannot be read: %v", f.Name, err)
	}
	return b, nil
}

// packageSkill parses the package's SKILL.md and finds its entry script.
func packageSkill(files []toolconfig.File) (*Skill, error) {
	byPath := map[string][]byte{}
	for _, f := range files {
		byPath[f.Path] = f.Data
	}
	doc, ok := byPath["SKILL.md"]
	if !ok {
		return nil, invalid("no SKILL.md at the top of the package (or in its one top-level folder)")
	}
	sk, named, err := parseDoc(doc)
	if err != nil {
		return nil, invalid("SKILL.md: %v", err)
	}
	sk.Entry, err = findEntry(named, func(n string) bool { _, ok := byPath[n]; return ok })
	if err != nil {
		return nil, invalid("SKILL.md: %v", err)
	}
	sk.Source = SourceUpload
	return sk, nil
}
