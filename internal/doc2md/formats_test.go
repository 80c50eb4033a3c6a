package doc2md_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/doc2md"
	"github.com/wunder/wunder/internal/doc2md/doc2mdtest"
)

// wp is a Word paragraph of text, with pPr (a style or numPr) when set.
func wp(pPr, text string) string {
	if pPr != "" {
		pPr = "<w:pPr>" + pPr + "</w:pPr>"
	}
	return "<w:p>" + pPr + `<w:r><w:t xml:space="preserve">` + text + "</w:t></w:r></w:p>"
}

func style(name string) string { return `<w:pStyle w:val="` + name + `"/>` }

// A DOCX reads as docs/attachments.md says: Title and HeadingN styles are
// headings (a level past 6 is 6), numbered paragraphs are list items, a
// tab stays and a line break is a space, a cell's paragraphs share its
// line, and a list ends before what follows it, so the next paragraph or
// table is not read as part of its last item.
func TestDOCXStructure(t *testing.T) {
	t.Parallel()
	body := wp(style("Title"), "Plan") + wp(style("Heading2"), "Scope") + wp(style("Heading 9"), "Deep") +
		wp(`<w:numPr/>`, "one") + wp(`<w:numPr/>`, "two") +
		`<w:p><w:r><w:t>a</w:t><w:tab/><w:t>b</w:t><w:br/><w:t>c</w:t></w:r></w:p>` +
		wp(style("Normal"), "") + // an empty paragraph writes nothing
		wp(`<w:numPr/>`, "three") +
		`<w:tbl><w:tr><w:tc>` + wp("", "x") + wp("", "y") + `</w:tc><w:tc>` + wp("", "z|w") + `</w:tc></w:tr></w:tbl>`
	md := convert(t, doc2md.New(nil), "plan.docx", docxBody(body))
	want := "# Plan\n\n## Scope\n\n###### Deep\n\n- one\n- two\n\na\tb c\n\n- three\n\n| x y | z\\|w |\n| --- | --- |"
	if md != want {
		t.Errorf("Markdown:\n%q\nwant:\n%q", md, want)
	}
}

// Slides come in their number's order (slide10 after slide9, whatever
// the archive's order), each under "## Slide N"; the other parts under
// ppt/slides (relationships, layouts elsewhere) are not slides.
func TestPPTXSlideOrder(t *testing.T) {
	t.Parallel()
	texts := make([]string, 11)
	for i := range texts {
		texts[i] = fmt.Sprintf("text of %d", i+1)
	}
	md := convert(t, doc2md.New(nil), "s.pptx", doc2mdtest.PPTX(texts...))
	var want []string
	for i, s := range texts {
		want = append(want, fmt.Sprintf("## Slide %d\n\n%s", i+1, s))
	}
	if got := strings.Split(md, "\n\n## "); len(got) != len(texts) {
		t.Fatalf("%d slides in:\n%s", len(got), md)
	}
	if md != strings.Join(want, "\n\n") {
		t.Errorf("Markdown:\n%q\nwant:\n%q", md, strings.Join(want, "\n\n"))
	}

	files := map[string]string{"ppt/presentation.xml": "<p:presentation/>"}
	files["ppt/slides/slide2.xml"] = `<p:sld><a:p><a:r><a:t>second</a:t></a:r></a:p></p:sld>`
	files["ppt/slides/slideX.xml"] = `<p:sld><a:p><a:r><a:t>not a slide</a:t></a:r></a:p></p:sld>`
	files["ppt/slides/_rels/slide2.xml.rels"] = `<Relationships/>`
	files["ppt/slideLayouts/slide1.xml"] = `<p:sld><a:p><a:r><a:t>layout</a:t></a:r></a:p></p:sld>`
	if md := convert(t, doc2md.New(nil), "p.pptx", doc2mdtest.Zip(files)); md != "## Slide 2\n\nsecond" {
		t.Errorf("Markdown %q; want slide 2 alone", md)
	}
}
