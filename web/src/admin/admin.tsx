// The admin page (admins; loaded on demand so the first load stays small):
// models, MCP servers, A2A services, language servers, skills, knowledge
// bases, users and tokens, memory, each a tab over its admin API
// (docs/admin.md, docs/http.md, docs/lsp.md, docs/tools.md, docs/memory.md).
import { useState } from 'preact/hooks';
import { lang, strings } from '../i18n';
import { useSignal } from '../state';
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
  const saved = sessionStorage.getItem('wunder.adminTab') as Tab;
  const [tab, setTab] = useState<Tab>(TABS.includes(saved) ? saved : 'models');
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
  const pick = (t: Tab) => {
    sessionStorage.setItem('wunder.adminTab', t);
    setTab(t);
  };
  return (
    <div class="admin">
      <h1>{s.admin}</h1>
      <div class="tabs" role="tablist" aria-label={s.admin}>
        {TABS.map((t) => (
          <button
            type="button"
            role="tab"
            id={'tab-' + t}
            aria-selected={t === tab}
            aria-controls="admin-panel"
            tabIndex={t === tab ? 0 : -1}
            onClick={() => pick(t)}
            onKeyDown={(e) => {
              // the tabs pattern: arrows move between tabs, Home and End to the ends
              const i = TABS.indexOf(t);
              const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: TABS.length - 1 }[e.key];
              if (to === undefined) return;
              e.preventDefault();
              const next = TABS[(to + TABS.length) % TABS.length];
              pick(next);
              document.getElementById('tab-' + next)?.focus();
            }}
          >
            {label[t]}
          </button>
        ))}
      </div>
      <div id="admin-panel" role="tabpanel" aria-labelledby={'tab-' + tab}>
        {tab === 'models' && <Models s={s} />}
        {tab === 'mcp' && <MCP s={s} />}
        {tab === 'a2a' && <A2A s={s} />}
        {tab === 'lsp' && <LSP s={s} />}
        {tab === 'skills' && <Skills s={s} />}
        {tab === 'knowledge' && <Knowledge s={s} />}
        {tab === 'users' && <Users s={s} />}
        {tab === 'memory' && <Memory s={s} />}
      </div>
    </div>
  );
}
