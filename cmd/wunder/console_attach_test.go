package main

import (
	"bytes"
	"image"
	"image/color"
	pngenc "image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// Chat attachments: a text file and a picture attached in the composer
// (a third attached and removed) go with the question; the fake model
// answers with what it got of them; the chips show on the question, and
// again in the session's history after a reload; a file the server
// refuses shows its problem and stays attached.
func TestConsoleAttachments(t *testing.T) {
	s := startServer(t, nil)
	b := openAnon(t, s, "jo")
	dir := t.TempDir()
	notes, extra, bin := filepath.Join(dir, "notes.txt"), filepath.Join(dir, "extra.txt"), filepath.Join(dir, "tool.exe")
	for p, data := range map[string][]byte{
		notes: []byte("Q3 only: revenue grew 12 percent"),
		extra: []byte("not this one"),
		bin:   append([]byte{0x7f, 'E', 'L', 'F', 2, 1, 1, 0}, bytes.Repeat([]byte{0, 1, 2, 0xfe}, 64)...),
	} {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	img := filepath.Join(dir, "dot.png")
	var png bytes.Buffer
	m := image.NewRGBA(image.Rect(0, 0, 4, 4))
	m.Set(1, 1, color.RGBA{G: 200, A: 255})
	if err := pngenc.Encode(&png, m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(img, png.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	b.do("attach three files", chromedp.SetUploadFiles(chromedp.CSS(`.composer input[name="attachments"]`), []string{notes, img, extra}))
	b.until("their chips", `document.querySelectorAll('.composer li.chip').length === 3 && document.querySelector('.composer li.chip[data-name="dot.png"] img')?.src.startsWith('data:image/png') && document.querySelector('.composer li.chip[data-name="notes.txt"]').textContent.includes('32 B')`)
	b.do("remove one", chromedp.Click(chromedp.CSS(`.composer button[aria-label="Remove extra.txt"]`)))
	b.until("two chips", `document.querySelectorAll('.composer li.chip').length === 2 && !document.querySelector('.composer li.chip[data-name="extra.txt"]')`)
	b.axe("chat, attachments in the composer")
	b.ask("#attachments what is in these?")
	b.until("the run to finish", lastRun+`?.dataset.state === 'finished'`)
	answer := b.eval(`[...` + lastRun + `.querySelectorAll('.text')].pop().textContent`)
	for _, want := range []string{"images=0", "[Attachment: notes.txt", "Q3 only: revenue grew 12 percent", "dot.png (image/png): an image this model cannot see"} {
		if !strings.Contains(answer, want) {
			t.Errorf("the model did not get %q:\n%s", want, answer)
		}
	}
	b.until("the chips on the question, none left in the composer", `document.querySelectorAll('.msg.user li.chip').length === 2 && !!document.querySelector('.msg.user li.chip[data-name="dot.png"] img') && document.querySelectorAll('.composer li.chip').length === 0`)
	b.shot("chat-attachments")
	b.axe("chat, attachments")

	b.do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`.sessions button.session`)))
	b.do("reopen the session", chromedp.Click(chromedp.CSS(`.sessions button.session`)))
	b.until("the chips in the history", `document.querySelectorAll('.msg.user li.chip').length === 2 && document.querySelector('.msg.user li.chip[data-name="notes.txt"]')?.textContent.includes('B') && !!document.querySelector('.msg.user li.chip[data-name="dot.png"] img')`)

	b.allow("status of 415 (Unsupported Media Type) " + s.url + "/wunder")
	b.do("attach an executable", chromedp.SetUploadFiles(chromedp.CSS(`.composer input[name="attachments"]`), []string{bin}))
	b.do("the chip", chromedp.WaitVisible(chromedp.CSS(`.composer li.chip[data-name="tool.exe"]`)))
	b.ask("and this?")
	b.until("the server's problem, the file still attached", `document.querySelector('.conversation [role="alert"]')?.textContent.includes('attachment_unsupported') && document.querySelector('.conversation [role="alert"]').textContent.includes('tool.exe') && !!document.querySelector('.composer li.chip[data-name="tool.exe"]')`)
	b.shot("chat-attachment-refused")
	b.do("a phone's width", chromedp.EmulateViewport(390, 800))
	b.until("the composer's chip, button and box on screen", `(() => { const w = document.documentElement.clientWidth; return [...document.querySelectorAll('.composer li.chip, .composer label.attach, .composer textarea, .composer button[type="submit"]')].every(e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.left >= 0 && r.right <= w + 1 }) })()`)
	b.do("the dark theme", chromedp.Click(chromedp.CSS(`header button[aria-label^="Theme"]`)))
	b.until("dark", `document.documentElement.dataset.theme === 'dark'`)
	b.axe("chat, attachments, phone, dark")
	b.shot("chat-attachments-phone-dark")
	b.clean()
}
