// Language servers (docs/lsp.md): GET|POST /wunder/admin/lsp. The
// configured servers (a switch each), the pool's servers and workers
// ("status"), the section edited as JSON and saved with its revision (the
// server's validation with key paths, 409 reloaded), and "Test":
// POST /wunder/admin/lsp/test {"server"} starts it on a scratch directory
// and shows what it answered.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import type { Strings } from '../i18n';
import { ProblemView, SectionEditor, toProblem, useSection, type Problem } from './config';
import { AdminTable } from './table';

interface Server {
  id: string;
  name?: string;
  command?: string[];
  extensions?: string[];
  root_markers?: string[];
  enabled?: boolean;
  [k: string]: unknown;
}
interface Worker {
  user_id: string;
  root: string;
  server: string;
  state: string;
  pid: number;
  rss_bytes: number;
  open_documents: number;
  restarts: number;
}
interface LSPDoc {
  lsp: { enabled: boolean; servers?: Server[]; [k: string]: unknown };
  status?: { servers?: Server[]; workers?: Worker[] };
}
interface TestResult {
  server: string;
  name?: string;
  version?: string;
  capabilities?: string[];
  start_ms?: number;
  rss_bytes?: number;
  shutdown_error?: string;
}

const mib = (b: number) => (b / 1048576).toFixed(1) + ' MiB';

export function LSP({ s }: { s: Strings }) {
  const sec = useSection<LSPDoc>('/wunder/admin/lsp', s);
  const [text, setText] = useState('');
  const [testing, setTesting] = useState('');
  const [result, setResult] = useState<TestResult | null>(null);
  const [testProblem, setTestProblem] = useState<Problem | null>(null);
  useEffect(() => {
    if (sec.data) setText(JSON.stringify(sec.data.lsp, null, 2));
  }, [sec.data]);
  const lsp = sec.data?.lsp;
  const running = new Map((sec.data?.status?.servers || []).map((x) => [x.id, x]));
  const servers = lsp?.servers || [];
  // the pool's presets found on PATH are servers too, though not configured
  const rows: Server[] = [...servers, ...[...running.values()].filter((x) => !servers.some((y) => y.id === x.id))];
  const save = () => {
    let next: unknown;
    try {
      next = JSON.parse(text);
    } catch (e) {
      sec.setProblem({ text: s.invalidJSON + ': ' + (e as Error).message, errors: [] });
      return;
    }
    sec.save({ lsp: next } as Partial<LSPDoc>);
  };
  const toggle = (id: string, on: boolean) => {
    if (!lsp) return;
    const list = servers.some((x) => x.id === id) ? servers.map((x) => (x.id === id ? { ...x, enabled: on } : x)) : [...servers, { id, enabled: on }];
    sec.save({ lsp: { ...lsp, servers: list } });
  };
  const test = async (id: string) => {
    setTesting(id);
    setResult(null);
    setTestProblem(null);
    try {
      setResult(await api<TestResult>('POST', '/wunder/admin/lsp/test', { server: id }));
    } catch (e) {
      setTestProblem(toProblem(e, s));
    } finally {
      setTesting((t) => (t === id ? '' : t));
    }
  };
  return (
    <section aria-labelledby="lsp-h">
      <h2 id="lsp-h">{s.lsp}</h2>
      {lsp && (
        <label class="check">
          <input type="checkbox" name="lsp-enabled" checked={lsp.enabled} onChange={() => sec.save({ lsp: { ...lsp, enabled: !lsp.enabled } })} />
          <span>{s.lspEnabled}</span>
        </label>
      )}
      <AdminTable s={s} heads={[s.name, s.command, s.extensions, s.state]} empty={rows.length === 0}>
      {rows.map((x) => {
        const live = running.get(x.id);
        const on = x.enabled !== false;
        return (
          <tr data-lsp={x.id}>
            <td>
              <label class="check">
                <input type="checkbox" checked={on} onChange={() => toggle(x.id, !on)} aria-label={(on ? s.disable : s.enable) + ' ' + x.id} />
                <span>{x.id}</span>
              </label>
            </td>
            <td class="q">
              <code>{(x.command?.length ? x.command : live?.command || []).join(' ')}</code>
            </td>
            <td>{(x.extensions?.length ? x.extensions : live?.extensions || []).join(' ')}</td>
            <td>{live ? s.available : on ? s.unavailable : s.disabled}</td>
            <td class="nowrap">
              <button type="button" class="small" disabled={!live || testing === x.id} onClick={() => test(x.id)}>
                {testing === x.id ? s.running : s.test}
              </button>
            </td>
          </tr>
        );
      })}
      </AdminTable>
      <ProblemView p={testProblem} />
      {result && (
        <div class="tool-result lsp-result" role="status">
          <h3>
            {s.testResult}: {result.name || result.server} {result.version}
          </h3>
          <p>
            {result.start_ms} {s.ms} · {mib(result.rss_bytes || 0)}
          </p>
          <p class="muted">
            {s.capabilities}: {(result.capabilities || []).join(', ')}
          </p>
          {result.shutdown_error && <p class="error">{result.shutdown_error}</p>}
        </div>
      )}
      <h3>{s.workers}</h3>
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th>{s.user}</th>
              <th>{s.name}</th>
              <th>{s.state}</th>
              <th>{s.root}</th>
              <th>{s.rss}</th>
            </tr>
          </thead>
          <tbody>
            {(sec.data?.status?.workers || []).length === 0 && (
              <tr>
                <td colSpan={5} class="muted">
                  {s.none}
                </td>
              </tr>
            )}
            {(sec.data?.status?.workers || []).map((w) => (
              <tr>
                <td>{w.user_id}</td>
                <td>{w.server}</td>
                <td>{w.state}</td>
                <td class="q">{w.root}</td>
                <td>{mib(w.rss_bytes)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <SectionEditor s={s} section="lsp" sec={sec} text={text} setText={setText} onSave={save} rows={12} name="lsp-json" />
    </section>
  );
}
