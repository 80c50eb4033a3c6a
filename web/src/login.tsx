// Login: a user id and password against POST /wunder/auth/login, or, on a
// server without an API key (GET /wunder/auth/config says login is not
// required), just the user id to act as (the anonymous local mode).
import { useEffect, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import { api, ApiError, setIdentity, type Identity } from './api';
import { lang, strings } from './i18n';
import { useSignal } from './state';

interface AuthConfig {
  login_required: boolean;
  login: boolean;
}

export function Login({ onDone, toolbar }: { onDone: (i: Identity) => void; toolbar: ComponentChildren }) {
  const s = strings(useSignal(lang));
  const [cfg, setCfg] = useState<AuthConfig | null>(null);
  const [userId, setUserId] = useState(localStorage.getItem('wunder.user') || '');
  const [password, setPassword] = useState('');
  const [err, setErr] = useState('');
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    api<AuthConfig>('GET', '/wunder/auth/config')
      .then(setCfg)
      .catch((e) => setErr(String(e.message || e)));
  }, []);

  const submit = async (e: Event) => {
    e.preventDefault();
    setErr('');
    setBusy(true);
    try {
      const uid = userId.trim();
      if (cfg && !cfg.login_required) {
        // Anonymous: no credential; the local operator is an admin.
        const i: Identity = { token: '', userId: uid, admin: true };
        setIdentity(i);
        const me = await api<{ admin: boolean }>('GET', '/wunder/auth/me').catch(() => ({ admin: true }));
        i.admin = me.admin;
        localStorage.setItem('wunder.user', uid);
        onDone(i);
        return;
      }
      const res = await api<{ token: string; user: { user_id: string; roles: string[] } }>('POST', '/wunder/auth/login', {
        user_id: uid,
        password,
      });
      localStorage.setItem('wunder.user', res.user.user_id);
      onDone({ token: res.token, userId: res.user.user_id, admin: (res.user.roles || []).includes('admin') });
    } catch (e) {
      setIdentity(null);
      setErr(e instanceof ApiError ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };

  const anon = cfg !== null && !cfg.login_required;
  return (
    <main class="login">
      <div class="login-tools">{toolbar}</div>
      <form class="card" onSubmit={submit} aria-busy={cfg === null}>
        <h1>{anon ? s.anonTitle : s.loginTitle}</h1>
        {anon && <p class="muted">{s.anonHint}</p>}
        <label>
          {s.userId}
          <input name="user_id" autoComplete="username" required value={userId} onInput={(e) => setUserId((e.target as HTMLInputElement).value)} />
        </label>
        {cfg?.login_required && (
          <label>
            {s.password}
            <input
              name="password"
              type="password"
              autoComplete="current-password"
              required
              value={password}
              onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
            />
          </label>
        )}
        {err && (
          <p class="error" role="alert">
            {err}
          </p>
        )}
        <button type="submit" class="primary" disabled={busy || cfg === null}>
          {anon ? s.continue : s.login}
        </button>
      </form>
    </main>
  );
}
