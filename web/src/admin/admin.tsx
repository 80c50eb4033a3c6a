// The admin page (admins; loaded on demand so the first load stays small):
// models, MCP servers, A2A services, language servers, skills, knowledge
// bases, users and tokens, memory, each a tab over its admin API
// (docs/admin.md, docs/http.md, docs/lsp.md, docs/tools.md, docs/memory.md).
import { lang, strings } from '../i18n';
import { useSignal } from '../state';
import { Tabs, useTab } from '../tabs';
import { Models } from './models';
import { MCP } from './mcp';
import { A2A } from './a2a';
import { Users } from './users';
import { Memory } from './memory';
import { LSP } from './lsp';
import { Skills } from './skills';
import { Knowledge } from './knowledge';

const TABS = ['models', 'mcp', 'a2a', 'lsp', 'skills', 'knowledge', 'users', 'memory'] as const;
type Tab = (typeof TABS)[number];

export function Admin() {
  const s = strings(useSignal(lang));
  const [tab, pick] = useTab<Tab>('wunder.adminTab', TABS);
  const label: Record<Tab, string> = {
    models: s.models,
    mcp: s.mcpServers,
    a2a: s.a2aServices,
    lsp: s.lspTab,
    skills: s.skills,
    knowledge: s.knowledge,
    users: s.accounts,
    memory: s.memory,
  };
  return (
    <div class="admin">
      <h1>{s.admin}</h1>
      <Tabs tabs={TABS} tab={tab} pick={pick} label={label} name={s.admin} panel="admin-panel">
        {tab === 'models' && <Models s={s} />}
        {tab === 'mcp' && <MCP s={s} />}
        {tab === 'a2a' && <A2A s={s} />}
        {tab === 'lsp' && <LSP s={s} />}
        {tab === 'skills' && <Skills s={s} />}
        {tab === 'knowledge' && <Knowledge s={s} />}
        {tab === 'users' && <Users s={s} />}
        {tab === 'memory' && <Memory s={s} />}
      </Tabs>
    </div>
  );
}
