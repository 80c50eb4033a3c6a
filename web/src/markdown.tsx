// Markdown as Preact elements (answers, the workspace preview, SKILL.md):
// marked (pinned in package.json) parses GFM into tokens, and this file
// turns each token into an element. No HTML string is ever built or
// parsed, so nothing the source says can run: raw HTML is shown as text,
// links keep only http(s) and mailto targets (resolved the way the browser
// would, so "java\tscript:" is caught too), and images become links, never
// loads (the console's CSP allows images from its own origin only, and a
// remote image in an answer would be a tracking pixel). Code blocks are
// highlighted by ./code.
import { useMemo } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import { marked, type Token, type Tokens } from 'marked';
import { Code } from './code';

/** MAX is the longest source rendered as Markdown; longer text is shown plain. */
export const MAX = 200_000;

/** safeHref resolves h against the page and keeps it only when it is http(s) or mailto. */
export function safeHref(h: string): string | undefined {
  try {
    const u = new URL(h, location.href);
    if (u.protocol === 'http:' || u.protocol === 'https:' || u.protocol === 'mailto:') return u.href;
  } catch {
    /* not a URL */
  }
  return undefined;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', copy: '©', reg: '®', hellip: '…', mdash: '—', ndash: '–' };

/** decode replaces the character references marked leaves in text tokens with their characters. */
function decode(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(/&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z]{2,8});/g, (m, e: string) => {
    if (e[0] !== '#') return ENTITIES[e] ?? m;
    const n = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
    return n > 0 && n <= 0x10ffff && (n < 0xd800 || n > 0xdfff) ? String.fromCodePoint(n) : '\ufffd';
  });
}

function inline(tokens: Token[] | undefined): ComponentChildren[] {
  return (tokens || []).map((t) => {
    switch (t.type) {
      case 'text':
        return t.tokens ? inline(t.tokens) : decode(t.raw);
      case 'escape':
        return t.text;
      case 'strong':
        return <strong>{inline(t.tokens)}</strong>;
      case 'em':
        return <em>{inline(t.tokens)}</em>;
      case 'del':
        return <del>{inline(t.tokens)}</del>;
      case 'codespan':
        return <code>{t.text}</code>;
      case 'br':
        return <br />;
      case 'link': {
        const href = safeHref(t.href);
        if (!href) return inline(t.tokens);
        return (
          <a href={href} title={t.title || undefined} rel="noopener noreferrer nofollow" target="_blank">
            {inline(t.tokens)}
          </a>
        );
      }
      case 'image': {
        const href = safeHref(t.href);
        const label = t.text || t.href;
        return href ? (
          <a class="image-link" href={href} title={href} rel="noopener noreferrer nofollow" target="_blank">
            {label}
          </a>
        ) : (
          label
        );
      }
      case 'checkbox':
        return (t as Tokens.Checkbox).checked ? '☑ ' : '☐ ';
      case 'html':
      default:
        return t.raw; // raw HTML, or a token this version does not know: its source, as text
    }
  });
}

function cell(c: Tokens.TableCell, Tag: 'th' | 'td') {
  return <Tag class={c.align ? 'align-' + c.align : undefined}>{inline(c.tokens)}</Tag>;
}

function blocks(tokens: Token[], shift: number): ComponentChildren[] {
  return tokens.map((t) => {
    switch (t.type) {
      case 'space':
      case 'def':
        return null;
      case 'hr':
        return <hr />;
      case 'heading': {
        const Tag = ('h' + Math.min(6, t.depth + shift)) as 'h2';
        return <Tag>{inline(t.tokens)}</Tag>;
      }
      case 'paragraph':
        return <p>{inline(t.tokens)}</p>;
      case 'text': // a tight list item's text
        return t.tokens ? inline(t.tokens) : decode(t.raw);
      case 'code':
        return <Code text={t.text} lang={(t.lang || '').split(/\s/)[0]} />;
      case 'blockquote':
        return <blockquote>{blocks(t.tokens || [], shift)}</blockquote>;
      case 'list': {
        const l = t as Tokens.List;
        const items = l.items.map((it) => <li class={it.task ? 'task' : undefined}>{blocks(it.tokens, shift)}</li>);
        if (!l.ordered) return <ul>{items}</ul>;
        return <ol start={typeof l.start === 'number' && l.start !== 1 ? l.start : undefined}>{items}</ol>;
      }
      case 'table': {
        const tb = t as Tokens.Table;
        return (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>{tb.header.map((c) => cell(c, 'th'))}</tr>
              </thead>
              <tbody>
                {tb.rows.map((r) => (
                  <tr>{r.map((c) => cell(c, 'td'))}</tr>
                ))}
              </tbody>
            </table>
          </div>
        );
      }
      case 'checkbox':
        return (t as Tokens.Checkbox).checked ? '☑ ' : '☐ ';
      case 'html':
        return <p class="raw-html">{t.raw}</p>;
      default:
        return 'tokens' in t && t.tokens ? inline(t.tokens) : t.raw;
    }
  });
}

/**
 * Markdown renders GFM source as elements. shift moves headings down
 * (# becomes h{1+shift}) so they fit under the page's own headings.
 * breaks makes a single line break a <br> (a model's answer, where a line
 * break is meant as one; GitHub does the same in comments), where a file
 * keeps Markdown's soft breaks.
 */
export function Markdown({ source, shift = 1, breaks = false, class: cls }: { source: string; shift?: number; breaks?: boolean; class?: string }) {
  const out = useMemo(() => {
    if (source.length > MAX) return <pre>{source}</pre>;
    try {
      return blocks(marked.lexer(source, { ...marked.defaults, gfm: true, breaks }), shift);
    } catch {
      return <pre>{source}</pre>; // marked throws on nothing it is documented to, but a page must not break on an answer
    }
  }, [source, shift, breaks]);
  return <div class={'markdown' + (cls ? ' ' + cls : '')}>{out}</div>;
}
