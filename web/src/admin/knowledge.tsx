// Knowledge bases (docs/tools.md#knowledge-bases, docs/http.md), the
// admin's (GET /wunder/admin/knowledge) and a user's own ("My tools",
// user: GET /wunder/user_tools/knowledge, each base with a switch that
// shares it with every other user as owner@base). POST replaces the list
// of uploaded bases, so adding, deleting and sharing post the whole list.
// A base's files (GET /files, DELETE /file), documents uploaded
// (POST /upload: base, file; .docx, .xlsx, .pptx, .pdf and .html are
// converted to Markdown by the server), the admin's index rebuilt
// (POST /refresh?base=), and "try a query" through the search route
// (GET /search?base=&query=&limit=5), which ranks the passages as the
// base's tool does in a run.
import { useEffect, useState } from 'preact/hooks';
import { api, apiForm, identity, withUser } from '../api';
import type { Strings } from '../i18n';
import { ConfirmButton } from '../confirm';
import { ProblemView, toProblem, type Problem } from './config';
import { AdminTable } from './table';

interface Base {
  name: string;
  description: string;
  source?: 'config' | 'upload';
  /** a user's base, offered to every other user as owner@name */
  shared?: boolean;
  file_count: number;
  bytes: number;
}
interface Hit {
  title: string;
  heading_path?: string[];
  content?: string;
  score: number;
  source?: string;
}
const q = encodeURIComponent;
const kb = (n: number) => (n < 1024 ? n + ' B' : (n / 1024).toFixed(1) + ' KB');

/** the documents an upload takes: text as it is, the rest converted to Markdown */
const ACCEPT = '.md,.txt,.docx,.xlsx,.pptx,.pdf,.html,.htm,text/markdown,text/plain';

/**
 * kbRoutes are the routes of the admin's bases, or (user) of the user's
 * own, naming the user the console shows.
 */
function kbRoutes(user?: boolean) {
  return user ? (p: string) => withUser('/wunder/user_tools/knowledge' + p) : (p: string) => '/wunder/admin/knowledge' + p;
}

export function Knowledge({ s, user }: { s: Strings; user?: boolean }) {
  const at = kbRoutes(user);
  const [bases, setBases] = useState<Base[] | null>(null);
  const [base, setBase] = useState('');
  const [files, setFiles] = useState<{ path: string; size: number }[]>([]);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [status, setStatus] = useState('');
  const [name, setName] = useState('');
  const [desc, setDesc] = useState('');
  const load = () =>
    api<{ knowledge: { bases: Base[] } }>('GET', at(''))
      .then((r) => setBases(r.knowledge.bases || []))
      .catch((e) => setProblem(toProblem(e, s)));
  const loadFiles = (b: string) =>
    api<{ entries?: { path: string; size: number }[] }>('GET', at('/files?base=' + q(b)))
      .then((r) => setFiles(r.entries || []))
      .catch((e) => setProblem(toProblem(e, s)));
  useEffect(() => {
    load();
  }, []);
  useEffect(() => {
    setFiles([]);
    if (base) loadFiles(base);
  }, [base]);
  const act = async (f: () => Promise<unknown>, done?: string) => {
    setProblem(null);
    setStatus('');
    try {
      await f();
      if (done) setStatus(done);
      await load();
      if (base) await loadFiles(base);
      return true;
    } catch (e) {
      setProblem(toProblem(e, s));
      return false;
    }
  };
  // the list of uploaded bases, as POST takes it
  const uploaded = (bs: Base[]) =>
    bs.filter((b) => b.source !== 'config').map((b) => (user ? { name: b.name, description: b.description, shared: !!b.shared } : { name: b.name, description: b.description }));
  const post = (bs: object[]) => api('POST', at(''), { knowledge: { bases: bs } });
  const add = async (e: Event) => {
    e.preventDefault();
    const n = name.trim();
    if (!n) return;
    const ok = await act(() => post([...uploaded(bases || []), { name: n, description: desc.trim() }]));
    if (ok) {
      setName('');
      setDesc('');
      setBase(n);
    }
  };
  const remove = (n: string) =>
    act(() => post(uploaded((bases || []).filter((b) => b.name !== n)))).then(() => {
      if (base === n) setBase('');
    });
  const share = (n: string) => act(() => post(uploaded((bases || []).map((b) => (b.name === n ? { ...b, shared: !b.shared } : b)))));
  const upload = async (list: FileList | null) => {
    if (!list?.length || !base) return;
    await act(async () => {
      for (const f of Array.from(list)) {
        const form = new FormData();
        form.append('base', base);
        form.append('file', f);
        await apiForm(at('/upload'), form);
      }
    }, s.uploaded + ': ' + Array.from(list, (f) => f.name).join(', '));
  };
  const refresh = () =>
    act(async () => {
      const r = await api<{ bases: { name: string; points: number }[] }>('POST', '/wunder/admin/knowledge/refresh' + (base ? '?base=' + q(base) : ''));
      setStatus(s.reindexed + ': ' + (r.bases || []).map((b) => `${b.name} (${b.points} ${s.points})`).join(', '));
    });
  const current = bases?.find((b) => b.name === base);
  return (
    <section aria-labelledby="kb-h">
      <h2 id="kb-h">{s.knowledge}</h2>
      <ProblemView p={problem} />
      {status && (
        <p class="status" role="status">
          {status}
        </p>
      )}
      <AdminTable s={s} heads={[s.name, user ? s.sharedHead : s.source, s.description, s.files]} empty={bases?.length === 0}>
      {bases?.map((b) => (
        <tr data-base={b.name}>
          <td>{b.name}</td>
          {user ? (
            <td>
              <label class="check">
                <input type="checkbox" name="kb-shared" checked={!!b.shared} onChange={() => share(b.name)} aria-label={s.shareWithOthers + ' ' + b.name} />
                <span>{b.shared ? identity()?.userId + '@' + b.name : s.notShared}</span>
              </label>
            </td>
          ) : (
            <td>{b.source === 'config' ? s.sourceConfig : s.sourceUpload}</td>
          )}
          <td class="q">{b.description}</td>
          <td>
            {b.file_count} · {kb(b.bytes)}
          </td>
          <td class="nowrap">
            <button type="button" class="small" aria-current={b.name === base ? 'true' : undefined} aria-label={s.open + ' ' + b.name} onClick={() => setBase(b.name)}>
              {s.open}
            </button>{' '}
            {b.source !== 'config' && <ConfirmButton s={s} small label={s.delete} what={b.name} onConfirm={() => remove(b.name)} />}
          </td>
        </tr>
      ))}
      </AdminTable>
      {!user && (
        <div class="actions">
          <button type="button" onClick={refresh}>
            {base ? s.reindex + ': ' + base : s.reindexAll}
          </button>
        </div>
      )}
      {current && (
        <section class="kb-base" aria-labelledby="kb-base-h">
          <h3 id="kb-base-h">{current.name}</h3>
          {current.source !== 'config' && (
            <label class="button">
              {s.uploadDocs}
              <input
                type="file"
                name="kb-files"
                multiple
                accept={ACCEPT}
                class="sr-only"
                onChange={(e) => {
                  const el = e.target as HTMLInputElement;
                  upload(el.files).then(() => (el.value = ''));
                }}
              />
            </label>
          )}
          <ul class="plain kb-files">
            {files.length === 0 && <li class="muted">{s.none}</li>}
            {files.map((f) => (
              <li data-path={f.path}>
                {f.path} <span class="muted">{kb(f.size)}</span>{' '}
                {current.source !== 'config' && (
                  <ConfirmButton
                    s={s}
                    small
                    label={s.delete}
                    what={f.path}
                    onConfirm={() => act(() => api('DELETE', at(`/file?base=${q(base)}&path=${q(f.path)}`)))}
                  />
                )}
              </li>
            ))}
          </ul>
          {current.source !== 'config' && <p class="muted">{s.convertHint}</p>}
          <TryQuery s={s} base={current.name} at={at} key={current.name} />
        </section>
      )}
      <form class="add-form" onSubmit={add} aria-labelledby="kb-add-h">
        <h3 id="kb-add-h">{s.addBase}</h3>
        <label>
          {s.name}
          <input name="kb-name" required value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          {s.description}
          <input name="kb-description" value={desc} onInput={(e) => setDesc((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit" class="primary">
          {s.add}
        </button>
      </form>
    </section>
  );
}

/**
 * TryQuery asks the search route for the base's passages
 * (GET .../search?base=&query=&limit=5): what the base's tool returns to a
 * run, without a run.
 */
function TryQuery({ s, base, at }: { s: Strings; base: string; at: (p: string) => string }) {
  const [query, setQuery] = useState('');
  const [hits, setHits] = useState<Hit[] | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async (e: Event) => {
    e.preventDefault();
    const text = query.trim();
    if (!text || busy) return;
    setBusy(true);
    setProblem(null);
    setHits(null);
    try {
      const r = await api<{ hits: Hit[] }>('GET', at(`/search?base=${q(base)}&query=${q(text)}&limit=5`));
      setHits(r.hits || []);
    } catch (x) {
      setProblem(toProblem(x, s));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="tester kb-query" onSubmit={run} aria-labelledby="kb-query-h">
      <h4 id="kb-query-h">{s.tryQuery}</h4>
      <label>
        {s.query}
        <input name="kb-query" value={query} onInput={(e) => setQuery((e.target as HTMLInputElement).value)} />
      </label>
      <button type="submit" class="primary" disabled={busy || !query.trim()}>
        {busy ? s.running : s.search}
      </button>
      <ProblemView p={problem} />
      {hits && hits.length === 0 && <p class="muted">{s.noHits}</p>}
      {hits && hits.length > 0 && (
        <ol class="hits">
          {hits.map((h) => (
            <li>
              <strong>{(h.heading_path?.length ? h.heading_path : [h.title]).join(' › ')}</strong>{' '}
              <span class="muted">
                {h.source} · {h.score.toFixed(2)}
              </span>
              {h.content && <p>{h.content}</p>}
            </li>
          ))}
        </ol>
      )}
    </form>
  );
}
