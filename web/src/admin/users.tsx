// Users and tokens (docs/http.md#accounts-and-tokens): the accounts
// (GET|POST /wunder/admin/user_accounts, PATCH to disable, DELETE), and a
// user's tokens (GET|POST /wunder/auth/tokens?user_id=, DELETE
// /wunder/auth/tokens/{id}); a new token's secret is shown once.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import type { Strings } from '../i18n';
import { ConfirmButton } from '../confirm';
import { ProblemView, toProblem, type Problem } from './config';
import { AdminTable } from './table';

interface Account {
  user_id: string;
  display_name?: string;
  roles: string[];
  disabled: boolean;
}
interface Token {
  id: string;
  name: string;
  kind: string;
  created_at: string;
  expires_at?: string;
}
const q = encodeURIComponent;

export function Users({ s }: { s: Strings }) {
  const [users, setUsers] = useState<Account[]>([]);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [tokensOf, setTokensOf] = useState('');
  const [form, setForm] = useState({ user_id: '', password: '', admin: false });
  const load = () =>
    api<{ users: Account[] }>('GET', '/wunder/admin/user_accounts?limit=200')
      .then((r) => setUsers(r.users || []))
      .catch((e) => setProblem(toProblem(e, s)));
  useEffect(() => {
    load();
  }, []);
  const act = async (f: () => Promise<unknown>) => {
    setProblem(null);
    try {
      await f();
      await load();
    } catch (e) {
      setProblem(toProblem(e, s));
    }
  };
  return (
    <section aria-labelledby="users-h">
      <h2 id="users-h">{s.accounts}</h2>
      <ProblemView p={problem} />
      <AdminTable s={s} heads={[s.userId, s.roles, s.state]} empty={false}>
      {users.map((u) => (
        <tr data-user={u.user_id}>
          <td>{u.user_id}</td>
          <td>{u.roles.join(', ')}</td>
          <td>{u.disabled ? s.disabled : s.active}</td>
          <td class="nowrap">
            <button type="button" class="small" onClick={() => setTokensOf(tokensOf === u.user_id ? '' : u.user_id)}>
              {s.tokens}
            </button>{' '}
            <button type="button" class="small" onClick={() => act(() => api('PATCH', '/wunder/admin/user_accounts/' + q(u.user_id), { disabled: !u.disabled }))}>
              {u.disabled ? s.enable : s.disable}
            </button>{' '}
            <ConfirmButton s={s} small label={s.delete} what={u.user_id} onConfirm={() => act(() => api('DELETE', '/wunder/admin/user_accounts/' + q(u.user_id)))} />
          </td>
        </tr>
      ))}
      </AdminTable>
      {tokensOf && <Tokens s={s} user={tokensOf} key={tokensOf} />}
      <form
        class="add-form"
        aria-labelledby="user-add-h"
        onSubmit={(e) => {
          e.preventDefault();
          act(() =>
            api('POST', '/wunder/admin/user_accounts', { user_id: form.user_id.trim(), password: form.password, roles: form.admin ? ['admin'] : ['user'] }).then(() =>
              setForm({ user_id: '', password: '', admin: false }),
            ),
          );
        }}
      >
        <h3 id="user-add-h">{s.addUser}</h3>
        <label>
          {s.userId}
          <input required autoComplete="off" value={form.user_id} onInput={(e) => setForm({ ...form, user_id: (e.target as HTMLInputElement).value })} />
        </label>
        <label>
          {s.password}
          <input required type="password" autoComplete="new-password" value={form.password} onInput={(e) => setForm({ ...form, password: (e.target as HTMLInputElement).value })} />
        </label>
        <label class="check">
          <input type="checkbox" checked={form.admin} onChange={(e) => setForm({ ...form, admin: (e.target as HTMLInputElement).checked })} />
          <span>{s.adminRole}</span>
        </label>
        <button type="submit" class="primary">
          {s.add}
        </button>
      </form>
    </section>
  );
}

function Tokens({ s, user }: { s: Strings; user: string }) {
  const [tokens, setTokens] = useState<Token[]>([]);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [name, setName] = useState('');
  const [secret, setSecret] = useState('');
  const load = () =>
    api<{ tokens: Token[] }>('GET', '/wunder/auth/tokens?user_id=' + q(user))
      .then((r) => setTokens(r.tokens || []))
      .catch((e) => setProblem(toProblem(e, s)));
  useEffect(() => {
    load();
  }, [user]);
  const act = async (f: () => Promise<unknown>) => {
    setProblem(null);
    try {
      await f();
      await load();
    } catch (e) {
      setProblem(toProblem(e, s));
    }
  };
  return (
    <div class="tokens" aria-labelledby="tokens-h">
      <h3 id="tokens-h">
        {s.tokens}: {user}
      </h3>
      <ProblemView p={problem} />
      {secret && (
        <p class="status" role="status">
          {s.tokenOnce} <code class="secret">{secret}</code>
        </p>
      )}
      <ul class="plain">
        {tokens.length === 0 && <li class="muted">{s.none}</li>}
        {tokens.map((t) => (
          <li>
            {t.name || t.id} <span class="muted">({t.kind}{t.expires_at ? ' · ' + t.expires_at : ''})</span>{' '}
            <button type="button" class="small danger" onClick={() => act(() => (setSecret(''), api('DELETE', '/wunder/auth/tokens/' + q(t.id))))}>
              {s.revoke}
            </button>
          </li>
        ))}
      </ul>
      <form
        class="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          act(() => api<{ token: string }>('POST', '/wunder/auth/tokens', { user_id: user, name: name.trim(), ttl_s: 0 }).then((r) => (setSecret(r.token), setName(''))));
        }}
      >
        <input aria-label={s.tokenName} placeholder={s.tokenName} required value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        <button type="submit">{s.newToken}</button>
      </form>
    </div>
  );
}
