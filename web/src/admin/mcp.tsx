// MCP servers: GET|POST /wunder/admin/mcp (list, add, remove), and "test
// this tool": POST /wunder/admin/mcp/tools lists a server's tools, POST
// /wunder/admin/mcp/tools/call calls one with arguments from a form built
// from its input schema (JSON when the schema is not simple).
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import type { Strings } from '../i18n';
import { formable, fromForm, SchemaForm, toForm } from '../schemaform';
import { ProblemView, Saved, toProblem, useSection, type Problem } from './config';
import { AdminTable } from './table';

interface Server {
  name: string;
  transport?: string;
  url?: string;
  command?: string;
  args?: string[];
  enabled?: boolean;
}
interface Tool {
  name: string;
  description?: string;
  input_schema?: unknown;
}

export function MCP({ s }: { s: Strings }) {
  const sec = useSection<{ servers: Server[] }>('/wunder/admin/mcp', s);
  const [testing, setTesting] = useState('');
  const servers = sec.data?.servers || [];
  return (
    <section aria-labelledby="mcp-h">
      <h2 id="mcp-h">{s.mcpServers}</h2>
      <AdminTable s={s} heads={[s.name, s.transport, s.target]} empty={servers.length === 0}>
      {servers.map((x) => (
        <tr data-server={x.name}>
          <td>{x.name}</td>
          <td>{x.transport}</td>
          <td class="q">{x.url || [x.command, ...(x.args || [])].join(' ')}</td>
          <td class="nowrap">
            <button type="button" class="small" onClick={() => setTesting(testing === x.name ? '' : x.name)}>
              {s.testTool}
            </button>{' '}
            <button type="button" class="small danger" aria-label={s.remove + ' ' + x.name} onClick={() => sec.save({ servers: servers.filter((y) => y !== x) })}>
              {s.remove}
            </button>
          </td>
        </tr>
      ))}
      </AdminTable>
      <ProblemView p={sec.problem} />
      <Saved s={s} on={sec.saved} />
      {testing && <ToolTester s={s} server={testing} key={testing} />}
      <AddServer s={s} onAdd={(x) => sec.save({ servers: [...servers, x] })} />
    </section>
  );
}

function AddServer({ s, onAdd }: { s: Strings; onAdd: (x: Server) => Promise<boolean> }) {
  const [name, setName] = useState('');
  const [transport, setTransport] = useState('streamable-http');
  const [target, setTarget] = useState('');
  const submit = async (e: Event) => {
    e.preventDefault();
    const x: Server = { name: name.trim(), transport };
    if (transport === 'stdio') {
      const parts = target.trim().split(/\s+/);
      x.command = parts[0];
      if (parts.length > 1) x.args = parts.slice(1);
    } else x.url = target.trim();
    if (await onAdd(x)) {
      setName('');
      setTarget('');
    }
  };
  return (
    <form class="add-form" onSubmit={submit} aria-labelledby="mcp-add-h">
      <h3 id="mcp-add-h">{s.addServer}</h3>
      <ServerFields s={s} name={name} setName={setName} transport={transport} setTransport={setTransport} target={target} setTarget={setTarget} />
      <button type="submit" class="primary">
        {s.add}
      </button>
    </form>
  );
}

/** short is a tool's own name: the listing names it server@tool, the call wants tool. */
function short(server: string, name: string): string {
  return name.startsWith(server + '@') ? name.slice(server.length + 1) : name;
}

function ToolTester({ s, server }: { s: Strings; server: string }) {
  const [tools, setTools] = useState<Tool[] | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [tool, setTool] = useState<Tool | null>(null);
  const [vals, setVals] = useState<Record<string, string | boolean>>({});
  const [json, setJSON] = useState('{}');
  const [result, setResult] = useState<{ result: unknown; is_error: boolean; duration_ms: number } | null>(null);
  const [busy, setBusy] = useState(false);

  const list = async () => {
    setProblem(null);
    try {
      const r = await api<{ tools: Tool[] }>('POST', '/wunder/admin/mcp/tools', { name: server });
      setTools(r.tools || []);
    } catch (e) {
      setProblem(toProblem(e, s));
    }
  };
  useEffect(() => {
    list();
  }, [server]);

  const pick = (name: string) => {
    const t = tools?.find((x) => short(server, x.name) === name) || null;
    setTool(t);
    setResult(null);
    setJSON('{}');
    if (t && formable(t.input_schema)) setVals(toForm(t.input_schema, {}));
  };
  const call = async (e: Event) => {
    e.preventDefault();
    if (!tool) return;
    setProblem(null);
    let args: Record<string, unknown>;
    try {
      args = formable(tool.input_schema) ? fromForm(tool.input_schema, {}, vals, s) : JSON.parse(json);
    } catch (x) {
      setProblem({ text: (x as Error).message, errors: [] });
      return;
    }
    setBusy(true);
    try {
      setResult(await api('POST', '/wunder/admin/mcp/tools/call', { server, tool: short(server, tool.name), arguments: args }));
    } catch (x) {
      setProblem(toProblem(x, s));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="tester" onSubmit={call} aria-labelledby="tester-h">
      <h3 id="tester-h">
        {s.testTool}: {server}
      </h3>
      <ProblemView p={problem} />
      {tools && (
        <label>
          {s.tool}
          <select name="mcp-tool" value={tool ? short(server, tool.name) : ''} onChange={(e) => pick((e.target as HTMLSelectElement).value)}>
            <option value="">—</option>
            {tools.map((t) => (
              <option value={short(server, t.name)}>{t.name}</option>
            ))}
          </select>
        </label>
      )}
      {tool?.description && <p class="muted">{tool.description}</p>}
      {tool &&
        (formable(tool.input_schema) ? (
          <SchemaForm key={tool.name} schema={tool.input_schema} vals={vals} onChange={(k, v) => setVals({ ...vals, [k]: v })} />
        ) : (
          <label>
            {s.arguments}
            <textarea class="mono" rows={5} value={json} onInput={(e) => setJSON((e.target as HTMLTextAreaElement).value)} />
          </label>
        ))}
      {tool && (
        <button type="submit" class="primary" disabled={busy}>
          {s.callTool}
        </button>
      )}
      {result && (
        <div class="tool-result" data-error={String(result.is_error)}>
          <h4>
            {s.result} ({result.duration_ms} {s.ms}){result.is_error && <span class="badge failed">{s.error}</span>}
          </h4>
          <pre>{typeof result.result === 'string' ? result.result : JSON.stringify(result.result, null, 2)}</pre>
        </div>
      )}
    </form>
  );
}

/**
 * ServerFields are an MCP server's name, transport and URL (or command),
 * the fields the admin's and a user's server forms share.
 */
export function ServerFields(p: {
  s: Strings;
  name: string;
  setName: (v: string) => void;
  transport: string;
  setTransport: (v: string) => void;
  target: string;
  setTarget: (v: string) => void;
}) {
  const { s } = p;
  return (
    <>
      <label>
        {s.name}
        <input name="mcp-name" required value={p.name} onInput={(e) => p.setName((e.target as HTMLInputElement).value)} />
      </label>
      <label>
        {s.transport}
        <select name="mcp-transport" value={p.transport} onChange={(e) => p.setTransport((e.target as HTMLSelectElement).value)}>
          <option value="streamable-http">streamable-http</option>
          <option value="sse">sse</option>
          <option value="stdio">stdio</option>
        </select>
      </label>
      <label>
        {p.transport === 'stdio' ? s.command : 'URL'}
        <input name="mcp-target" required value={p.target} onInput={(e) => p.setTarget((e.target as HTMLInputElement).value)} />
      </label>
    </>
  );
}
