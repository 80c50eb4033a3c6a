// The chat page: sessions on the side with the model and tool pickers; the
// conversation, live runs streamed from POST /wunder, and the composer.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, streamRun, withUser, ApiError, type RunEvent } from './api';
import { lang, strings, type Strings } from './i18n';
import { useSignal } from './state';
import { apply, newRun, visibleText, type Plan, type RunView, type ToolView } from './run';
import { ApprovalDialog } from './approval';

interface Session {
  session_id: string;
  title: string;
  updated_at: string;
}
interface Message {
  role: string;
  content: string;
  reasoning_content?: string;
  tool_calls?: { id: string; name: string; arguments: unknown }[];
  name?: string;
  tool_call_id?: string;
}
interface CatalogEntry {
  name: string;
  wire_name?: string;
  description: string;
  input_schema?: unknown;
}
type Catalog = Record<string, CatalogEntry[]>;

const SESSION_KEY = 'wunder.session';

const GROUPS = ['builtin_tools', 'mcp_tools', 'a2a_tools', 'skills', 'knowledge_tools', 'user_tools', 'shared_tools'];

export function Chat() {
  const l = useSignal(lang);
  const s = strings(l);
  const [sessions, setSessions] = useState<Session[]>([]);
  const [sessionId, setSessionId] = useState('');
  const [history, setHistory] = useState<Message[]>([]);
  const [runs, setRuns] = useState<RunView[]>([]);
  const [models, setModels] = useState<{ default: string; models: { name: string }[] }>({ default: '', models: [] });
  const [model, setModel] = useState('');
  const [catalog, setCatalog] = useState<Catalog>({});
  const [picked, setPicked] = useState<Set<string>>(new Set(JSON.parse(localStorage.getItem('wunder.tools') || '[]')));
  const [err, setErr] = useState('');
  const [reconnecting, setReconnecting] = useState(false);
  const [sideOpen, setSideOpen] = useState(false);
  const [, setTick] = useState(0);
  const abort = useRef<AbortController | null>(null);
  const frame = useRef(0);

  const live = runs.length ? runs[runs.length - 1] : null;
  const busy = !!live && (live.state === 'running' || live.state === 'waiting_input');

  const loadSessions = () =>
    api<{ sessions: Session[] }>('GET', withUser('/wunder/sessions?limit=50'))
      .then((r) => setSessions(r.sessions))
      .catch(() => {});
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
    setErr('');
    if (!id) {
      setHistory([]);
      return;
    }
    try {
      const sid = encodeURIComponent(id);
      const [h, live] = await Promise.all([
        api<{ messages: Message[] }>('GET', withUser('/wunder/sessions/' + sid)),
        resume
          ? api<{ runs: { run_id: string; question: string; state: string }[] }>('GET', withUser(`/wunder/runs?session_id=${sid}&state=queued,running,waiting_input&limit=1`))
          : Promise.resolve({ runs: [] }),
      ]);
      const run = live.runs[0];
      if (!run) {
        setHistory(h.messages);
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
    const ac = new AbortController();
    abort.current = ac;
    try {
      await streamRun(
        req,
        (st) => {
          view.runId = st.runId;
          view.sessionId = st.sessionId;
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
      }
    } finally {
      setReconnecting(false);
      redraw();
      loadSessions();
    }
  };

  const ask = (question: string) => {
    const view = newRun(question);
    setRuns((rs) => [...rs, view]);
    return follow(view, { question, session_id: sessionId || undefined, model_name: model || undefined, tool_names: [...picked], language: l });
  };

  const cancel = async () => {
    if (!live?.runId) return;
    await api('POST', withUser(`/wunder/runs/${encodeURIComponent(live.runId)}/cancel`)).catch((e) => setErr(e.message));
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
            <li>
              <button
                type="button"
                class={'session' + (x.session_id === sessionId ? ' current' : '')}
                aria-current={x.session_id === sessionId ? 'true' : undefined}
                disabled={busy}
                onClick={() => openSession(x.session_id)}
              >
                {x.title || x.session_id}
              </button>
            </li>
          ))}
        </ul>
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
        {live?.plan && <PlanPanel s={s} plan={live.plan} />}
        <Transcript s={s} history={history} runs={runs} />
        {reconnecting && (
          <p class="status" role="status">
            {s.reconnecting}
          </p>
        )}
        {err && (
          <p class="error" role="alert">
            {err}
          </p>
        )}
        <Composer s={s} busy={busy} onSend={ask} onCancel={cancel} />
      </section>
      {live && live.pending.length > 0 && <ApprovalDialog s={s} run={live} schemaOf={(tool) => schemaOf(catalog, tool)} onError={setErr} />}
    </div>
  );
}

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

function Transcript({ s, history, runs }: { s: Strings; history: Message[]; runs: RunView[] }) {
  const ref = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);
  useEffect(() => {
    const el = ref.current;
    if (el && pinned.current) el.scrollTop = el.scrollHeight;
  });
  const onScroll = () => {
    const el = ref.current!;
    pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
  };
  const turns = useMemo(() => foldHistory(history), [history]);
  return (
    <div class="transcript" ref={ref} onScroll={onScroll} role="log" aria-live="polite" aria-label={s.chat} tabIndex={0}>
      {history.length === 0 && runs.length === 0 && <p class="muted empty">{s.emptyChat}</p>}
      {turns.map((m) =>
        m.role === 'user' ? (
          <div class="msg user">{m.text}</div>
        ) : (
          <div class="msg assistant">
            {m.reasoning && <Reasoning s={s} text={m.reasoning} />}
            {m.text && <div class="text">{m.text}</div>}
            {m.tools.map((t) => (
              <ToolCall s={s} t={t} />
            ))}
          </div>
        ),
      )}
      {runs.map((r) => (
        <RunBlock s={s} r={r} />
      ))}
    </div>
  );
}

interface Turn {
  role: 'user' | 'assistant';
  text: string;
  reasoning?: string;
  tools: ToolView[];
}

/**
 * foldHistory turns stored messages into turns: tool calls come as
 * tool_calls (function_call mode) or <tool_call> blocks in the text
 * (tool_call mode); their results as role=tool messages or as user
 * messages "tool_response: {...}". Each result joins its call.
 */
function foldHistory(history: Message[]): Turn[] {
  const out: Turn[] = [];
  const open: ToolView[] = [];
  const byId = new Map<string, ToolView>();
  for (const m of history) {
    if (m.role === 'assistant') {
      const tools: ToolView[] = (m.tool_calls || []).map((c) => ({ callId: c.id, name: c.name, args: c.arguments, output: '' }));
      for (const [, body] of m.content.matchAll(/<tool_call>([\s\S]*?)<\/tool_call>/g)) {
        try {
          const c = JSON.parse(body);
          tools.push({ callId: '', name: c.name, args: c.arguments, output: '' });
        } catch {
          /* shown as text */
        }
      }
      tools.forEach((t) => (t.callId ? byId.set(t.callId, t) : open.push(t)));
      out.push({ role: 'assistant', text: visibleText(m.content), reasoning: m.reasoning_content, tools });
    } else if (m.role === 'tool') {
      const t = byId.get(m.tool_call_id || '');
      if (t) t.result = m.content;
    } else if (m.role === 'user' && m.content.startsWith('tool_response: ')) {
      let r: { name?: string; content?: unknown; ok?: boolean } = {};
      try {
        r = JSON.parse(m.content.slice('tool_response: '.length));
      } catch {
        /* keep the raw text */
      }
      const i = open.findIndex((t) => t.name === r.name);
      const t = i >= 0 ? open.splice(i, 1)[0] : undefined;
      if (t) {
        t.result = typeof r.content === 'string' ? r.content : JSON.stringify(r.content);
        t.isError = r.ok === false;
      }
    } else if (m.role === 'user') {
      out.push({ role: 'user', text: m.content, tools: [] });
    }
  }
  return out;
}

function RunBlock({ s, r }: { s: Strings; r: RunView }) {
  return (
    <>
      <div class="msg user">{r.question}</div>
      <div class="msg assistant" aria-busy={r.state === 'running'} data-run-id={r.runId} data-state={r.state} data-events={r.events}>
        {r.items.map((it) => {
          if (it.kind === 'text')
            return (
              <>
                {it.reasoning && <Reasoning s={s} text={it.reasoning} />}
                {visibleText(it.text) && <div class="text">{visibleText(it.text)}</div>}
              </>
            );
          if (it.kind === 'tool') return <ToolCall s={s} t={it.tool} />;
          return <div class={'note' + (it.error ? ' error' : '')}>{it.text}</div>;
        })}
        {r.state === 'running' && r.items.length === 0 && <div class="muted">{s.running}</div>}
        <div class="meta">
          {r.usage && (
            <span class="usage">
              {s.usage}: {r.usage.input_tokens} → {r.usage.output_tokens} ({r.usage.total_tokens})
            </span>
          )}
          {r.state !== 'running' && r.state !== 'waiting_input' && (
            <span class={'badge ' + r.state}>
              {r.state}
              {r.stopReason && r.stopReason !== 'model_response' ? ` · ${r.stopReason}` : ''}
            </span>
          )}
        </div>
      </div>
    </>
  );
}

/** PlanPanel shows the live run's todo steps (its last `plan` event, docs/http.md#plans). */
function PlanPanel({ s, plan }: { s: Strings; plan: Plan }) {
  const done = plan.steps.filter((x) => x.status === 'completed').length;
  return (
    <details class="plan" open aria-label={s.plan}>
      <summary>
        {s.plan} <span class="muted">({done}/{plan.steps.length})</span>
      </summary>
      <ol>
        {plan.steps.map((x) => (
          <li class={'step ' + x.status} data-status={x.status}>
            <span class="step-mark" aria-hidden="true">
              {x.status === 'completed' ? '✓' : x.status === 'running' ? '◐' : x.status === 'failed' ? '✗' : x.status === 'skipped' ? '–' : '○'}
            </span>
            <span>{x.title}</span> <span class="muted step-state">{(s as unknown as Record<string, string>)['step_' + x.status] || x.status}</span>
          </li>
        ))}
      </ol>
      {plan.strategy && <p class="muted">{s.strategy}: {plan.strategy}</p>}
      {plan.note && <p class="muted">{plan.note}</p>}
    </details>
  );
}

function Reasoning({ s, text }: { s: Strings; text: string }) {
  return (
    <details class="reasoning">
      <summary>{s.reasoning}</summary>
      <pre>{text}</pre>
    </details>
  );
}

function pretty(v: unknown): string {
  if (v === undefined) return '';
  if (typeof v === 'string') {
    try {
      return JSON.stringify(JSON.parse(v), null, 2);
    } catch {
      return v;
    }
  }
  return JSON.stringify(v, null, 2);
}

function ToolCall({ s, t }: { s: Strings; t: ToolView }) {
  const done = t.result !== undefined;
  return (
    <details class={'tool' + (t.isError ? ' failed' : '')} data-tool={t.name}>
      <summary>
        <span class="tool-name">{t.name}</span>
        <span class="muted">{done ? (t.durationMs !== undefined ? ` ${t.durationMs} ${s.ms}` : '') : ' ' + s.running}</span>
        {t.isError && <span class="badge failed">{s.error}</span>}
      </summary>
      <h3>{s.arguments}</h3>
      <pre>{pretty(t.args)}</pre>
      {t.output && <pre class="output">{t.output}</pre>}
      {done && (
        <>
          <h3>{s.result}</h3>
          <pre>{t.result}</pre>
        </>
      )}
    </details>
  );
}

function Composer({ s, busy, onSend, onCancel }: { s: Strings; busy: boolean; onSend: (q: string) => void; onCancel: () => void }) {
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
        <button type="button" class="danger" onClick={onCancel}>
          {s.cancel}
        </button>
      ) : (
        <button type="submit" class="primary" disabled={!text.trim()}>
          {s.send}
        </button>
      )}
    </form>
  );
}
