// What waits for the user: GET /wunder/pending lists their runs paused on
// an approval (waiting_approval) or a question (waiting_input), each with
// what it asks. The nav shows the count as a badge, polled every 5 s
// while the tab is visible (and at once when the tab comes back or a
// decision is taken); the page lists each item: an approval opens the
// chat's approval dialog, a question is the chat's question card, and
// "Open in chat" resumes the run's session in the chat.
import { useEffect, useState } from 'preact/hooks';
import { api, withUser } from './api';
import { lang, strings } from './i18n';
import { signal, useSignal } from './state';
import { newRun, type Approval, type Question, type RunView } from './run';
import { ApprovalDialog } from './approval';
import { QuestionCard } from './question';

interface PendingApproval extends Approval {
  run_id: string;
  session_id: string;
  created_at: string;
  expires_at?: string;
}
interface PendingRun {
  run: { run_id: string; session_id: string; question: string; state: string; created_at: string };
  pending: PendingApproval[];
}
export interface PendingPage {
  runs: PendingRun[];
  count: number;
  next_cursor: string;
}

/** LIMIT is the runs one poll reads (the server's most is 100). */
const LIMIT = 100;
const POLL_MS = 5000;

/** pending is the newest answer of GET /wunder/pending; null before the first. */
export const pending = signal<PendingPage | null>(null);

export async function refreshPending() {
  try {
    pending.set(await api<PendingPage>('GET', withUser(`/wunder/pending?limit=${LIMIT}`)));
  } catch {
    /* the badge keeps what it showed; the next poll tries again */
  }
}

/** usePendingPoll polls while user is logged in and the tab is visible. */
export function usePendingPoll(user: string) {
  useEffect(() => {
    if (!user) return;
    refreshPending();
    const t = setInterval(() => {
      if (!document.hidden) refreshPending();
    }, POLL_MS);
    const on = () => {
      if (!document.hidden) refreshPending();
    };
    document.addEventListener('visibilitychange', on);
    addEventListener('hashchange', on);
    return () => {
      clearInterval(t);
      document.removeEventListener('visibilitychange', on);
      removeEventListener('hashchange', on);
      pending.set(null);
    };
  }, [user]);
}

/** PendingBadge is the count in the nav: nothing when nothing waits. */
export function PendingBadge() {
  const s = strings(useSignal(lang));
  const p = useSignal(pending);
  if (!p || p.count === 0) return null;
  const n = p.count + (p.next_cursor ? '+' : '');
  return (
    <span class="badge count pending-count" title={s.pendingCount.replace('{n}', n)}>
      {n}
      <span class="sr-only"> {s.pendingCount.replace('{n}', n)}</span>
    </span>
  );
}

/** asQuestion reads the question an approval of kind question asks (its arguments are ask_user's). */
function asQuestion(a: PendingApproval): Question {
  const q = (a.arguments || {}) as { question?: string; options?: string[]; multi?: boolean; free_text?: boolean };
  return { question_id: a.approval_id, question: q.question || '', options: q.options, multi: q.multi, free_text: q.free_text };
}

/** viewOf is a RunView holding one pending item, what the chat's dialog and card take. */
function viewOf(r: PendingRun, a: PendingApproval): RunView {
  const v = newRun(r.run.question);
  v.runId = r.run.run_id;
  v.sessionId = r.run.session_id;
  v.state = r.run.state;
  if (a.kind === 'question') v.questions = [asQuestion(a)];
  else v.pending = [a];
  return v;
}

export function Pending() {
  const s = strings(useSignal(lang));
  const p = useSignal(pending);
  const [catalog, setCatalog] = useState<Record<string, { name: string; wire_name?: string; input_schema?: unknown }[]>>({});
  const [deciding, setDeciding] = useState(''); // the approval whose dialog is open
  const [err, setErr] = useState('');
  useEffect(() => {
    refreshPending();
    api<typeof catalog>('GET', withUser('/wunder/tools'))
      .then(setCatalog)
      .catch(() => {});
  }, []);
  const schemaOf = (tool: string) => {
    for (const g of Object.values(catalog)) for (const t of g || []) if (t.name === tool || t.wire_name === tool) return t.input_schema;
    return undefined;
  };
  const done = () => {
    setDeciding('');
    setErr('');
    refreshPending();
  };
  const openChat = (sessionId: string) => {
    sessionStorage.setItem('wunder.session', sessionId); // the chat opens it and follows its run
    location.hash = '#/chat';
  };
  const items = (p?.runs || []).flatMap((r) => r.pending.map((a) => ({ r, a })));
  const open = items.find((x) => x.a.approval_id === deciding);
  return (
    <section class="pending-page" aria-labelledby="pending-h">
      <h1 id="pending-h">{s.pendingNav}</h1>
      {err && (
        <p class="error" role="alert">
          {err}
        </p>
      )}
      {p && items.length === 0 && <p class="muted">{s.pendingNone}</p>}
      {!p && (
        <p class="muted" role="status">
          …
        </p>
      )}
      <ul class="pending-list">
        {items.map(({ r, a }) => (
          <li class="pending-item" data-kind={a.kind === 'question' ? 'question' : 'approval'} data-run-id={r.run.run_id} data-approval-id={a.approval_id} key={a.approval_id}>
            <p class="pending-head">
              <span class={'badge ' + (a.kind === 'question' ? 'waiting-input' : 'waiting-approval')}>{a.kind === 'question' ? s.pendingQuestion : s.pendingApproval}</span>{' '}
              {a.kind !== 'question' && <code>{a.tool}</code>}
              <span class="muted">
                {' '}
                {s.pendingAsked} {new Date(a.created_at).toLocaleString()} · {s.pendingRun}: <q>{r.run.question}</q>
              </span>
            </p>
            {a.kind !== 'question' && a.reason && <p class="muted">{a.reason}</p>}
            {a.kind === 'question' && <QuestionCard s={s} run={viewOf(r, a)} onError={setErr} onDecided={done} />}
            <div class="actions">
              {a.kind !== 'question' && (
                <button type="button" class="primary decide" onClick={() => setDeciding(a.approval_id)}>
                  {s.decide}
                </button>
              )}
              <button type="button" class="open-chat" onClick={() => openChat(r.run.session_id)}>
                {s.openInChat}
              </button>
            </div>
          </li>
        ))}
      </ul>
      {p?.next_cursor && <p class="muted">{s.pendingMore}</p>}
      {open && <ApprovalDialog key={open.a.approval_id} s={s} run={viewOf(open.r, open.a)} schemaOf={schemaOf} onError={setErr} onDecided={done} onClose={() => setDeciding('')} />}
    </section>
  );
}
