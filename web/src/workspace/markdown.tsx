// A small Markdown renderer that builds Preact elements, never HTML
// strings: raw HTML in the source is shown as text, links keep only
// http(s), mailto and relative targets. Enough for READMEs and notes:
// headings, paragraphs, lists, quotes, fenced code, rules, inline code,
// emphasis and links.
import type { ComponentChildren } from 'preact';

function safeHref(h: string): string | undefined {
  const t = h.trim();
  if (/^(https?:|mailto:)/i.test(t) || (!/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith('//'))) return t;
  return undefined;
}

const INLINE = /(`[^`]+`)|(\*\*[^*]+\*\*|__[^_]+__)|(\*[^*\s][^*]*\*|_[^_\s][^_]*_)|(\[[^\]]+\]\([^)\s]+\))/;

export function inline(text: string): ComponentChildren[] {
  const out: ComponentChildren[] = [];
  let rest = text;
  for (let m = INLINE.exec(rest); m; m = INLINE.exec(rest)) {
    if (m.index > 0) out.push(rest.slice(0, m.index));
    const tok = m[0];
    if (m[1]) out.push(<code>{tok.slice(1, -1)}</code>);
    else if (m[2]) out.push(<strong>{inline(tok.slice(2, -2))}</strong>);
    else if (m[3]) out.push(<em>{inline(tok.slice(1, -1))}</em>);
    else {
      const [, label, href] = /^\[([^\]]+)\]\(([^)\s]+)\)$/.exec(tok)!;
      const safe = safeHref(href);
      out.push(
        safe ? (
          <a href={safe} rel="noopener noreferrer" target="_blank">
            {inline(label)}
          </a>
        ) : (
          label
        ),
      );
    }
    rest = rest.slice(m.index + tok.length);
  }
  if (rest) out.push(rest);
  return out;
}

export function Markdown({ source }: { source: string }) {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const blocks: ComponentChildren[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) {
      i++;
      continue;
    }
    const fence = /^(```|~~~)/.exec(line);
    if (fence) {
      const body: string[] = [];
      for (i++; i < lines.length && !lines[i].startsWith(fence[1]); i++) body.push(lines[i]);
      i++;
      blocks.push(<pre>{body.join('\n')}</pre>);
      continue;
    }
    const h = /^(#{1,6})\s+(.*)$/.exec(line);
    if (h) {
      const Tag = ('h' + Math.min(6, h[1].length + 1)) as 'h2';
      blocks.push(<Tag>{inline(h[2])}</Tag>);
      i++;
      continue;
    }
    if (/^(-{3,}|\*{3,}|_{3,})\s*$/.test(line)) {
      blocks.push(<hr />);
      i++;
      continue;
    }
    if (/^>\s?/.test(line)) {
      const body: string[] = [];
      for (; i < lines.length && /^>\s?/.test(lines[i]); i++) body.push(lines[i].replace(/^>\s?/, ''));
      blocks.push(
        <blockquote>
          <Markdown source={body.join('\n')} />
        </blockquote>,
      );
      continue;
    }
    const item = /^\s*([-*+]|\d+[.)])\s+/;
    if (item.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const items: string[] = [];
      for (; i < lines.length && lines[i].trim(); i++) {
        if (item.test(lines[i])) items.push(lines[i].replace(item, ''));
        else items[items.length - 1] += ' ' + lines[i].trim();
      }
      const lis = items.map((t) => <li>{inline(t)}</li>);
      blocks.push(ordered ? <ol>{lis}</ol> : <ul>{lis}</ul>);
      continue;
    }
    const para: string[] = [];
    for (; i < lines.length && lines[i].trim() && !/^(#{1,6}\s|```|~~~|>|\s*([-*+]|\d+[.)])\s)/.test(lines[i]); i++) para.push(lines[i]);
    if (!para.length) para.push(lines[i++]);
    blocks.push(<p>{inline(para.join(' '))}</p>);
  }
  return <div class="markdown">{blocks}</div>;
}
