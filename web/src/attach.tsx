// Chat attachments (docs/attachments.md): files picked in the composer
// become the `attachments` of POST /wunder — pictures as `image` data
// URLs, text files as `text`, other documents as `file` data URLs (the
// server sniffs the real type and converts documents to Markdown) — and
// show as chips, in the composer (removable) and on the question in the
// transcript and the session's history.
import type { Strings } from './i18n';

export interface Attachment {
  type: 'text' | 'file' | 'image';
  name: string;
  content: string;
  mime_type?: string;
  size?: number;
}

const TEXT_EXT = /\.(txt|md|markdown|csv|tsv|json|ya?ml|toml|ini|log|xml|go|py|js|ts|tsx|jsx|java|c|h|cc|cpp|rs|rb|sh|sql|css)$/i;

function dataURL(f: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result));
    r.onerror = () => reject(r.error);
    r.readAsDataURL(f);
  });
}

/** readAttachment reads a picked file as the attachment the API takes. */
export async function readAttachment(f: File): Promise<Attachment> {
  const mime = f.type || undefined;
  if (f.type.startsWith('image/')) return { type: 'image', name: f.name, content: await dataURL(f), mime_type: mime, size: f.size };
  // HTML goes as a file: the server converts it to Markdown
  if ((f.type.startsWith('text/') && f.type !== 'text/html') || f.type === 'application/json' || TEXT_EXT.test(f.name))
    return { type: 'text', name: f.name, content: await f.text(), mime_type: mime, size: f.size };
  return { type: 'file', name: f.name, content: await dataURL(f), mime_type: mime, size: f.size };
}

export function fmtSize(n: number | undefined): string {
  if (n === undefined) return '';
  if (n < 1024) return n + ' B';
  if (n < 1048576) return (n / 1024).toFixed(1) + ' KB';
  return (n / 1048576).toFixed(1) + ' MB';
}

/** Chips lists attachments; with onRemove each has a remove button. */
export function Chips({ s, list, onRemove }: { s: Strings; list: Attachment[]; onRemove?: (i: number) => void }) {
  if (!list.length) return null;
  return (
    <ul class="chips" aria-label={s.attachments}>
      {list.map((a, i) => (
        <li class="chip" data-type={a.type} data-name={a.name}>
          {a.type === 'image' && a.content.startsWith('data:image/') ? <img src={a.content} alt="" /> : <span aria-hidden="true">{a.type === 'text' ? '≡' : '▤'}</span>}
          <span class="chip-name">{a.name}</span>
          {a.size !== undefined && <span class="muted">{fmtSize(a.size)}</span>}
          {onRemove && (
            <button type="button" class="ghost small" aria-label={s.remove + ' ' + a.name} onClick={() => onRemove(i)}>
              ×
            </button>
          )}
        </li>
      ))}
    </ul>
  );
}
