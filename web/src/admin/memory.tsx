// Memory (docs/memory.md). The admin's tab: the users with a switch or
// records (GET /wunder/admin/memory/users), then one user's records. A
// user's own ("My tools"): GET /wunder/memory. Both through
// MemoryRecords: the switch, each record's summary edited or deleted, and
// every record deleted.
import { useEffect, useState } from 'preact/hooks';
import { api, withUser } from '../api';
import type { Strings } from '../i18n';
import { ConfirmButton } from '../confirm';
import { ProblemView, toProblem, type Problem } from './config';

interface MemUser {
  user_id: string;
  enabled: boolean;
  record_count: number;
  last_updated_time?: string;
}
interface Record_ {
  id: string;
  session_id: string;
  summary: string;
  updated_at: string;
}
const q = encodeURIComponent;

export function Memory({ s }: { s: Strings }) {
  const [users, setUsers] = useState<MemUser[] | null>(null);
  const [user, setUser] = useState('');
  const [problem, setProblem] = useState<Problem | null>(null);
  const load = () =>
    api<{ users: MemUser[] }>('GET', '/wunder/admin/memory/users')
      .then((r) => setUsers(r.users || []))
      .catch((e) => setProblem(toProblem(e, s)));
  useEffect(() => {
    load();
  }, []);
  return (
    <section aria-labelledby="memory-h">
      <h2 id="memory-h">{s.memory}</h2>
      <ProblemView p={problem} />
      {users && users.length === 0 && <p class="muted">{s.none}</p>}
      <ul class="plain">
        {users?.map((u) => (
          <li>
            <button type="button" class="small" aria-current={u.user_id === user ? 'true' : undefined} onClick={() => setUser(u.user_id)}>
              {u.user_id}
            </button>{' '}
            <span class="muted">
              {u.record_count} {s.records} · {u.enabled ? s.on : s.off}
            </span>
          </li>
        ))}
      </ul>
      {user && (
        <div>
          <h3>{user}</h3>
          <MemoryRecords s={s} key={user} routes={adminRoutes(user)} onChange={load} />
        </div>
      )}
    </section>
  );
}

/** MemoryRoutes are where one user's memory is read and written. */
export interface MemoryRoutes {
  /** GET: {enabled, records}; DELETE: every record */
  all: string;
  /** the switch's method and path, {"enabled"} */
  enabled: [string, string];
  /** PUT {"summary"} and DELETE of one record */
  record: (sessionID: string) => string;
}

function adminRoutes(user: string): MemoryRoutes {
  const root = '/wunder/admin/memory/' + q(user);
  return { all: root, enabled: ['POST', root + '/enabled'], record: (sid) => root + '/' + q(sid) };
}

/** userMemoryRoutes are the user's own (/wunder/memory), naming the user the console shows. */
export function userMemoryRoutes(): MemoryRoutes {
  return {
    all: withUser('/wunder/memory'),
    enabled: ['PUT', withUser('/wunder/memory/enabled')],
    record: (sid) => withUser('/wunder/memory/' + q(sid)),
  };
}

/** MemoryRecords shows one user's switch and records, and changes them. */
export function MemoryRecords({ s, routes, onChange }: { s: Strings; routes: MemoryRoutes; onChange?: () => void }) {
  const [mem, setMem] = useState<{ enabled: boolean; records: Record_[] } | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [editing, setEditing] = useState('');
  const [draft, setDraft] = useState('');
  const load = () =>
    api<{ enabled: boolean; records: Record_[] }>('GET', routes.all)
      .then(setMem)
      .catch((e) => setProblem(toProblem(e, s)));
  useEffect(() => {
    load();
  }, [routes.all]);
  const act = async (f: () => Promise<unknown>) => {
    setProblem(null);
    try {
      await f();
      await load();
      onChange?.();
      return true;
    } catch (e) {
      setProblem(toProblem(e, s));
      return false;
    }
  };
  if (!mem) return <ProblemView p={problem} />;
  return (
    <div class="memory-records">
      <p class="memory-state" role="status">
        {s.memoryIs} <strong>{mem.enabled ? s.on : s.off}</strong> · {mem.records.length} {s.records}
      </p>
      <div class="actions">
        <button type="button" onClick={() => act(() => api(routes.enabled[0], routes.enabled[1], { enabled: !mem.enabled }))}>
          {mem.enabled ? s.disable : s.enable}
        </button>
        {mem.records.length > 0 && <ConfirmButton s={s} label={s.deleteAll} what={s.records} onConfirm={() => act(() => api('DELETE', routes.all))} />}
      </div>
      <ProblemView p={problem} />
      {mem.records.length === 0 && <p class="muted">{s.noRecords}</p>}
      <ul class="plain records">
        {mem.records.map((r) =>
          editing === r.session_id ? (
            <li data-session={r.session_id}>
              <form
                class="inline-edit"
                onSubmit={async (e) => {
                  e.preventDefault();
                  if (await act(() => api('PUT', routes.record(r.session_id), { summary: draft }))) setEditing('');
                }}
              >
                <label>
                  {s.summaryOf} {r.session_id}
                  <textarea name="memory-summary" rows={3} value={draft} onInput={(e) => setDraft((e.target as HTMLTextAreaElement).value)} />
                </label>
                <button type="submit" class="small primary">
                  {s.save}
                </button>{' '}
                <button type="button" class="small" onClick={() => setEditing('')}>
                  {s.cancel}
                </button>
              </form>
            </li>
          ) : (
            <li data-session={r.session_id}>
              <span class="muted">{r.session_id}</span> {r.summary}{' '}
              <button
                type="button"
                class="small"
                aria-label={s.editRecord + ' ' + r.session_id}
                onClick={() => {
                  setDraft(r.summary);
                  setEditing(r.session_id);
                }}
              >
                {s.editRecord}
              </button>{' '}
              <button type="button" class="small danger" aria-label={s.delete + ' ' + r.session_id} onClick={() => act(() => api('DELETE', routes.record(r.session_id)))}>
                {s.delete}
              </button>
            </li>
          ),
        )}
      </ul>
    </div>
  );
}
