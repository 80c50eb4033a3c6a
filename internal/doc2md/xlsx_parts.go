package doc2md

import (
	"encoding/xml"
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"
	"time"
)

// The parts of a workbook a sheet's values need: the sheets' names and
// parts, the shared strings, the cell styles' number formats; and how a
// value is shown.

// workbook is what a sheet's values need of the rest of the file.
type workbook struct {
	sheets   []sheetRef
	date1904 bool
	sst      []string
	styles   []numKind // by cell style (the s attribute)
}

type sheetRef struct{ name, part string }

// workbook reads the sheets' names and parts (xl/workbook.xml and its
// relationships).
func (j *job) workbook(z *officeZip) (*workbook, error) {
	wb := &workbook{}
	var ids []string
	err := z.read("xl/workbook.xml", func(x *xmlReader) error {
		return eachStart(x, func(e xml.StartElement) error {
			switch e.Name.Local {
			case "workbookPr":
				wb.date1904 = attr(e, "date1904") == "1" || attr(e, "date1904") == "true"
			case "sheet":
				wb.sheets = append(wb.sheets, sheetRef{name: attr(e, "name")})
				ids = append(ids, relID(e))
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	targets := map[string]string{}
	if z.files["xl/_rels/workbook.xml.rels"] != nil {
		err = z.read("xl/_rels/workbook.xml.rels", func(x *xmlReader) error {
			return eachStart(x, func(e xml.StartElement) error {
				if e.Name.Local == "Relationship" {
					targets[attr(e, "Id")] = attr(e, "Target")
				}
				return nil
			})
		})
		if err != nil {
			return nil, err
		}
	}
	for i := range wb.sheets {
		t, ok := targets[ids[i]]
		switch {
		case !ok:
			wb.sheets[i].part = fmt.Sprintf("xl/worksheets/sheet%d.xml", i+1)
		case strings.HasPrefix(t, "/"):
			wb.sheets[i].part = strings.TrimPrefix(t, "/")
		default:
			wb.sheets[i].part = path.Join("xl", t)
		}
	}
	return wb, nil
}

// relID is a sheet's r:id (the relationships namespace's id, not
// sheetId).
func relID(e xml.StartElement) string {
	for _, a := range e.Attr {
		if a.Name.Local == "id" && a.Name.Space != "" {
			return a.Value
		}
	}
	return ""
}

// eachStart calls fn with every start element of a part.
func eachStart(x *xmlReader, fn func(xml.StartElement) error) error {
	for tok, err := range x.tokens() {
		if err != nil {
			return err
		}
		if e, ok := tok.(xml.StartElement); ok {
			if err := fn(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// sharedStrings reads xl/sharedStrings.xml: each <si>'s text (its <t>s,
// leaving out phonetic runs).
func (j *job) sharedStrings(z *officeZip) ([]string, error) {
	var sst []string
	if z.files["xl/sharedStrings.xml"] == nil {
		return nil, nil
	}
	err := z.read("xl/sharedStrings.xml", func(x *xmlReader) error {
		var text strings.Builder
		var inT, inSI bool
		phonetic := 0
		for tok, err := range x.tokens() {
			if err != nil {
				return err
			}
			switch t := tok.(type) {
			case xml.StartElement:
				switch t.Name.Local {
				case "si":
					inSI = true
					text.Reset()
				case "t":
					inT = true
				case "rPh":
					phonetic++
				}
			case xml.EndElement:
				switch t.Name.Local {
				case "si":
					if int64(len(sst)) >= j.o.MaxCells {
						return overLimit(j.name, TooLarge, "attachments.max_cells", j.o.MaxCells, "a shared-strings table of %d strings or more", len(sst)+1)
					}
					sst = append(sst, text.String())
					inSI = false
				case "t":
					inT = false
				case "rPh":
					phonetic--
				}
			case xml.CharData:
				if inSI && inT && phonetic == 0 {
					if err := j.hold(len(t)); err != nil {
						return err
					}
					text.Write(t)
				}
			}
		}
		return nil
	})
	return sst, err
}

// numKind is how a number in a cell of a style is shown.
type numKind uint8

const (
	numGeneral numKind = iota
	numDate
	numTime
	numDateTime
	numPercent
)

// builtinKinds are the built-in number formats that are not General.
var builtinKinds = map[int]numKind{
	9: numPercent, 10: numPercent,
	14: numDate, 15: numDate, 16: numDate, 17: numDate, 22: numDateTime,
	18: numTime, 19: numTime, 20: numTime, 21: numTime, 45: numTime, 46: numTime, 47: numTime,
	27: numDate, 28: numDate, 29: numDate, 30: numDate, 31: numDate, 32: numTime, 33: numTime, 34: numTime, 35: numTime, 36: numDate,
	50: numDate, 51: numDate, 52: numDate, 53: numDate, 54: numDate, 55: numTime, 56: numTime, 57: numDate, 58: numDate,
}

// cellStyles reads xl/styles.xml: the number format of each cell style
// (<cellXfs>'s <xf>s, in order).
func (j *job) cellStyles(z *officeZip) ([]numKind, error) {
	if z.files["xl/styles.xml"] == nil {
		return nil, nil
	}
	custom := map[int]numKind{}
	var kinds []numKind
	inXfs := false
	err := z.read("xl/styles.xml", func(x *xmlReader) error {
		for tok, err := range x.tokens() {
			if err != nil {
				return err
			}
			switch t := tok.(type) {
			case xml.StartElement:
				switch t.Name.Local {
				case "numFmt":
					if id, err := strconv.Atoi(attr(t, "numFmtId")); err == nil {
						custom[id] = formatKind(attr(t, "formatCode"))
					}
				case "cellXfs":
					inXfs = true
				case "xf":
					if inXfs {
						id, _ := strconv.Atoi(attr(t, "numFmtId"))
						k, ok := custom[id]
						if !ok {
							k = builtinKinds[id]
						}
						kinds = append(kinds, k)
					}
				}
			case xml.EndElement:
				if t.Name.Local == "cellXfs" {
					inXfs = false
				}
			}
		}
		return nil
	})
	return kinds, err
}

// formatKind classifies a custom number format code: dates and times by
// their y, m, d, h and s outside quotes and brackets, percentages by %.
func formatKind(code string) numKind {
	var b strings.Builder
	quoted, bracket := false, false
	for i := 0; i < len(code); i++ {
		switch c := code[i]; {
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '[':
			bracket = true
		case c == ']':
			bracket = false
		case bracket:
		case c == '\\' || c == '_' || c == '*':
			i++ // an escaped or padding character
		default:
			b.WriteByte(c | 0x20) // lower case for letters
		}
	}
	s := b.String()
	date := strings.ContainsAny(s, "yd")
	clock := strings.ContainsAny(s, "hs")
	switch {
	case date && clock:
		return numDateTime
	case date || (strings.Contains(s, "m") && !clock):
		return numDate
	case clock:
		return numTime
	case strings.Contains(s, "%"):
		return numPercent
	}
	return numGeneral
}

// cellValue is a cell's value as shown: a shared string, inline text, a
// boolean, an error, or a number in its style's format (dates and times
// in ISO form, percentages with %, others with at most 15 significant
// digits, as Excel shows them).
func (wb *workbook) cellValue(typ string, style int, raw string) string {
	switch typ {
	case "s":
		i, err := strconv.Atoi(strings.TrimSpace(raw))
		if err != nil || i < 0 || i >= len(wb.sst) {
			return ""
		}
		return wb.sst[i]
	case "b":
		if strings.TrimSpace(raw) == "1" {
			return "TRUE"
		}
		return "FALSE"
	case "inlineStr", "str", "e", "d":
		return raw
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return raw
	}
	kind := numGeneral
	if style >= 0 && style < len(wb.styles) {
		kind = wb.styles[style]
	}
	switch kind {
	case numPercent:
		return strconv.FormatFloat(f*100, 'g', 15, 64) + "%"
	case numDate, numTime, numDateTime:
		if t, ok := excelTime(f, wb.date1904); ok {
			return t.Format(map[numKind]string{numDate: "2006-01-02", numTime: "15:04:05", numDateTime: "2006-01-02 15:04:05"}[kind])
		}
	}
	return strconv.FormatFloat(f, 'g', 15, 64)
}

// excelTime is the time of a date serial: days since 1899-12-30 (serials
// before 60 a day later, for the leap day 1900 never had), or since
// 1904-01-01 in a 1904 workbook; false past the year 9999.
func excelTime(serial float64, date1904 bool) (time.Time, bool) {
	if serial < 0 || serial > 2958466 {
		return time.Time{}, false
	}
	base := time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)
	if date1904 {
		base = time.Date(1904, 1, 1, 0, 0, 0, 0, time.UTC)
	} else if serial < 60 {
		serial++
	}
	days := math.Floor(serial)
	secs := math.Round((serial - days) * 86400)
	return base.AddDate(0, 0, int(days)).Add(time.Duration(secs) * time.Second), true
}
