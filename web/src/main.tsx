// The wunder web console: one page, hash-routed (#/chat, #/monitor), over
// the public API only. New pages (workspace, admin, memory) slot into
// PAGES and the nav with no other change.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, identity, setIdentity, type Identity } from './api';
import { lang, setLang, strings, type Lang } from './i18n';
import { useSignal, signal } from './state';
import { Login } from './login';
import { Chat } from './chat';
import { Monitor } from './monitor';
import { Workspace } from './workspace/workspace';
import { Pending, PendingBadge, usePendingPoll } from './pending';
import './style.css';

type Theme = 'light' | 'dark';
const theme = signal<Theme>(
  (localStorage.getItem('wunder.theme') as Theme) ||
    (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'),
);
function applyTheme(t: Theme) {
  document.documentElement.dataset.theme = t;
}
applyTheme(theme.get());
theme.subscribe((t) => {
  localStorage.setItem('wunder.theme', t);
  applyTheme(t);
});
document.documentElement.lang = lang.get() === 'zh' ? 'zh-CN' : 'en';

interface Page {
  id: string;
  label: (s: ReturnType<typeof strings>) => string;
  admin?: boolean;
  view: () => preact.JSX.Element;
}

const PAGES: Page[] = [
  { id: 'chat', label: (s) => s.chat, view: () => <Chat /> },
  { id: 'workspace', label: (s) => s.workspace, view: () => <Workspace /> },
  { id: 'mine', label: (s) => s.myTools, view: () => <Lazy key="mine" load={() => import('./mine/mine').then((m) => m.Mine)} /> },
  { id: 'pending', label: (s) => s.pendingNav, view: () => <Pending /> },
  { id: 'monitor', label: (s) => s.monitor, admin: true, view: () => <Monitor /> },
  { id: 'performance', label: (s) => s.performance, admin: true, view: () => <Lazy key="performance" load={() => import('./performance').then((m) => m.Performance)} /> },
  { id: 'admin', label: (s) => s.admin, admin: true, view: () => <Lazy key="admin" load={() => import('./admin/admin').then((m) => m.Admin)} /> },
];

/** Lazy renders a page loaded on demand (the admin pages and "My tools" stay out of the first load). */
function Lazy({ load }: { load: () => Promise<() => preact.JSX.Element> }) {
  const [C, setC] = useState<(() => preact.JSX.Element) | null>(null);
  const [err, setErr] = useState('');
  useEffect(() => {
    load()
      .then((c) => setC(() => c))
      .catch((e) => setErr(String(e)));
  }, []);
  if (err) return <p class="error" role="alert">{err}</p>;
  return C ? <C /> : <p class="muted" role="status">…</p>;
}

function useRoute(): string {
  const read = () => location.hash.replace(/^#\/?/, '') || 'chat';
  const [r, setR] = useState(read());
  useEffect(() => {
    const on = () => setR(read());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return r;
}

function App() {
  const l = useSignal(lang);
  const t = useSignal(theme);
  const s = strings(l);
  const [who, setWho] = useState<Identity | null>(identity());
  const route = useRoute();
  usePendingPoll(who?.userId ?? '');
  useEffect(() => {
    document.title = s.title;
  }, [s]);

  if (!who) {
    return (
      <Login
        onDone={(i) => {
          setIdentity(i);
          setWho(i);
        }}
        toolbar={<Settings l={l} t={t} />}
      />
    );
  }
  const pages = PAGES.filter((p) => !p.admin || who.admin);
  const page = pages.find((p) => p.id === route) || pages[0];
  const logout = async () => {
    if (who.token) await api('POST', '/wunder/auth/logout').catch(() => {});
    setIdentity(null);
    setWho(null);
  };
  return (
    <div class="app">
      <a class="skip" href="#content">
        {s.skip}
      </a>
      <header class="top">
        <span class="brand">wunder</span>
        <nav aria-label={s.navigation}>
          {pages.map((p) => (
            <a href={'#/' + p.id} aria-current={p === page ? 'page' : undefined}>
              {p.label(s)}
              {p.id === 'pending' && <PendingBadge />}
            </a>
          ))}
        </nav>
        <span class="spacer" />
        <Settings l={l} t={t} />
        <span class="who" title={who.userId}>
          {who.userId}
        </span>
        <button type="button" class="ghost" onClick={logout}>
          {s.logout}
        </button>
      </header>
      <main id="content" class="content">
        {page.view()}
      </main>
    </div>
  );
}

function Settings({ l, t }: { l: Lang; t: Theme }) {
  const s = strings(l);
  return (
    <span class="settings">
      <label class="inline">
        <span class="sr-only">{s.language}</span>
        <select value={l} onChange={(e) => setLang((e.target as HTMLSelectElement).value as Lang)}>
          <option value="en">English</option>
          <option value="zh">中文</option>
        </select>
      </label>
      <button
        type="button"
        class="ghost"
        aria-label={s.theme + ': ' + (t === 'dark' ? s.dark : s.light)}
        onClick={() => theme.set(t === 'dark' ? 'light' : 'dark')}
      >
        {t === 'dark' ? '☾' : '☀'}
      </button>
    </span>
  );
}

render(<App />, document.getElementById('app')!);
