// Sharing (docs/tools.md): what the user offers to every other user —
// their MCP servers' shared_tools (me@server@tool), their shared skills
// (me@skill), their shared knowledge bases (me@base) — each with "Stop
// sharing" (the same writes as the switches in the other tabs), and what
// others share with them (GET /wunder/user_tools/tools, shared_tools).
import { useEffect, useState } from 'preact/hooks';
import { api, withUser } from '../api';
import type { Strings } from '../i18n';
import { ProblemView, toProblem, type Problem } from '../admin/config';
import { AdminTable } from '../admin/table';
import { loadServers, saveServers, type Server } from './mcp';
import { me } from './user';

interface Shared {
  /** the name every other user sees */
  name: string;
  kind: string;
  stop: () => Promise<unknown>;
}
interface CatalogTool {
  name: string;
  description?: string;
  owner?: string;
  source?: string;
}
interface Base {
  name: string;
  description: string;
  shared?: boolean;
}

const KB = '/wunder/user_tools/knowledge';
const SKILLS = '/wunder/user_tools/skills';

export function Sharing({ s }: { s: Strings }) {
  const [mine, setMine] = useState<Shared[] | null>(null);
  const [theirs, setTheirs] = useState<CatalogTool[] | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const load = async () => {
    try {
      const [servers, skills, kb, tools] = await Promise.all([
        loadServers(),
        api<{ shared: string[]; skills: { name: string; tool_name: string; shared?: boolean }[] }>('GET', withUser(SKILLS)),
        api<{ knowledge: { bases: Base[] } }>('GET', withUser(KB)),
        api<{ shared_tools: CatalogTool[] }>('GET', withUser('/wunder/user_tools/tools')),
      ]);
      const out: Shared[] = [];
      for (const x of servers)
        for (const t of x.shared_tools || [])
          out.push({
            name: `${me()}@${x.name}@${t}`,
            kind: s.kindMCP,
            stop: () => saveServers(servers.map((y: Server) => (y === x ? { ...y, shared_tools: (y.shared_tools || []).filter((n) => n !== t) } : y))),
          });
      for (const k of skills.skills || [])
        if (k.shared)
          out.push({ name: k.tool_name, kind: s.kindSkill, stop: () => api('POST', withUser(SKILLS), { shared: (skills.shared || []).filter((n) => n !== k.name) }) });
      const bases = kb.knowledge.bases || [];
      for (const b of bases)
        if (b.shared)
          out.push({
            name: `${me()}@${b.name}`,
            kind: s.kindBase,
            stop: () =>
              api('POST', withUser(KB), {
                knowledge: { bases: bases.map((y) => ({ name: y.name, description: y.description, shared: y === b ? false : !!y.shared })) },
              }),
          });
      setMine(out);
      setTheirs(tools.shared_tools || []);
    } catch (e) {
      setProblem(toProblem(e, s));
    }
  };
  useEffect(() => {
    load();
  }, []);
  const stop = async (x: Shared) => {
    setProblem(null);
    try {
      await x.stop();
    } catch (e) {
      setProblem(toProblem(e, s));
    }
    await load();
  };
  return (
    <section aria-labelledby="sharing-h">
      <h2 id="sharing-h">{s.sharing}</h2>
      <p class="muted">{s.sharingHint}</p>
      <ProblemView p={problem} />
      <h3 id="you-share-h">{s.youShare}</h3>
      <div class="you-share">
        <AdminTable s={s} heads={[s.name, s.kind]} empty={mine?.length === 0}>
          {mine?.map((x) => (
            <tr data-shared={x.name}>
              <td>
                <code>{x.name}</code>
              </td>
              <td>{x.kind}</td>
              <td class="nowrap">
                <button type="button" class="small" aria-label={s.stopSharing + ' ' + x.name} onClick={() => stop(x)}>
                  {s.stopSharing}
                </button>
              </td>
            </tr>
          ))}
        </AdminTable>
      </div>
      <h3 id="shared-with-you-h">{s.sharedWithYou}</h3>
      <div class="shared-with-you">
        <AdminTable s={s} heads={[s.name, s.owner, s.description]} empty={theirs?.length === 0}>
          {theirs?.map((t) => (
            <tr data-tool={t.name}>
              <td>
                <code>{t.name}</code>
              </td>
              <td>{t.owner}</td>
              <td class="q">{t.description}</td>
              <td />
            </tr>
          ))}
        </AdminTable>
      </div>
    </section>
  );
}
