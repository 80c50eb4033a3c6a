// The chat page: sessions on the side with the model and tool pickers; the
// conversation, live runs streamed from POST /wunder, and the composer.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, streamRun, withUser, ApiError, type RunEvent } from './api';
import { lang, strings, type Strings } from './i18n';
import { useSignal } from './state';
import { apply, newRun, type Plan, type RunView } from './run';
import { PlanPanel, Transcript, type Message } from './transcript';
import { ApprovalDialog } from './approval';
import { QuestionCard } from './question';
import { Chips, readAttachment, type Attachment } from './attach';

interface Session {
  session_id: string;
  title: string;
  updated_at: string;
}
interface CatalogEntry {
  name: string;
  wire_name?: string;
  description: string;
  input_schema?: unknown;
  /** the namespaced ui:// URI of the MCP App the tool names */
  app?: string;
}
type Catalog = Record<string, CatalogEntry[]>;

const SESSION_KEY = 'wunder.session';

const GROUPS = ['builtin_tools', 'mcp_tools', 'a2a_tools', 'skills', 'knowledge_tools', 'user_tools', 'shared_tools'];

export function Chat() {
  const l = useSignal(lang);
  const s = strings(l);
  const [sessions, setSessions] = useState<Session[]>([]);
  const [older, setOlder] = useState(''); // the cursor of the next page of sessions, '' when there is none
  const [sessionId, setSessionId] = useState('');
  const [history, setHistory] = useState<Message[]>([]);
  const [savedPlan, setSavedPlan] = useState<Plan | null>(null); // the plan of a reopened session's last run
  const [runs, setRuns] = useState<RunView[]>([]);
  const [models, setModels] = useState<{ default: string; models: { name: string }[] }>({ default: '', models: [] });
  const [model, setModel] = useState('');
  const [catalog, setCatalog] = useState<Catalog>({});
  const [picked, setPicked] = useState<Set<string>>(new Set(JSON.parse(localStorage.getItem('wunder.tools') || '[]')));
  const [err, setErr] = useState('');
  const [attached, setAttached] = useState<Attachment[]>([]); // the next question's, until the server takes it
  const [reconnecting, setReconnecting] = useState(false);
  const [sideOpen, setSideOpen] = useState(false);
  const [renaming, setRenaming] = useState(''); // the session whose title is being edited
  const [waitingSession, setWaitingSession] = useState(''); // a refusal's paused run's session, to open
  const [, setTick] = useState(0);
  const abort = useRef<AbortController | null>(null);
  const frame = useRef(0);

  const apps = useMemo(() => {
    const m = new Map<string, string>();
    for (const g of Object.values(catalog)) for (const t of g || []) if (t.app) for (const n of [t.name, t.wire_name]) if (n) m.set(n, t.app);
    return m;
  }, [catalog]);
  const live = runs.length ? runs[runs.length - 1] : null;
  const busy = !!live && (live.state === 'running' || live.state.startsWith('waiting_'));

  type SessionPage = { sessions: Session[]; next_cursor: string };
  const loadSessions = () =>
    api<SessionPage>('GET', withUser('/wunder/sessions?limit=50'))
      .then((r) => {
        setSessions(r.sessions);
        setOlder(r.next_cursor);
      })
      .catch(() => {});
  // The page after the last one shown, by cursor: a session a run moved
  // to the top meanwhile is not listed twice.
  const loadOlder = () =>
    api<SessionPage>('GET', withUser('/wunder/sessions?limit=50&cursor=' + encodeURIComponent(older)))
      .then((r) => {
        setSessions((have) => [...have, ...r.sessions.filter((x) => !have.some((h) => h.session_id === x.session_id))]);
        setOlder(r.next_cursor);
      })
      .catch((e) => setErr(e.message));
  useEffect(() => {
    const last = sessionStorage.getItem(SESSION_KEY);
    if (last) openSession(last, true);
    loadSessions();
    api<typeof models>('GET', '/wunder/models').then(setModels).catch(() => {});
    api<Catalog>('GET', withUser('/wunder/tools'))
      .then(setCatalog)
      .catch((e) => setErr(e.message));
    return () => abort.current?.abort();
  }, []);

  // the open session survives a reload of the tab (sessionStorage)
  const pickSession = (id: string) => {
    setSessionId(id);
    if (id) sessionStorage.setItem(SESSION_KEY, id);
    else sessionStorage.removeItem(SESSION_KEY);
  };

  const openSession = async (id: string, resume = false) => {
    if (busy) return;
    setSideOpen(false);
    pickSession(id);
    setRuns([]);
    setSavedPlan(null);
    setErr('');
    setWaitingSession('');
    if (!id) {
      setHistory([]);
      return;
    }
    try {
      const sid = encodeURIComponent(id);
      const [h, live] = await Promise.all([
        api<{ messages: Message[] }>('GET', withUser('/wunder/sessions/' + sid)),
        resume
          ? api<{ runs: { run_id: string; question: string; state: string }[] }>('GET', withUser(`/wunder/runs?session_id=${sid}&state=queued,running,waiting_approval,waiting_input&limit=1`))
          : Promise.resolve({ runs: [] }),
      ]);
      const run = live.runs[0];
      if (!run) {
        setHistory(h.messages);
        loadPlan(sid);
        return;
      }
      // a run still going: its messages so far come again as its events
      const cut = h.messages.map((m) => m.role === 'user' && m.content === run.question).lastIndexOf(true);
      setHistory(cut >= 0 ? h.messages.slice(0, cut) : h.messages);
      const view = newRun(run.question);
      view.runId = run.run_id;
      view.sessionId = id;
      setRuns([view]);
      follow(view, { runId: run.run_id, afterSeq: 0 });
    } catch (e) {
      setErr((e as Error).message);
    }
  };

  // loadPlan shows the plan the session's newest run left
  // (GET /wunder/runs/{id}/plan): a finished session reopened keeps it.
  const loadPlan = async (sid: string) => {
    try {
      const r = await api<{ runs: { run_id: string }[] }>('GET', withUser(`/wunder/runs?session_id=${sid}&limit=1`));
      if (!r.runs?.length) return;
      const p = await api<Plan>('GET', withUser(`/wunder/runs/${encodeURIComponent(r.runs[0].run_id)}/plan`));
      if (p.steps?.length && sessionStorage.getItem(SESSION_KEY) === decodeURIComponent(sid)) setSavedPlan(p);
    } catch {
      /* a session without runs, or one removed meanwhile: no plan */
    }
  };

  // redraw at most once a frame however fast events come
  const redraw = () => {
    if (frame.current) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = 0;
      setTick((n) => n + 1);
    });
  };

  // follow streams a run into view (asked now, or resumed after a reload)
  const follow = async (view: RunView, req: Parameters<typeof streamRun>[0]) => {
    setErr('');
    setWaitingSession('');
    const ac = new AbortController();
    abort.current = ac;
    try {
      await streamRun(
        req,
        (st) => {
          view.runId = st.runId;
          view.sessionId = st.sessionId;
          if (view.attachments) setAttached([]); // taken with the question; kept when refused
          if (!sessionId) pickSession(st.sessionId);
        },
        (ev: RunEvent) => {
          setReconnecting(false);
          apply(view, ev);
          redraw();
        },
        () => setReconnecting(true),
        ac.signal,
      );
    } catch (e) {
      if (!ac.signal.aborted) {
        view.state = 'failed';
        setErr(e instanceof ApiError ? `${e.code}: ${e.message}` : String(e));
        // a 429 naming a run that waits for this user: offer to open it and decide
        if (e instanceof ApiError && e.status === 429 && e.sessionId) setWaitingSession(e.sessionId);
      }
    } finally {
      setReconnecting(false);
      redraw();
      loadSessions();
    }
  };

  const ask = (question: string) => {
    const attachments = attached.length ? attached : undefined;
    const view = newRun(question, attachments);
    setRuns((rs) => [...rs, view]);
    // the API's fields only: size is shown here, not sent
    const sent = attachments?.map(({ type, name, content, mime_type }) => ({ type, name, content, mime_type }));
    return follow(view, { question, attachments: sent, session_id: sessionId || undefined, model_name: model || undefined, tool_names: [...picked], language: l });
  };

  const attach = async (files: FileList | null) => {
    try {
      const read = await Promise.all(Array.from(files || [], readAttachment));
      setAttached((a) => [...a, ...read]);
    } catch (e) {
      setErr(String((e as Error)?.message ?? e));
    }
  };

  const cancel = async () => {
    if (!live?.runId) return;
    await api('POST', withUser(`/wunder/runs/${encodeURIComponent(live.runId)}/cancel`)).catch((e) => setErr(e.message));
  };

  // rename titles a session (POST /wunder/sessions/{id}/title); it keeps its place in the list
  const rename = async (id: string, title: string) => {
    try {
      const r = await api<Session>('POST', withUser(`/wunder/sessions/${encodeURIComponent(id)}/title`), { title });
      setSessions((have) => have.map((x) => (x.session_id === id ? { ...x, title: r.title } : x)));
      setRenaming('');
      setErr('');
    } catch (e) {
      setErr(e instanceof ApiError ? `${e.code}: ${e.message}` : String(e));
    }
  };

  const toggle = (name: string) => {
    const next = new Set(picked);
    if (next.has(name)) next.delete(name);
    else next.add(name);
    localStorage.setItem('wunder.tools', JSON.stringify([...next]));
    setPicked(next);
  };

  return (
    <div class={'chat' + (sideOpen ? ' side-open' : '')}>
      <h1 class="sr-only">{s.title}</h1>
      <button type="button" class="side-toggle ghost" aria-expanded={sideOpen} onClick={() => setSideOpen(!sideOpen)}>
        ☰ {s.sessions} · {s.tools} ({picked.size})
      </button>
      <aside class="side" aria-label={s.sessions + ' / ' + s.tools}>
        <button type="button" class="primary wide" onClick={() => openSession('')} disabled={busy}>
          + {s.newChat}
        </button>
        <h2>{s.sessions}</h2>
        <ul class="sessions">
          {sessions.length === 0 && <li class="muted">{s.noSessions}</li>}
          {sessions.map((x) => (
            <li class="session-row" data-session-id={x.session_id}>
              {renaming === x.session_id ? (
                <RenameForm s={s} title={x.title} onDone={() => setRenaming('')} onSave={(title) => rename(x.session_id, title)} />
              ) : (
                <>
                  <button
                    type="button"
                    class={'session' + (x.session_id === sessionId ? ' current' : '')}
                    aria-current={x.session_id === sessionId ? 'true' : undefined}
                    disabled={busy}
                    onClick={() => openSession(x.session_id)}
                  >
                    {x.title || x.session_id}
                  </button>
                  <button type="button" class="ghost small rename" aria-label={s.renameSession + ': ' + (x.title || x.session_id)} title={s.renameSession} onClick={() => setRenaming(x.session_id)}>
                    <svg viewBox="0 0 24 24" width="14" height="14" aria-hidden="true">
                      <path d="M4 20h4L19 9l-4-4L4 16v4zM14 6l4 4" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linejoin="round" />
                    </svg>
                  </button>
                </>
              )}
            </li>
          ))}
        </ul>
        {older && (
          <button type="button" class="ghost wide older" onClick={loadOlder}>
            {s.olderSessions}
          </button>
        )}
        <label>
          {s.model}
          <select value={model} onChange={(e) => setModel((e.target as HTMLSelectElement).value)}>
            <option value="">
              {s.defaultModel}
              {models.default ? ` (${models.default})` : ''}
            </option>
            {models.models.map((m) => (
              <option value={m.name}>{m.name}</option>
            ))}
          </select>
        </label>
        <ToolPicker s={s} catalog={catalog} picked={picked} toggle={toggle} />
      </aside>
      <section class="conversation" aria-label={s.chat}>
        {live?.plan ? <PlanPanel s={s} plan={live.plan} /> : !runs.length && savedPlan && <PlanPanel s={s} plan={savedPlan} />}
        <Transcript s={s} history={history} runs={runs} apps={apps} busy={busy} onAction={(m) => !busy && ask(m)} />
        {reconnecting && (
          <p class="status" role="status">
            {s.reconnecting}
          </p>
        )}
        {err && (
          <p class="error" role="alert">
            {err}
            {waitingSession && (
              <>
                {' '}
                <button type="button" class="small open-waiting" onClick={() => openSession(waitingSession, true)}>
                  {s.openWaiting}
                </button>
              </>
            )}
          </p>
        )}
        {live && live.questions.length > 0 && <QuestionCard s={s} run={live} onError={setErr} />}
        <Composer
          s={s}
          busy={busy}
          onSend={ask}
          onCancel={cancel}
          attached={attached}
          onAttach={attach}
          onRemove={(i) => setAttached((a) => a.filter((_, j) => j !== i))}
        />
      </section>
      {live && live.pending.length > 0 && <ApprovalDialog s={s} run={live} schemaOf={(tool) => schemaOf(catalog, tool)} onError={setErr} />}
    </div>
  );
}

/** RenameForm edits a session's title in place: Enter or Save saves, Escape or Cancel leaves it. */
function RenameForm({ s, title, onSave, onDone }: { s: Strings; title: string; onSave: (t: string) => void; onDone: () => void }) {
  const [text, setText] = useState(title);
  const ref = useRef<HTMLInputElement>(null);
  useEffect(() => {
    ref.current?.focus();
    ref.current?.select();
  }, []);
  return (
    <form
      class="rename-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (text.trim()) onSave(text.trim());
      }}
    >
      <input
        ref={ref}
        aria-label={s.sessionTitle}
        value={text}
        maxLength={MAX_TITLE}
        onInput={(e) => setText((e.target as HTMLInputElement).value)}
        onKeyDown={(e) => {
          if (e.key === 'Escape') onDone();
        }}
      />
      <button type="submit" class="small primary" disabled={!text.trim()}>
        {s.save}
      </button>
      <button type="button" class="small ghost" onClick={onDone}>
        {s.cancel}
      </button>
    </form>
  );
}

/** MAX_TITLE is the server's limit on a session title (orchestrator.MaxSessionTitle). */
const MAX_TITLE = 200;

function schemaOf(catalog: Catalog, tool: string): unknown {
  for (const g of Object.values(catalog)) for (const t of g || []) if (t.name === tool || t.wire_name === tool) return t.input_schema;
  return undefined;
}

function ToolPicker({ s, catalog, picked, toggle }: { s: Strings; catalog: Catalog; picked: Set<string>; toggle: (n: string) => void }) {
  const [q, setQ] = useState('');
  const groups = useMemo(() => {
    const needle = q.trim().toLowerCase();
    return GROUPS.map((g) => ({
      g,
      tools: (catalog[g] || []).filter((t) => !needle || t.name.toLowerCase().includes(needle) || (t.description || '').toLowerCase().includes(needle)),
    })).filter((x) => x.tools.length);
  }, [catalog, q]);
  return (
    <div class="tools">
      <h2>
        {s.tools} <span class="muted">({picked.size} {s.selected})</span>
      </h2>
      <label>
        <span class="sr-only">{s.searchTools}</span>
        <input type="search" placeholder={s.searchTools} value={q} onInput={(e) => setQ((e.target as HTMLInputElement).value)} />
      </label>
      {groups.map(({ g, tools }) => (
        <fieldset>
          <legend>{g.replace(/_/g, ' ')}</legend>
          {tools.map((t) => (
            <label class="check" title={t.description}>
              <input type="checkbox" checked={picked.has(t.name)} onChange={() => toggle(t.name)} />
              <span>{t.name}</span>
            </label>
          ))}
        </fieldset>
      ))}
    </div>
  );
}

interface ComposerProps {
  s: Strings;
  busy: boolean;
  onSend: (q: string) => void;
  onCancel: () => void;
  attached: Attachment[];
  onAttach: (f: FileList | null) => void;
  onRemove: (i: number) => void;
}

function Composer({ s, busy, onSend, onCancel, attached, onAttach, onRemove }: ComposerProps) {
  const [text, setText] = useState('');
  const send = () => {
    const q = text.trim();
    if (!q || busy) return;
    setText('');
    onSend(q);
  };
  return (
    <form
      class="composer"
      onSubmit={(e) => {
        e.preventDefault();
        send();
      }}
    >
      <Chips s={s} list={attached} onRemove={onRemove} />
      <label class="button attach" title={s.attach}>
        <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true">
          <path d="M16.5 6.5v10a4.5 4.5 0 0 1-9 0V5a3 3 0 0 1 6 0v10.5a1.5 1.5 0 0 1-3 0V6.5" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round" />
        </svg>
        <span class="sr-only">{s.attach}</span>
        <input
          type="file"
          name="attachments"
          multiple
          class="sr-only"
          onChange={(e) => {
            const el = e.target as HTMLInputElement;
            onAttach(el.files);
            el.value = '';
          }}
        />
      </label>
      <textarea
        aria-label={s.message}
        placeholder={s.message}
        rows={2}
        value={text}
        onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
            e.preventDefault();
            send();
          }
        }}
      />
      {busy ? (
        <button type="button" class="danger stop" onClick={onCancel} title={s.stop}>
          <svg viewBox="0 0 24 24" width="14" height="14" aria-hidden="true">
            <rect x="5" y="5" width="14" height="14" rx="2" fill="currentColor" />
          </svg>{' '}
          {s.stop}
        </button>
      ) : (
        <button type="submit" class="primary" disabled={!text.trim()}>
          {s.send}
        </button>
      )}
    </form>
  );
}
