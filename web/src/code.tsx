// Highlighted code for answers and the workspace preview. The highlighter
// (lowlight over highlight.js's common languages, ./hl) is a chunk of its
// own, fetched the first time a code block names a language it might know:
// a page without code never loads it. Until then, and for code over LIMIT
// or in a language it does not know, the code is shown plain. lowlight
// returns a syntax tree, which becomes spans here: no HTML string.
import { useEffect, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import type { RootContent } from 'hast';

/** LIMIT is the largest code highlighted; longer code is shown plain. */
export const LIMIT = 20_000;

type HL = typeof import('./hl');
let hl: HL | null = null;
let loading: Promise<HL> | null = null;

function load(): Promise<HL> {
  loading ||= import('./hl').then((m) => (hl = m));
  return loading;
}

function spans(nodes: RootContent[]): ComponentChildren[] {
  return nodes.map((n) => {
    if (n.type === 'text') return n.value;
    if (n.type === 'element') {
      const cls = n.properties?.className;
      return <span class={Array.isArray(cls) ? cls.join(' ') : undefined}>{spans(n.children as RootContent[])}</span>;
    }
    return null;
  });
}

/** langOf names the language of a file by its extension ("main.go" → "go"), '' when it has none. */
export function langOf(name: string): string {
  const i = name.lastIndexOf('.');
  return i > 0 ? name.slice(i + 1).toLowerCase() : '';
}

export function Code({ text, lang }: { text: string; lang?: string }) {
  const [, loaded] = useState(0);
  const want = !!lang && text.length <= LIMIT;
  useEffect(() => {
    if (want && !hl) load().then(() => loaded((n) => n + 1), () => {});
  }, [want]);
  let body: ComponentChildren = text;
  if (want && hl?.lowlight.registered(lang!)) body = spans(hl.lowlight.highlight(lang!, text).children);
  return (
    <pre class="code" data-lang={lang || undefined}>
      <code class={lang ? 'hljs language-' + lang : undefined}>{body}</code>
    </pre>
  );
}
