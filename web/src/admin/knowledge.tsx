// Knowledge bases (docs/tools.md#knowledge-bases, docs/http.md): the
// admin's bases (GET /wunder/admin/knowledge; POST replaces the list of
// uploaded ones, so adding and deleting post the whole list), a base's
// files (GET /files, DELETE /file), documents uploaded
// (POST /upload: base, file), the index rebuilt (POST /refresh?base=),
// and "try a query". There is no search route: the query is a run that
// asks for the base's tool by name (tool_names: [base]), and the page
// shows the hits of the tool's result.
import { useEffect, useState } from 'preact/hooks';
import { api, apiForm, streamRun, withUser, type RunEvent } from '../api';
import { lang, type Strings } from '../i18n';
import { ConfirmButton } from '../confirm';
import { ProblemView, toProblem, type Problem } from './config';
import { AdminTable } from './table';

interface Base {
  name: string;
  description: string;
  source?: 'config' | 'upload';
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

export function Knowledge({ s }: { s: Strings }) {
  const [bases, setBases] = useState<Base[] | null>(null);
  const [base, setBase] = useState('');
  const [files, setFiles] = useState<{ path: string; size: number }[]>([]);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [status, setStatus] = useState('');
  const [name, setName] = useState('');
  const [desc, setDesc] = useState('');
  const load = () =>
    api<{ knowledge: { bases: Base[] } }>('GET', '/wunder/admin/knowledge')
      .then((r) => setBases(r.knowledge.bases || []))
      .catch((e) => setProblem(toProblem(e, s)));
  const loadFiles = (b: string) =>
    api<{ entries?: { path: string; size: number }[] }>('GET', '/wunder/admin/knowledge/files?base=' + q(b))
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
  const uploaded = (bs: Base[]) => bs.filter((b) => b.source !== 'config').map((b) => ({ name: b.name, description: b.description }));
  const add = async (e: Event) => {
    e.preventDefault();
    const n = name.trim();
    if (!n) return;
    const ok = await act(() => api('POST', '/wunder/admin/knowledge', { knowledge: { bases: [...uploaded(bases || []), { name: n, description: desc.trim() }] } }));
    if (ok) {
      setName('');
      setDesc('');
      setBase(n);
    }
  };
  const remove = (n: string) =>
    act(() => api('POST', '/wunder/admin/knowledge', { knowledge: { bases: uploaded((bases || []).filter((b) => b.name !== n)) } })).then(() => {
      if (base === n) setBase('');
    });
  const upload = async (list: FileList | null) => {
    if (!list?.length || !base) return;
    await act(async () => {
      for (const f of Array.from(list)) {
        const form = new FormData();
        form.append('base', base);
        form.append('file', f);
        await apiForm('/wunder/admin/knowledge/upload', form);
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
      <AdminTable s={s} heads={[s.name, s.source, s.description, s.files]} empty={bases?.length === 0}>
      {bases?.map((b) => (
        <tr data-base={b.name}>
          <td>{b.name}</td>
          <td>{b.source === 'config' ? s.sourceConfig : s.sourceUpload}</td>
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
      <div class="actions">
        <button type="button" onClick={refresh}>
          {base ? s.reindex + ': ' + base : s.reindexAll}
        </button>
      </div>
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
                accept=".md,.txt,text/markdown,text/plain"
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
                    onConfirm={() => act(() => api('DELETE', `/wunder/admin/knowledge/file?base=${q(base)}&path=${q(f.path)}`))}
                  />
                )}
              </li>
            ))}
          </ul>
          <TryQuery s={s} base={current.name} key={current.name} />
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
 * TryQuery runs the base's tool through a run (POST /wunder with
 * tool_names: [base]) and shows the hits of its result. The question
 * names the call, so a model (and the scripted test model) makes it.
 */
function TryQuery({ s, base }: { s: Strings; base: string }) {
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
    let found: Hit[] | null = null;
    let toolError = '';
    const ac = new AbortController();
    let session = '';
    try {
      const args = JSON.stringify({ query: text, limit: 5 });
      await streamRun(
        { question: `Search the knowledge base ${base}: call ${base} ${args} and report its hits.`, tool_names: [base], language: lang.get() },
        (st) => (session = st.sessionId),
        (ev: RunEvent) => {
          if (ev.type !== 'tool_result' || found) return;
          const d = ev.data || {};
          if (d.is_error) {
            toolError = typeof d.content === 'string' ? d.content : JSON.stringify(d.content);
            return;
          }
          try {
            const c = typeof d.content === 'string' ? JSON.parse(d.content) : d.content;
            if (Array.isArray(c?.hits)) found = c.hits;
          } catch {
            /* not this tool's result */
          }
        },
        () => {},
        ac.signal,
      );
      if (found) setHits(found);
      else setProblem({ text: toolError || s.noToolCall, errors: [] });
    } catch (x) {
      setProblem(toProblem(x, s));
    } finally {
      // the run was a test, not a conversation: its session goes, so the
      // chat's list does not fill with them (the run has ended: its stream did)
      if (session) await api('DELETE', withUser('/wunder/sessions/' + q(session))).catch(() => {});
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
