// A user's own MCP servers (docs/tools.md#user-tools-and-shared-tools):
// GET /wunder/user_tools/mcp lists them (secrets as "******"), POST
// replaces the whole list, so adding, editing, removing and sharing a
// tool post it; POST /wunder/user_tools/mcp/tools lists a server's tools
// (a stored server's "******" stands for its stored secret), each with a
// switch that puts it in the server's shared_tools: offered to every
// other user as me@server@tool.
import { useEffect, useState } from 'preact/hooks';
import { api, withUser } from '../api';
import type { Strings } from '../i18n';
import { ConfirmButton } from '../confirm';
import { ProblemView, Saved, toProblem, type Problem } from '../admin/config';
import { ServerFields } from '../admin/mcp';
import { AdminTable } from '../admin/table';
import { me, withMe } from './user';

/** Server is an mcp.servers entry plus shared_tools; fields the form does not show are kept as they are. */
export interface Server {
  name: string;
  transport?: string;
  url?: string;
  command?: string;
  args?: string[];
  bearer_token?: string;
  description?: string;
  enabled?: boolean;
  shared_tools?: string[];
  [k: string]: unknown;
}
interface Tool {
  name: string;
  canonical_name: string;
  description?: string;
}

const LIST = '/wunder/user_tools/mcp';

/** saveServers posts the whole list and returns it as stored. */
export async function saveServers(servers: Server[]): Promise<Server[]> {
  const r = await api<{ servers: Server[] }>('POST', LIST, withMe({ servers }));
  return r.servers || [];
}

export function loadServers(): Promise<Server[]> {
  return api<{ servers: Server[] }>('GET', withUser(LIST)).then((r) => r.servers || []);
}

export function MyMCP({ s }: { s: Strings }) {
  const [servers, setServers] = useState<Server[] | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [saved, setSaved] = useState(false);
  const [editing, setEditing] = useState<Server | null>(null);
  const [listing, setListing] = useState('');
  const load = () =>
    loadServers()
      .then(setServers)
      .catch((e) => setProblem(toProblem(e, s)));
  useEffect(() => {
    load();
  }, []);
  const save = async (next: Server[]) => {
    setProblem(null);
    setSaved(false);
    try {
      setServers(await saveServers(next));
      setSaved(true);
      return true;
    } catch (e) {
      setProblem(toProblem(e, s));
      return false;
    }
  };
  const list = servers || [];
  const shown = list.find((x) => x.name === listing);
  return (
    <section aria-labelledby="my-mcp-h">
      <h2 id="my-mcp-h">{s.mcpServers}</h2>
      <p class="muted">{s.myMCPHint}</p>
      <AdminTable s={s} heads={[s.name, s.target, s.sharedHead]} empty={list.length === 0}>
        {list.map((x) => (
          <tr data-server={x.name}>
            <td>
              {x.name}
              {x.enabled === false && <span class="badge"> {s.disabled}</span>}
            </td>
            <td class="q">{x.url || [x.command, ...(x.args || [])].join(' ')}</td>
            <td>{(x.shared_tools || []).join(', ') || s.notShared}</td>
            <td class="nowrap">
              <button type="button" class="small" aria-label={s.tools + ' ' + x.name} aria-pressed={listing === x.name} onClick={() => setListing(listing === x.name ? '' : x.name)}>
                {s.tools}
              </button>{' '}
              <button type="button" class="small" aria-label={s.editServer + ' ' + x.name} onClick={() => setEditing(x)}>
                {s.editRecord}
              </button>{' '}
              <ConfirmButton
                s={s}
                small
                label={s.remove}
                what={x.name}
                onConfirm={() =>
                  save(list.filter((y) => y !== x)).then((ok) => {
                    if (ok && listing === x.name) setListing('');
                  })
                }
              />
            </td>
          </tr>
        ))}
      </AdminTable>
      <ProblemView p={problem} />
      <Saved s={s} on={saved} />
      {shown && <ServerTools s={s} server={shown} key={shown.name} onShare={(names) => save(list.map((y) => (y === shown ? { ...y, shared_tools: names } : y)))} />}
      {editing ? (
        <ServerForm
          s={s}
          key={'edit-' + editing.name}
          orig={editing}
          onCancel={() => setEditing(null)}
          onSave={async (x) => {
            const ok = await save(list.map((y) => (y === editing ? x : y)));
            if (ok) setEditing(null);
            return ok;
          }}
        />
      ) : (
        <ServerForm s={s} key="add" onSave={(x) => save([...list, x])} />
      )}
    </section>
  );
}

/** ServerForm adds a server, or edits orig (keeping the fields it does not show). */
function ServerForm({ s, orig, onSave, onCancel }: { s: Strings; orig?: Server; onSave: (x: Server) => Promise<boolean>; onCancel?: () => void }) {
  const [name, setName] = useState(orig?.name || '');
  const [transport, setTransport] = useState(orig?.transport || 'streamable-http');
  const [target, setTarget] = useState(orig ? orig.url || [orig.command, ...(orig.args || [])].filter(Boolean).join(' ') : '');
  const [token, setToken] = useState(orig?.bearer_token || '');
  const [desc, setDesc] = useState(orig?.description || '');
  const [enabled, setEnabled] = useState(orig?.enabled !== false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const x: Server = { ...(orig || {}), name: name.trim(), transport };
    delete x.url;
    delete x.command;
    delete x.args;
    if (transport === 'stdio') {
      const parts = target.trim().split(/\s+/);
      x.command = parts[0];
      if (parts.length > 1) x.args = parts.slice(1);
    } else x.url = target.trim();
    if (token.trim()) x.bearer_token = token.trim();
    else delete x.bearer_token;
    if (desc.trim()) x.description = desc.trim();
    else delete x.description;
    if (enabled) delete x.enabled;
    else x.enabled = false;
    if ((await onSave(x)) && !orig) {
      setName('');
      setTarget('');
      setToken('');
      setDesc('');
      setEnabled(true);
    }
  };
  const h = orig ? 'my-mcp-edit-h' : 'my-mcp-add-h';
  return (
    <form class="add-form" onSubmit={submit} aria-labelledby={h}>
      <h3 id={h}>{orig ? s.editServer + ': ' + orig.name : s.addServer}</h3>
      <ServerFields s={s} name={name} setName={setName} transport={transport} setTransport={setTransport} target={target} setTarget={setTarget} />
      <label>
        {s.bearerToken}
        <input name="mcp-token" type="password" autocomplete="off" value={token} onInput={(e) => setToken((e.target as HTMLInputElement).value)} />
      </label>
      <label>
        {s.description}
        <input name="mcp-description" value={desc} onInput={(e) => setDesc((e.target as HTMLInputElement).value)} />
      </label>
      <label class="check">
        <input type="checkbox" name="mcp-enabled" checked={enabled} onChange={() => setEnabled(!enabled)} />
        <span>{s.enabledLabel}</span>
      </label>
      <div class="actions">
        <button type="submit" class="primary">
          {orig ? s.save : s.add}
        </button>
        {onCancel && (
          <button type="button" onClick={onCancel}>
            {s.cancel}
          </button>
        )}
      </div>
    </form>
  );
}

/** ServerTools lists a stored server's tools, each with its share switch. */
function ServerTools({ s, server, onShare }: { s: Strings; server: Server; onShare: (names: string[]) => Promise<boolean> }) {
  const [tools, setTools] = useState<Tool[] | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  useEffect(() => {
    api<{ tools: Tool[] }>('POST', LIST + '/tools', withMe(server))
      .then((r) => setTools(r.tools || []))
      .catch((e) => setProblem(toProblem(e, s)));
  }, [server.name, server.url]);
  const shared = server.shared_tools || [];
  const flip = (t: string) => onShare(shared.includes(t) ? shared.filter((x) => x !== t) : [...shared, t]);
  return (
    <section class="tester my-tools" aria-labelledby="my-mcp-tools-h">
      <h3 id="my-mcp-tools-h">
        {s.toolsOf} {server.name}
      </h3>
      <ProblemView p={problem} />
      {tools && tools.length === 0 && <p class="muted">{s.none}</p>}
      {tools && tools.length > 0 && (
        <ul class="plain server-tools">
          {tools.map((t) => (
            <li data-tool={t.name}>
              <code>{t.canonical_name}</code> {t.description && <span class="muted">{t.description}</span>}
              <label class="check">
                <input type="checkbox" name="tool-shared" checked={shared.includes(t.name)} onChange={() => flip(t.name)} aria-label={s.shareWithOthers + ' ' + t.name} />
                <span>{shared.includes(t.name) ? s.sharedAs + ' ' + me() + '@' + server.name + '@' + t.name : s.notShared}</span>
              </label>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
