package doc2md

import (
	"io"
	"strings"
)

// Tables: a format that says its width only at the end (DOCX, PPTX and
// HTML tables) is kept in a tableBuf until then, its cells counted as
// they come; a format that can be read twice (XLSX sheets, CSV) is
// measured first and then written row by row with writeRow. Either way a
// table's cells, rows and columns are bounded before they are padded.

// cellEscaper escapes a table cell's pipes and flattens its line breaks.
var cellEscaper = strings.NewReplacer("|", `\|`, "\r\n", " ", "\n", " ")

// writeRow writes one row of a Markdown table of width columns (cells
// past width are left out, missing ones are empty); with sep, the header
// separator follows it.
func writeRow(w io.StringWriter, cells []string, width int, sep bool) error {
	if _, err := w.WriteString("|"); err != nil {
		return err
	}
	for i := range width {
		cell := ""
		if i < len(cells) {
			cell = cellEscaper.Replace(strings.TrimSpace(cells[i]))
		}
		if _, err := w.WriteString(" " + cell + " |"); err != nil {
			return err
		}
	}
	if _, err := w.WriteString("\n"); err != nil {
		return err
	}
	if sep {
		_, err := w.WriteString("|" + strings.Repeat(" --- |", width) + "\n")
		return err
	}
	return nil
}

// tableBuf is a table being read: its rows, and the cell being written.
type tableBuf struct {
	rows   [][]string
	cell   strings.Builder
	inCell bool
	// held is what the table's text counts in job.held.
	held int64
}

// startRow ends the open cell and row and starts a row.
func (j *job) startRow(t *tableBuf) error {
	j.endCell(t)
	t.rows = append(t.rows, nil)
	return j.checkRows(len(t.rows))
}

// startCell ends the open cell and starts one in the last row (a row is
// started when there is none).
func (j *job) startCell(t *tableBuf) error {
	j.endCell(t)
	if len(t.rows) == 0 {
		if err := j.startRow(t); err != nil {
			return err
		}
	}
	if err := j.checkColumns(len(t.rows[len(t.rows)-1]) + 1); err != nil {
		return err
	}
	t.inCell = true
	return j.addCells(1)
}

// endCell moves the open cell's text into its row.
func (j *job) endCell(t *tableBuf) {
	if !t.inCell {
		return
	}
	last := len(t.rows) - 1
	t.rows[last] = append(t.rows[last], t.cell.String())
	t.cell.Reset()
	t.inCell = false
}

// cellText adds a paragraph's text to the open cell, a space between it
// and what the cell holds.
func (j *job) cellText(t *tableBuf, text string) error {
	if t.inCell && t.cell.Len() > 0 && text != "" {
		text = " " + text
	}
	return j.cellWrite(t, text)
}

// cellWrite adds text to the open cell as it is; without an open cell
// the text is left out (as a browser moves it out of the table).
func (j *job) cellWrite(t *tableBuf, text string) error {
	if !t.inCell || text == "" {
		return nil
	}
	if err := j.hold(len(text)); err != nil {
		return err
	}
	t.held += int64(len(text))
	t.cell.WriteString(text)
	return nil
}

// renderTable writes t as a Markdown table, its first row the header,
// every row padded to the widest (the padding counted as cells), and
// gives back what its text held.
func (j *job) renderTable(w io.StringWriter, t *tableBuf) error {
	j.endCell(t)
	defer func() { j.release(t.held); t.held = 0 }()
	width, cells := 0, 0
	for _, r := range t.rows {
		width = max(width, len(r))
		cells += len(r)
	}
	if width == 0 {
		return nil
	}
	if err := j.addCells(int64(len(t.rows))*int64(width) - int64(cells)); err != nil {
		return err
	}
	for i, r := range t.rows {
		if err := j.tick(); err != nil {
			return err
		}
		if err := writeRow(w, r, width, i == 0); err != nil {
			return err
		}
	}
	return nil
}

// nestedTable renders an inner table on one line, for its outer table's
// cell.
func (j *job) nestedTable(t *tableBuf) (string, error) {
	var sb strings.Builder
	if err := j.renderTable(&sb, t); err != nil {
		return "", err
	}
	return strings.TrimSpace(strings.ReplaceAll(sb.String(), "\n", " ")), nil
}
