// A light syntax highlighter for small code files: comments, strings,
// numbers and a shared keyword list, as spans. Files over LIMIT bytes are
// shown plain (the regex pass is linear but the DOM is not free).
import type { ComponentChildren } from 'preact';

export const LIMIT = 20_000;

const CODE = /\.(go|ts|tsx|js|jsx|mjs|py|rs|java|c|h|cc|cpp|hpp|cs|rb|php|sh|bash|zsh|sql|kt|swift|scala|lua|yaml|yml|toml|json|css|proto)$/i;

const TOKEN =
  /(\/\/[^\n]*|#[^\n]*|\/\*[\s\S]*?\*\/)|("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`[^`]*`)|\b(\d+(?:\.\d+)?)\b|\b(func|function|return|if|else|for|while|switch|case|break|continue|const|let|var|type|interface|struct|class|def|import|from|package|export|default|new|try|catch|finally|throw|async|await|in|of|range|go|defer|select|chan|map|nil|null|true|false|None|True|False|self|this|fn|pub|impl|use|mod|match|enum|static|public|private|protected|void|int|string|bool)\b/g;

export function isCode(name: string): boolean {
  return CODE.test(name);
}

/** highlight splits src into plain text and classed spans. */
export function highlight(src: string, name: string): ComponentChildren[] {
  const hashComments = /\.(py|sh|bash|zsh|rb|yaml|yml|toml)$/i.test(name);
  const out: ComponentChildren[] = [];
  let last = 0;
  for (const m of src.matchAll(TOKEN)) {
    if (m[1] && m[1].startsWith('#') && !hashComments) continue;
    if (m.index! > last) out.push(src.slice(last, m.index));
    const cls = m[1] ? 'hl-c' : m[2] ? 'hl-s' : m[3] ? 'hl-n' : 'hl-k';
    out.push(<span class={cls}>{m[0]}</span>);
    last = m.index! + m[0].length;
  }
  if (last < src.length) out.push(src.slice(last));
  return out;
}
