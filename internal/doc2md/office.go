package doc2md

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// officeZip is the archive of an office file (DOCX, XLSX, PPTX), checked
// before anything is unpacked: its entries (MaxZipEntries) and what they
// declare to unpack to, in all (MaxUnzipBytes) and against the file's
// size (MaxUnzipRatio). archive/zip fails an entry that inflates past
// its declared size, so the declarations bound what can be read. Entries
// are read as streams, never whole.
type officeZip struct {
	j     *job
	files map[string]*zip.File
	order []*zip.File
}

// ratioFloor is what an archive may unpack to whatever its ratio: a small
// document that compresses well is no bomb.
const ratioFloor = 1 << 20

func (j *job) openZip(data []byte) (*officeZip, error) {
	if n, ok := zipEntries(data); ok && n > uint64(j.o.MaxZipEntries) {
		return nil, overLimit(j.name, TooLarge, "attachments.max_zip_entries", int64(j.o.MaxZipEntries), "a ZIP archive of %d entries", n)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, errorf(j.name, Unreadable, "a broken ZIP archive: %v", err)
	}
	if n := len(zr.File); n > j.o.MaxZipEntries {
		return nil, overLimit(j.name, TooLarge, "attachments.max_zip_entries", int64(j.o.MaxZipEntries), "a ZIP archive of %d entries", n)
	}
	limit := uint64(j.o.MaxUnzipBytes)
	var total uint64 // what the entries declare to unpack to
	z := &officeZip{j: j, files: make(map[string]*zip.File, len(zr.File)), order: zr.File}
	for _, f := range zr.File {
		if total += f.UncompressedSize64; total > limit || f.UncompressedSize64 > limit {
			return nil, overLimit(j.name, TooLarge, "attachments.max_unzip_bytes", j.o.MaxUnzipBytes,
				"it unpacks to %d bytes or more (a ZIP bomb?)", max(total, f.UncompressedSize64))
		}
		if _, dup := z.files[f.Name]; !dup {
			z.files[f.Name] = f
		}
	}
	if ratio := float64(j.o.MaxUnzipRatio); total > ratioFloor && float64(total) > ratio*float64(len(data)) {
		return nil, overLimit(j.name, TooLarge, "attachments.max_unzip_ratio", int64(j.o.MaxUnzipRatio),
			"it unpacks to %d bytes, %d times its size (a ZIP bomb?)", total, total/uint64(max(len(data), 1)))
	}
	return z, nil
}

// zipEntries reads the number of entries an archive declares in its
// end-of-central-directory record (ZIP64's when there is one), before
// archive/zip allocates one File per entry; false when there is no such
// record (archive/zip then refuses the archive).
func zipEntries(data []byte) (uint64, bool) {
	const eocdLen, locatorLen = 22, 20
	from := max(len(data)-eocdLen-0xffff, 0)
	i := bytes.LastIndex(data[from:], []byte("PK\x05\x06"))
	if i < 0 || from+i+eocdLen > len(data) {
		return 0, false
	}
	i += from
	n := uint64(binary.LittleEndian.Uint16(data[i+10:]))
	if n != 0xffff || i < locatorLen || !bytes.HasPrefix(data[i-locatorLen:], []byte("PK\x06\x07")) {
		return n, true
	}
	off := binary.LittleEndian.Uint64(data[i-locatorLen+8:])
	if len(data) < 56 || off > uint64(len(data)-56) || !bytes.HasPrefix(data[off:], []byte("PK\x06\x06")) {
		return n, true
	}
	return binary.LittleEndian.Uint64(data[off+32:]), true
}

// open streams an entry; a missing entry is nil without error.
func (z *officeZip) open(entry string) (io.ReadCloser, error) {
	f := z.files[entry]
	if f == nil {
		return nil, nil
	}
	rc, err := f.Open()
	if err != nil {
		return nil, errorf(z.j.name, Unreadable, "entry %s: %v", entry, err)
	}
	return rc, nil
}

// read runs fn over an entry's XML, which must be there; a syntax error
// or a broken entry is Unreadable, naming the entry.
func (z *officeZip) read(entry string, fn func(*xmlReader) error) error {
	rc, err := z.open(entry)
	if err != nil {
		return err
	}
	if rc == nil {
		return errorf(z.j.name, Unreadable, "%s is missing", entry)
	}
	defer rc.Close()
	if err := fn(z.j.newXMLReader(rc)); err != nil {
		if _, ok := err.(*Error); ok || z.j.ctx.Err() != nil {
			return err
		}
		return errorf(z.j.name, Unreadable, "%s: %v", entry, err)
	}
	return nil
}

// office converts an office file, telling DOCX, XLSX and PPTX apart by
// their main part; it returns the format.
func (j *job) office(data []byte) (string, error) {
	z, err := j.openZip(data)
	if err != nil {
		return "", err
	}
	switch {
	case z.files["word/document.xml"] != nil:
		return fmtDOCX, z.read("word/document.xml", j.wordML)
	case z.files["xl/workbook.xml"] != nil:
		return fmtXLSX, j.xlsx(z)
	case z.files["ppt/presentation.xml"] != nil:
		return fmtPPTX, j.pptx(z)
	}
	return "", errorf(j.name, Unsupported, "a ZIP archive that is not a DOCX, XLSX or PPTX document")
}

// pptx converts ppt/slides/slideN.xml in slide order, each under a
// "## Slide N" heading.
func (j *job) pptx(z *officeZip) error {
	var nums []int
	for _, f := range z.order {
		if s, ok := strings.CutPrefix(f.Name, "ppt/slides/slide"); ok && strings.HasSuffix(s, ".xml") {
			if n, err := strconv.Atoi(strings.TrimSuffix(s, ".xml")); err == nil {
				nums = append(nums, n)
			}
		}
	}
	sort.Ints(nums)
	for _, n := range nums {
		if err := j.blankLine(); err != nil {
			return err
		}
		if err := j.out.write(fmt.Sprintf("## Slide %d\n\n", n)); err != nil {
			return err
		}
		if err := z.read(fmt.Sprintf("ppt/slides/slide%d.xml", n), j.wordML); err != nil {
			return err
		}
	}
	return nil
}

// wordML converts the paragraphs and tables of a WordprocessingML (prefix
// w: p, r, t, tbl, tr, tc) or DrawingML (a: the same names) part as it
// reads them. Tables become Markdown tables (a table in a cell, one line
// of its outer cell); a paragraph's style (pStyle HeadingN or Title)
// makes a heading, numPr a list item. Names are matched by their local
// part: the two vocabularies share them.
func (j *job) wordML(x *xmlReader) error {
	var (
		para    strings.Builder
		heading int
		list    bool
		inText  bool
		tables  []*tableBuf
	)
	endPara := func() error {
		text := strings.TrimSpace(para.String())
		j.release(int64(para.Len()))
		para.Reset()
		h, l := heading, list
		heading, list = 0, false
		if n := len(tables); n > 0 {
			return j.cellText(tables[n-1], text)
		}
		switch {
		case text == "":
			return nil
		case l:
			return j.out.write("- ", text, "\n")
		}
		if err := j.blankLine(); err != nil { // after a list: not its last item's
			return err
		}
		if h > 0 {
			return j.out.write(strings.Repeat("#", h), " ", text, "\n\n")
		}
		return j.out.write(text, "\n\n")
	}
	for tok, err := range x.tokens() {
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "p":
				j.release(int64(para.Len()))
				para.Reset()
				heading, list = 0, false
			case "pStyle":
				heading = headingLevel(attr(t, "val"))
			case "numPr":
				list = true
			case "t":
				inText = true
			case "tab":
				err = j.hold(1)
				para.WriteByte('\t')
			case "br":
				err = j.hold(1)
				para.WriteByte(' ')
			case "tbl":
				tables = append(tables, &tableBuf{})
			case "tr":
				if n := len(tables); n > 0 {
					err = j.startRow(tables[n-1])
				}
			case "tc":
				if n := len(tables); n > 0 {
					err = j.startCell(tables[n-1])
				}
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "t":
				inText = false
			case "p":
				err = endPara()
			case "tc":
				if n := len(tables); n > 0 {
					j.endCell(tables[n-1])
				}
			case "tbl":
				if n := len(tables); n > 0 {
					err = j.endTable(&tables)
				}
			}
		case xml.CharData:
			if inText {
				if err = j.hold(len(t)); err == nil {
					para.Write(t)
				}
			}
		}
		if err != nil {
			return err
		}
	}
	for len(tables) > 0 { // tables left open by a truncated part
		if err := j.endTable(&tables); err != nil {
			return err
		}
	}
	return nil
}

// endTable renders the innermost of tables: into its outer table's open
// cell, or onto the Markdown.
func (j *job) endTable(tables *[]*tableBuf) error {
	ts := *tables
	t := ts[len(ts)-1]
	*tables = ts[:len(ts)-1]
	if len(*tables) == 0 {
		if err := j.blankLine(); err != nil {
			return err
		}
		if err := j.renderTable(&j.out, t); err != nil {
			return err
		}
		return j.out.write("\n")
	}
	line, err := j.nestedTable(t)
	if err != nil {
		return err
	}
	return j.cellText(ts[len(ts)-2], line)
}

// blankLine ends the Markdown written so far with an empty line, unless
// nothing is written yet or it ends with one: a paragraph, heading or
// table right after a list item would otherwise be read as part of it
// (a lazy continuation line).
func (j *job) blankLine() error {
	if j.out.empty() {
		return nil
	}
	return j.out.write(strings.Repeat("\n", max(2-j.out.nl, 0)))
}

// headingLevel reads a paragraph style: Title is 1, HeadingN is N (1-6).
func headingLevel(style string) int {
	s := strings.ToLower(strings.ReplaceAll(style, " ", ""))
	if s == "title" {
		return 1
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(s, "heading")); err == nil && strings.HasPrefix(s, "heading") {
		return min(max(n, 1), 6)
	}
	return 0
}
