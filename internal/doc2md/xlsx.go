package doc2md

import (
	"archive/zip"
	"bytes"
	"fmt"
	"strings"

	"github.com/xuri/excelize/v2"
)

// checkUnzipSize refuses an archive whose entries declare more than
// MaxUnzipBytes in all (archive/zip fails an entry that inflates past
// its declared size, so the declaration bounds what can be read).
func (c *Converter) checkUnzipSize(name string, data []byte) error {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return errorf(name, Unreadable, "a broken ZIP archive: %v", err)
	}
	var total uint64
	for _, f := range zr.File {
		total += f.UncompressedSize64
		if total > uint64(c.opts.MaxUnzipBytes) {
			return errorf(name, TooLarge, "it unpacks to more than %d bytes (a ZIP bomb?)", c.opts.MaxUnzipBytes)
		}
	}
	return nil
}

// xlsx converts every sheet, in order, to a "## <sheet>" heading and a
// Markdown table of its cells' formatted values (the first row the
// header).
func (c *Converter) xlsx(name string, data []byte) (string, error) {
	if err := c.checkUnzipSize(name, data); err != nil {
		return "", err
	}
	f, err := excelize.OpenReader(bytes.NewReader(data), excelize.Options{
		UnzipSizeLimit: c.opts.MaxUnzipBytes, UnzipXMLSizeLimit: min(c.opts.MaxUnzipBytes, 16<<20)})
	if err != nil {
		if strings.Contains(err.Error(), "unzip size") {
			return "", errorf(name, TooLarge, "it unpacks to more than %d bytes (a ZIP bomb?)", c.opts.MaxUnzipBytes)
		}
		return "", errorf(name, Unreadable, "a broken XLSX: %v", err)
	}
	defer f.Close()
	var sb strings.Builder
	for _, sheet := range f.GetSheetList() {
		rows, err := f.GetRows(sheet)
		if err != nil {
			return "", errorf(name, Unreadable, "sheet %q: %v", sheet, err)
		}
		fmt.Fprintf(&sb, "## %s\n\n", sheet)
		if len(rows) == 0 {
			sb.WriteString("(empty)\n\n")
			continue
		}
		sb.WriteString(markdownTable(rows) + "\n")
		if sb.Len() > 4*c.opts.MaxChars {
			break // clipped anyway
		}
	}
	return sb.String(), nil
}
