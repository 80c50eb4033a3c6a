package doc2md

import (
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"
)

// xlsx converts every sheet, in the workbook's order, to a "## <sheet>"
// heading and a Markdown table of its cells' values (the first row the
// header; rows without a value are left out). Each sheet is read twice as
// a stream: once to measure it against MaxRows, MaxColumns and MaxCells
// (a cell far out at column XFD is refused there, before any row is
// padded), once to write it. Only the shared strings are kept in memory,
// counted in held text and against MaxCells.
func (j *job) xlsx(z *officeZip) error {
	wb, err := j.workbook(z)
	if err != nil {
		return err
	}
	if wb.sst, err = j.sharedStrings(z); err != nil {
		return err
	}
	if wb.styles, err = j.cellStyles(z); err != nil {
		return err
	}
	for _, s := range wb.sheets {
		if err := j.out.write("## ", s.name, "\n\n"); err != nil {
			return err
		}
		if err := j.sheet(z, wb, s.part); err != nil {
			return err
		}
	}
	return nil
}

// sheet writes one worksheet: measured, then written.
func (j *job) sheet(z *officeZip, wb *workbook, part string) error {
	if z.files[part] == nil {
		return j.out.write("(empty)\n\n")
	}
	rows, width := 0, 0
	err := z.read(part, func(x *xmlReader) error {
		return j.sheetRows(x, wb, func(cells []sheetCell) error {
			rows++
			if err := j.checkRows(rows); err != nil {
				return err
			}
			for _, c := range cells {
				width = max(width, c.col+1)
			}
			return j.checkCells(int64(rows) * int64(width))
		})
	})
	if err != nil {
		return err
	}
	if rows == 0 {
		return j.out.write("(empty)\n\n")
	}
	if err := j.addCells(int64(rows) * int64(width)); err != nil {
		return err
	}
	line := make([]string, width)
	first := true
	err = z.read(part, func(x *xmlReader) error {
		return j.sheetRows(x, wb, func(cells []sheetCell) error {
			clear(line)
			for _, c := range cells {
				if c.col < width { // as measured, unless the part changed
					line[c.col] = c.value
				}
			}
			err := writeRow(&j.out, line, width, first)
			first = false
			return err
		})
	})
	if err != nil {
		return err
	}
	return j.out.write("\n")
}

// sheetCell is a cell with a value: its 0-based column and its value as
// shown.
type sheetCell struct {
	col   int
	value string
}

// sheetRows calls fn with the cells that have a value of each row that
// has one, in column order as the sheet lists them. A cell past
// MaxColumns is refused as soon as it is read.
func (j *job) sheetRows(x *xmlReader, wb *workbook, fn func([]sheetCell) error) error {
	var (
		cells []sheetCell
		col   int
		ref   string // the cell being read: its r, t and s attributes
		typ   string
		style int
		value strings.Builder
		inV   bool
		inIs  bool
		inT   bool
	)
	for tok, err := range x.tokens() {
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "row":
				cells, col = cells[:0], 0
			case "c":
				ref, typ = attr(t, "r"), attr(t, "t")
				style, _ = strconv.Atoi(attr(t, "s"))
				j.release(int64(value.Len()))
				value.Reset()
				if ref != "" {
					if col, err = columnOf(ref); err != nil {
						return errorf(j.name, Unreadable, "cell %q: %v", ref, err)
					}
				} else {
					col++
				}
			case "v":
				inV = true
			case "is":
				inIs = true
			case "t":
				inT = true
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "v":
				inV = false
			case "is":
				inIs = false
			case "t":
				inT = false
			case "c":
				v := wb.cellValue(typ, style, value.String())
				j.release(int64(value.Len()))
				value.Reset()
				if v == "" || col < 1 {
					break
				}
				if err := j.checkColumns(col); err != nil {
					return err
				}
				cells = append(cells, sheetCell{col: col - 1, value: v})
			case "row":
				if len(cells) > 0 {
					if err := fn(cells); err != nil {
						return err
					}
				}
				cells = cells[:0]
			}
		case xml.CharData:
			if inV || (inIs && inT) {
				if err := j.hold(len(t)); err != nil {
					return err
				}
				value.Write(t)
			}
		}
	}
	return nil
}

// columnOf reads the 1-based column of a cell reference ("XFD12" is
// 16384).
func columnOf(ref string) (int, error) {
	col, i := 0, 0
	for ; i < len(ref); i++ {
		c := ref[i] | 0x20
		if c < 'a' || c > 'z' {
			break
		}
		if col = col*26 + int(c-'a') + 1; col > 1<<24 {
			return 0, fmt.Errorf("column out of range")
		}
	}
	if col == 0 {
		return 0, fmt.Errorf("no column")
	}
	return col, nil
}
