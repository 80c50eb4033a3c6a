// Memory (docs/memory.md): the users with a switch or records
// (GET /wunder/admin/memory/users), one user's records, the switch, and
// deleting one record or all.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
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
  const [records, setRecords] = useState<{ enabled: boolean; records: Record_[] } | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const load = () =>
    api<{ users: MemUser[] }>('GET', '/wunder/admin/memory/users')
      .then((r) => setUsers(r.users || []))
      .catch((e) => setProblem(toProblem(e, s)));
  const open = (u: string) => {
    setUser(u);
    api<{ enabled: boolean; records: Record_[] }>('GET', '/wunder/admin/memory/' + q(u))
      .then(setRecords)
      .catch((e) => setProblem(toProblem(e, s)));
  };
  useEffect(() => {
    load();
  }, []);
  const act = async (f: () => Promise<unknown>) => {
    setProblem(null);
    try {
      await f();
      await load();
      if (user) open(user);
    } catch (e) {
      setProblem(toProblem(e, s));
    }
  };
  return (
    <section aria-labelledby="memory-h">
      <h2 id="memory-h">{s.memory}</h2>
      <ProblemView p={problem} />
      {users && users.length === 0 && <p class="muted">{s.none}</p>}
      <ul class="plain">
        {users?.map((u) => (
          <li>
            <button type="button" class="small" aria-current={u.user_id === user ? 'true' : undefined} onClick={() => open(u.user_id)}>
              {u.user_id}
            </button>{' '}
            <span class="muted">
              {u.record_count} {s.records} · {u.enabled ? s.on : s.off}
            </span>
          </li>
        ))}
      </ul>
      {user && records && (
        <div>
          <h3>{user}</h3>
          <div class="actions">
            <button type="button" onClick={() => act(() => api('POST', `/wunder/admin/memory/${q(user)}/enabled`, { enabled: !records.enabled }))}>
              {records.enabled ? s.disable : s.enable}
            </button>
            <ConfirmButton s={s} label={s.deleteAll} what={user} onConfirm={() => act(() => api('DELETE', '/wunder/admin/memory/' + q(user)))} />
          </div>
          <ul class="plain records">
            {records.records.map((r) => (
              <li>
                <span class="muted">{r.session_id}</span> {r.summary}{' '}
                <button
                  type="button"
                  class="small danger"
                  aria-label={s.delete + ' ' + r.session_id}
                  onClick={() => act(() => api('DELETE', `/wunder/admin/memory/${q(user)}/${q(r.session_id)}`))}
                >
                  {s.delete}
                </button>
              </li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}
