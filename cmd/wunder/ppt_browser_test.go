package main

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/wunder/wunder/internal/config"
)

// The introduction deck in chromium, with an API key set (it is public):
// the first slide shows alone; the arrow keys, the buttons, End and Home
// move between slides, the counter and the hash follow; the language
// button shows the Chinese text; a reload of #3 opens slide 3; the CSP
// lets its own files run (no error logged) and nothing reaches another
// origin.
func TestPPTInBrowser(t *testing.T) {
	s := startServer(t, func(c *config.Config) { c.Security.APIKey = "k" })
	b := newBrowser(t, s.url)
	b.do("open the deck", chromedp.Navigate(s.url+"/wunder/ppt?lang=en"), chromedp.WaitVisible(chromedp.CSS(`.slide.current h1`)))
	shown := `[...document.querySelectorAll('.slide')].filter(s => getComputedStyle(s).display !== 'none')`
	b.until("slide 1 alone", shown+`.length === 1 && document.querySelector('.slide.current') === document.querySelectorAll('.slide')[0] && `+
		`document.querySelector('.counter').textContent.startsWith('1 / ') && document.querySelector('.prev').disabled`)
	b.axe("deck, slide 1")
	b.do("ArrowRight", chromedp.KeyEvent(kb.ArrowRight))
	b.until("slide 2", `document.querySelector('.counter').textContent.startsWith('2 / ') && location.hash === '#2' && `+shown+`[0] === document.querySelectorAll('.slide')[1]`)
	b.do("the next button", chromedp.Click(chromedp.CSS(`button.next`)))
	b.until("slide 3", `document.querySelector('.counter').textContent.startsWith('3 / ') && location.hash === '#3'`)
	b.do("ArrowLeft", chromedp.KeyEvent(kb.ArrowLeft))
	b.until("slide 2 again", `document.querySelector('.counter').textContent.startsWith('2 / ')`)
	b.do("End", chromedp.KeyEvent(kb.End))
	b.until("the last slide", `(() => { const n = document.querySelectorAll('.slide').length; return document.querySelector('.counter').textContent === n + ' / ' + n && document.querySelector('.next').disabled })()`)
	b.do("Home", chromedp.KeyEvent(kb.Home))
	b.until("slide 1", `document.querySelector('.counter').textContent.startsWith('1 / ')`)
	b.do("中文", chromedp.Click(chromedp.CSS(`button.lang`)))
	b.until("the Chinese text", `document.documentElement.lang === 'zh-CN' && document.querySelector('.slide.current [lang="zh"]').offsetParent !== null && `+
		`document.querySelector('.slide.current [lang="en"]').offsetParent === null && document.querySelector('.slide.current [lang="zh"] .big').textContent.includes('协议网关')`)
	b.shot("ppt-zh")
	b.do("a reload of slide 3", chromedp.Navigate(s.url+"/wunder/ppt#3"), chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`.slide.current`)))
	b.until("slide 3, still in Chinese", `document.querySelector('.counter').textContent.startsWith('3 / ') && document.documentElement.dataset.lang === 'zh'`)
	b.shot("ppt-3")
	b.clean()
}
