// The workspace page: the user's files (docs/workspace.md) as a tree from
// GET /wunder/workspace/content?depth=, a preview (Markdown rendered as
// elements, .csv as a table, code highlighted, images as data: URLs, since the CSP
// allows no blob: images), upload, download, zip, delete, new folder and
// move. It reloads when the window regains focus and when the user's
// runs (from any client) have ended.
import { useEffect, useState } from 'preact/hooks';
import { api, apiBlob, apiForm, saveBlob, withUser, identity } from '../api';
import { lang, strings, type Strings } from '../i18n';
import { useSignal } from '../state';
import { ConfirmButton } from '../confirm';
import { Markdown } from '../markdown';
import { Code, langOf } from '../code';
import { CSVTable } from './csv';

interface Entry {
  name: string;
  path: string;
  type: string;
  size: number;
  updated_time: string;
  children?: Entry[];
}

type Preview =
  | { kind: 'text'; path: string; content: string; truncated: boolean }
  | { kind: 'image'; path: string; src: string }
  | { kind: 'dir'; path: string }
  | { kind: 'none'; path: string; reason: string };

const IMAGE = /\.(png|jpe?g|gif|webp|svg|bmp|ico)$/i;
const q = encodeURIComponent;

export function Workspace() {
  const s = strings(useSignal(lang));
  const [tree, setTree] = useState<Entry[] | null>(null);
  const [truncated, setTruncated] = useState(false);
  const [dir, setDir] = useState(''); // where uploads and new folders go
  const [sel, setSel] = useState<Entry | null>(null);
  const [preview, setPreview] = useState<Preview | null>(null);
  const [err, setErr] = useState('');
  const [note, setNote] = useState('');
  const [open, setOpen] = useState<Set<string>>(new Set());

  const load = async () => {
    try {
      const r = await api<{ entries: Entry[]; truncated: boolean }>('GET', withUser('/wunder/workspace/content?path=&depth=4&limit=1000'));
      setTree(r.entries || []);
      setTruncated(!!r.truncated);
      setErr('');
    } catch (e) {
      setErr((e as Error).message);
    }
  };
  useEffect(() => {
    load();
    addEventListener('focus', load);
    // a run of this user (from any tab or client) may change files: while the
    // page is open, look every 5 s at the newest run, and reload when it is
    // another one or its state moved
    let seen: string | null = null;
    const watch = async () => {
      const r = await api<{ runs: { run_id: string; state: string }[] }>('GET', withUser('/wunder/runs?limit=1')).catch(() => null);
      if (!r) return;
      const key = r.runs.length ? r.runs[0].run_id + ' ' + r.runs[0].state : '';
      if (seen !== null && key !== seen) load();
      seen = key;
    };
    watch();
    const id = setInterval(watch, 5000);
    return () => {
      removeEventListener('focus', load);
      clearInterval(id);
    };
  }, []);

  const run = async (what: () => Promise<unknown>, done?: string) => {
    setErr('');
    setNote('');
    try {
      await what();
      if (done) setNote(done);
      await load();
    } catch (e) {
      setErr((e as Error).message);
    }
  };

  const show = async (e: Entry) => {
    setSel(e);
    setErr('');
    if (e.type === 'dir') {
      setDir(e.path);
      setPreview({ kind: 'dir', path: e.path });
      const next = new Set(open);
      if (next.has(e.path)) next.delete(e.path);
      else next.add(e.path);
      setOpen(next);
      return;
    }
    setDir(e.path.includes('/') ? e.path.slice(0, e.path.lastIndexOf('/')) : '');
    try {
      if (IMAGE.test(e.name)) {
        const b = await apiBlob(withUser('/wunder/workspace/download?path=' + q(e.path)));
        const src = await new Promise<string>((res, rej) => {
          const fr = new FileReader();
          fr.onload = () => res(fr.result as string);
          fr.onerror = () => rej(fr.error);
          fr.readAsDataURL(b);
        });
        setPreview({ kind: 'image', path: e.path, src });
        return;
      }
      const r = await api<{ content: string; truncated: boolean }>('GET', withUser('/wunder/workspace/content?path=' + q(e.path)));
      setPreview({ kind: 'text', path: e.path, content: r.content, truncated: r.truncated });
    } catch (x) {
      setPreview({ kind: 'none', path: e.path, reason: (x as Error).message });
    }
  };

  const upload = (files: FileList | null) => {
    if (!files || !files.length) return;
    const f = new FormData();
    // the fields must come before the files
    const who = identity();
    if (who) f.append('user_id', who.userId);
    f.append('path', dir);
    for (const file of Array.from(files)) f.append('files', file, file.name);
    run(() => apiForm('/wunder/workspace/upload', f), s.uploaded + ': ' + Array.from(files, (x) => x.name).join(', '));
  };

  const body = (extra: Record<string, unknown>) => ({ ...extra, user_id: identity()?.userId });

  return (
    <div class="workspace">
      <div class="row wrap">
        <h1>{s.workspace}</h1>
        <span class="muted">
          {s.folder}: /{dir}
        </span>
        <label class="button">
          {s.upload}
          <input class="sr-only" type="file" multiple aria-label={s.upload} onChange={(e) => {
            const el = e.target as HTMLInputElement;
            upload(el.files);
            el.value = '';
          }} />
        </label>
        <NewFolder s={s} onCreate={(name) => run(() => api('POST', '/wunder/workspace/dir', body({ path: join(dir, name) })))} />
        <button type="button" onClick={() => run(async () => saveBlob(await apiBlob(withUser('/wunder/workspace/archive?path=' + q(dir))), (dir.split('/').pop() || 'workspace') + '.zip'))}>
          {s.archive}
        </button>
        <button type="button" class="ghost" onClick={load}>
          {s.refresh}
        </button>
      </div>
      {err && (
        <p class="error" role="alert">
          {err}
        </p>
      )}
      {note && (
        <p class="status" role="status">
          {note}
        </p>
      )}
      <div class="ws-grid">
        <nav class="tree" aria-label={s.files}>
          <button type="button" class={'entry dir' + (dir === '' && sel === null ? ' current' : '')} onClick={() => { setDir(''); setSel(null); setPreview(null); }}>
            /
          </button>
          {tree && tree.length === 0 && <p class="muted">{s.emptyWorkspace}</p>}
          {tree && <Tree entries={tree} open={open} sel={sel?.path} onPick={show} />}
          {truncated && <p class="muted">{s.truncated}</p>}
        </nav>
        <section class="preview" aria-label={s.preview}>
          {sel && preview && <Actions s={s} e={sel} onRun={run} body={body} onGone={() => { setSel(null); setPreview(null); }} />}
          {preview ? <PreviewView s={s} p={preview} /> : <p class="muted">{s.pickFile}</p>}
        </section>
      </div>
    </div>
  );
}

function join(dir: string, name: string) {
  return dir ? dir + '/' + name : name;
}

function Tree({ entries, open, sel, onPick }: { entries: Entry[]; open: Set<string>; sel?: string; onPick: (e: Entry) => void }) {
  return (
    <ul role="list">
      {entries.map((e) => (
        <li>
          <button
            type="button"
            class={'entry ' + e.type + (e.path === sel ? ' current' : '')}
            aria-expanded={e.type === 'dir' ? open.has(e.path) : undefined}
            aria-current={e.path === sel ? 'true' : undefined}
            data-path={e.path}
            onClick={() => onPick(e)}
          >
            {e.type === 'dir' ? (open.has(e.path) ? '▾ ' : '▸ ') : ''}
            {e.name}
          </button>
          {e.type === 'dir' && open.has(e.path) && e.children && <Tree entries={e.children} open={open} sel={sel} onPick={onPick} />}
        </li>
      ))}
    </ul>
  );
}

function NewFolder({ s, onCreate }: { s: Strings; onCreate: (name: string) => void }) {
  const [name, setName] = useState('');
  return (
    <form
      class="inline-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (name.trim()) onCreate(name.trim());
        setName('');
      }}
    >
      <input aria-label={s.newFolder} placeholder={s.newFolder} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
      <button type="submit" disabled={!name.trim()}>
        {s.create}
      </button>
    </form>
  );
}

function Actions({ s, e, onRun, body, onGone }: {
  s: Strings;
  e: Entry;
  onRun: (f: () => Promise<unknown>, done?: string) => void;
  body: (x: Record<string, unknown>) => unknown;
  onGone: () => void;
}) {
  const [dest, setDest] = useState(e.path);
  useEffect(() => setDest(e.path), [e.path]);
  return (
    <div class="row wrap actions-bar">
      <strong class="mono">{e.path}</strong>
      {e.type === 'file' && (
        <button type="button" onClick={() => onRun(async () => saveBlob(await apiBlob(withUser('/wunder/workspace/download?path=' + q(e.path))), e.name))}>
          {s.download}
        </button>
      )}
      {e.type === 'dir' && (
        <button type="button" onClick={() => onRun(async () => saveBlob(await apiBlob(withUser('/wunder/workspace/archive?path=' + q(e.path))), e.name + '.zip'))}>
          {s.archive}
        </button>
      )}
      <form
        class="inline-form"
        onSubmit={(ev) => {
          ev.preventDefault();
          if (dest.trim() && dest !== e.path) onRun(() => api('POST', '/wunder/workspace/move', body({ source: e.path, destination: dest.trim() })).then(onGone), s.moved);
        }}
      >
        <input aria-label={s.moveTo} value={dest} onInput={(ev) => setDest((ev.target as HTMLInputElement).value)} />
        <button type="submit">{s.move}</button>
      </form>
      <ConfirmButton s={s} label={s.delete} what={e.path} onConfirm={() => onRun(() => api('DELETE', withUser('/wunder/workspace?path=' + q(e.path))).then(onGone), s.deleted)} />
    </div>
  );
}

function PreviewView({ s, p }: { s: Strings; p: Preview }) {
  if (p.kind === 'dir') return <p class="muted">{s.folderHint}</p>;
  if (p.kind === 'none') return <p class="muted">{p.reason}</p>;
  if (p.kind === 'image') return <img class="ws-image" src={p.src} alt={p.path} />;
  const name = p.path.toLowerCase();
  return (
    <div class="ws-text" data-preview={p.path}>
      {p.truncated && <p class="muted">{s.truncated}</p>}
      {/\.(md|markdown)$/.test(name) ? (
        <Markdown source={p.content} />
      ) : /\.(csv|tsv)$/.test(name) ? (
        <CSVTable s={s} text={p.content} sep={name.endsWith('.tsv') ? '\t' : ','} />
      ) : (
        <Code text={p.content} lang={langOf(name)} />
      )}
    </div>
  );
}
