// wunder's introduction deck (/wunder/ppt): one slide at a time. Arrow
// keys, Page Up/Down, Space, Home and End move; so do the buttons. The
// slide's number is the URL's hash (#3), so a slide can be linked and a
// reload stays on it. The language is ?lang=en|zh, else the one chosen
// last here, else the browser's; the button switches it.
(() => {
  'use strict';
  const root = document.documentElement;
  const slides = Array.from(document.querySelectorAll('.slide'));
  const counter = document.querySelector('.counter');
  const prev = document.querySelector('.prev');
  const next = document.querySelector('.next');
  const langBtn = document.querySelector('.lang');
  const fullBtn = document.querySelector('.full');
  const n = slides.length;
  let cur = 0;

  const labels = {
    en: { prev: 'Previous slide', next: 'Next slide', other: '中文', full: 'Full screen', slides: 'Slides', of: 'of', title: 'wunder — an introduction' },
    zh: { prev: '上一页', next: '下一页', other: 'English', full: '全屏', slides: '幻灯片', of: '/', title: 'wunder 系统介绍' },
  };

  function setLang(l) {
    if (l !== 'en' && l !== 'zh') l = 'en';
    root.dataset.lang = l;
    root.lang = l === 'zh' ? 'zh-CN' : 'en';
    const t = labels[l];
    prev.setAttribute('aria-label', t.prev);
    next.setAttribute('aria-label', t.next);
    langBtn.textContent = t.other;
    langBtn.setAttribute('aria-label', t.other);
    fullBtn.setAttribute('aria-label', t.full);
    document.querySelector('.controls').setAttribute('aria-label', t.slides);
    document.title = t.title;
    try { localStorage.setItem('wunder.ppt.lang', l); } catch (e) { /* storage off: the choice lasts this page */ }
    show(cur);
  }

  function show(i) {
    cur = Math.max(0, Math.min(n - 1, i));
    slides.forEach((s, j) => {
      const on = j === cur;
      s.classList.toggle('current', on);
      s.setAttribute('aria-hidden', on ? 'false' : 'true');
      s.setAttribute('aria-label', (j + 1) + ' ' + labels[root.dataset.lang].of + ' ' + n);
    });
    counter.textContent = (cur + 1) + ' / ' + n;
    prev.disabled = cur === 0;
    next.disabled = cur === n - 1;
    const h = '#' + (cur + 1);
    if (location.hash !== h) history.replaceState(null, '', h);
  }

  prev.addEventListener('click', () => show(cur - 1));
  next.addEventListener('click', () => show(cur + 1));
  langBtn.addEventListener('click', () => setLang(root.dataset.lang === 'zh' ? 'en' : 'zh'));
  fullBtn.addEventListener('click', () => {
    if (document.fullscreenElement) document.exitFullscreen();
    else if (root.requestFullscreen) root.requestFullscreen().catch(() => {});
  });
  document.addEventListener('keydown', (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const to = {
      ArrowRight: cur + 1, ArrowDown: cur + 1, PageDown: cur + 1, ' ': cur + 1,
      ArrowLeft: cur - 1, ArrowUp: cur - 1, PageUp: cur - 1, Home: 0, End: n - 1,
    }[e.key];
    if (to === undefined) return;
    if (e.key === ' ' && e.target instanceof HTMLButtonElement) return; // Space presses a focused button
    e.preventDefault();
    show(to);
  });
  addEventListener('hashchange', () => {
    const i = parseInt(location.hash.slice(1), 10);
    if (i >= 1 && i <= n && i - 1 !== cur) show(i - 1);
  });

  const fromHash = parseInt(location.hash.slice(1), 10);
  cur = fromHash >= 1 && fromHash <= n ? fromHash - 1 : 0;
  let saved = null;
  try { saved = localStorage.getItem('wunder.ppt.lang'); } catch (e) { /* none */ }
  const asked = new URLSearchParams(location.search).get('lang');
  setLang(asked || saved || (navigator.language.toLowerCase().startsWith('zh') ? 'zh' : 'en'));
})();
