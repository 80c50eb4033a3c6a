package doc2md

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// job is one conversion: its context (cancelled past Options.Timeout),
// the Markdown it builds and the counts its limits bound. Every decoder
// writes through it, so the bounds hold whatever the format.
type job struct {
	ctx  context.Context
	name string
	o    *Options
	clip bool
	out  mdOut
	// held counts the bytes of text kept to build the Markdown (table
	// cells waiting for their table's end, a workbook's shared strings),
	// bounded by MaxOutputBytes.
	held int64
	// cells counts the cells of the document's tables (MaxCells).
	cells int64
	ticks int
}

func (c *Converter) newJob(ctx context.Context, name string, clip bool) *job {
	j := &job{ctx: ctx, name: name, o: &c.opts, clip: clip}
	j.out = mdOut{name: name, max: c.opts.MaxOutputBytes, keep: c.opts.MaxOutputBytes}
	if clip {
		// Enough bytes for MaxChars characters and one more.
		j.out.keep = min(j.out.keep, 4*int64(c.opts.MaxChars)+4)
	}
	return j
}

// markdown is the Markdown written, trimmed, and clipped at MaxChars with
// a note when the job clips.
func (j *job) markdown() string {
	md := strings.TrimSpace(j.out.sb.String())
	switch {
	case !j.clip:
		return md
	case j.out.n <= j.out.keep:
		if n := utf8.RuneCountInString(md); n > j.o.MaxChars {
			return clipAt(md, j.o.MaxChars, int64(n))
		}
		return md
	default:
		// What TrimSpace took off: the kept text's start, the stream's end.
		lead := utf8.RuneCountInString(j.out.sb.String()) - utf8.RuneCountInString(strings.TrimLeftFunc(j.out.sb.String(), unicode.IsSpace))
		return clipAt(md, j.o.MaxChars, j.out.chars-int64(lead)-j.out.trail)
	}
}

// tick checks, every few hundred calls, that the conversion's time is not
// up; decoders call it in their loops.
func (j *job) tick() error {
	if j.ticks++; j.ticks&255 != 0 {
		return nil
	}
	return j.alive()
}

// alive reports a conversion past its time (TooComplex) or given up by
// its caller (errCanceled).
func (j *job) alive() error {
	if err := j.ctx.Err(); err != nil {
		if context.Cause(j.ctx) == errTimeout {
			return &Error{Name: j.name, Kind: TooComplex, Limit: "attachments.timeout_s", Max: int64(j.o.Timeout.Seconds()),
				Msg: fmt.Sprintf("it did not convert within %v, the limit (attachments.timeout_s)", j.o.Timeout)}
		}
		return fmt.Errorf("%w: %w", errCanceled, err)
	}
	return nil
}

// fail is the error a conversion ends with: an *Error or a cancellation
// as they are, a context error as alive reports it, anything else as a
// document that cannot be read.
func (j *job) fail(err error) error {
	var e *Error
	switch {
	case errors.As(err, &e), errors.Is(err, errCanceled):
		return err
	case j.ctx.Err() != nil:
		return j.alive()
	}
	return err
}

// hold counts n more bytes of text kept to build the Markdown.
func (j *job) hold(n int) error {
	j.held += int64(n)
	if j.held > j.o.MaxOutputBytes {
		return overLimit(j.name, TooLarge, "attachments.max_output_bytes", j.o.MaxOutputBytes,
			"converting it holds %d bytes of text", j.held)
	}
	return nil
}

// release gives back n bytes counted by hold.
func (j *job) release(n int64) { j.held -= n }

// addCells counts n more table cells.
func (j *job) addCells(n int64) error {
	j.cells += n
	if j.cells > j.o.MaxCells {
		return overLimit(j.name, TooLarge, "attachments.max_cells", j.o.MaxCells, "%d table cells or more", j.cells)
	}
	return nil
}

// checkCells refuses n more table cells when they would be past
// MaxCells, without counting them.
func (j *job) checkCells(n int64) error {
	if j.cells+n > j.o.MaxCells {
		return overLimit(j.name, TooLarge, "attachments.max_cells", j.o.MaxCells, "%d table cells or more", j.cells+n)
	}
	return nil
}

// checkRows refuses a table of more than MaxRows rows.
func (j *job) checkRows(rows int) error {
	if rows > j.o.MaxRows {
		return overLimit(j.name, TooLarge, "attachments.max_rows", int64(j.o.MaxRows), "a table of %d rows or more", rows)
	}
	return nil
}

// checkColumns refuses a table with a cell in column cols, past
// MaxColumns.
func (j *job) checkColumns(cols int) error {
	if cols > j.o.MaxColumns {
		return overLimit(j.name, TooLarge, "attachments.max_columns", int64(j.o.MaxColumns), "a table with a cell in column %d", cols)
	}
	return nil
}

// mdOut is the Markdown of a conversion: it counts every byte and
// character written and refuses past max bytes, but keeps only the first
// keep bytes (a clipped conversion needs no more).
type mdOut struct {
	name  string
	sb    strings.Builder
	keep  int64
	max   int64
	n     int64 // bytes written
	chars int64 // characters written
	// nl counts the newlines the Markdown ends with (at most 2), trail
	// the white-space characters.
	nl    int
	trail int64
}

// WriteString writes s; past max bytes it fails with an *Error.
func (o *mdOut) WriteString(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	o.n += int64(len(s))
	if o.n > o.max {
		return 0, overLimit(o.name, TooLarge, "attachments.max_output_bytes", o.max, "its Markdown reaches %d bytes", o.n)
	}
	o.chars += int64(utf8.RuneCountInString(s))
	if room := o.keep - int64(o.sb.Len()); room > 0 {
		o.sb.WriteString(s[:min(int64(len(s)), room)])
	}
	nl := len(s) - len(strings.TrimRight(s, "\n"))
	space := utf8.RuneCountInString(s) - utf8.RuneCountInString(strings.TrimRightFunc(s, unicode.IsSpace))
	if nl == len(s) {
		nl += o.nl
	}
	if space == utf8.RuneCountInString(s) {
		space += int(o.trail)
	}
	o.nl, o.trail = min(nl, 2), int64(space)
	return len(s), nil
}

// skip counts n bytes of Markdown that were not kept (a program's output
// past what its capture kept), each byte as a character.
func (o *mdOut) skip(n int64) error {
	if n <= 0 {
		return nil
	}
	o.n += n
	o.chars += n
	o.nl, o.trail = 0, 0
	if o.n > o.max {
		return overLimit(o.name, TooLarge, "attachments.max_output_bytes", o.max, "its Markdown reaches %d bytes", o.n)
	}
	return nil
}

// write is WriteString for callers that need only the error.
func (o *mdOut) write(ss ...string) error {
	for _, s := range ss {
		if _, err := o.WriteString(s); err != nil {
			return err
		}
	}
	return nil
}

// empty reports whether nothing was written yet.
func (o *mdOut) empty() bool { return o.n == 0 }
