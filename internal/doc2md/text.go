package doc2md

import (
	"bytes"
	"encoding/csv"
	"io"
)

// csv renders a CSV (or tab-separated) file as a Markdown table, its
// first row the header: read once to measure it against MaxRows,
// MaxColumns and MaxCells, once to write it.
func (j *job) csv(data []byte) error {
	rows, width := 0, 0
	err := j.csvRecords(data, func(rec []string) error {
		rows++
		width = max(width, len(rec))
		if err := j.checkRows(rows); err != nil {
			return err
		}
		if err := j.checkColumns(width); err != nil {
			return err
		}
		return j.checkCells(int64(rows) * int64(width))
	})
	if err != nil || rows == 0 {
		return err
	}
	if err := j.addCells(int64(rows) * int64(width)); err != nil {
		return err
	}
	first := true
	return j.csvRecords(data, func(rec []string) error {
		err := writeRow(&j.out, rec, width, first)
		first = false
		return err
	})
}

// csvRecords calls fn with each record of data; the record is reused.
func (j *job) csvRecords(data []byte, fn func([]string) error) error {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	r.ReuseRecord = true
	if first, _, _ := bytes.Cut(data, []byte("\n")); bytes.Count(first, []byte("\t")) > bytes.Count(first, []byte(",")) {
		r.Comma = '\t'
	}
	for {
		if err := j.tick(); err != nil {
			return err
		}
		rec, err := r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return errorf(j.name, Unreadable, "malformed CSV: %v", err)
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
}
