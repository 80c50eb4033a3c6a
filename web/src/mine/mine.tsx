// "My tools" (#/mine): what any user configures for themselves, over the
// user routes only (never an admin route), so a plain user's token does
// all of it: their MCP servers, skills, knowledge bases, what they share,
// their extra prompt and their memory (docs/console.md). Loaded on
// demand, like the admin page, whose skills, knowledge and memory views
// it reuses in their user mode.
import { lang, strings } from '../i18n';
import { useSignal } from '../state';
import { Tabs, useTab } from '../tabs';
import { Skills } from '../admin/skills';
import { Knowledge } from '../admin/knowledge';
import { MemoryRecords, userMemoryRoutes } from '../admin/memory';
import { MyMCP } from './mcp';
import { Sharing } from './sharing';
import { ExtraPrompt } from './prompt';

const TABS = ['mcp', 'skills', 'knowledge', 'sharing', 'prompt', 'memory'] as const;
type Tab = (typeof TABS)[number];

export function Mine() {
  const s = strings(useSignal(lang));
  const [tab, pick] = useTab<Tab>('wunder.mineTab', TABS);
  const label: Record<Tab, string> = {
    mcp: s.mcpServers,
    skills: s.skills,
    knowledge: s.knowledge,
    sharing: s.sharing,
    prompt: s.extraPrompt,
    memory: s.memory,
  };
  return (
    <div class="admin mine">
      <h1>{s.myTools}</h1>
      <Tabs tabs={TABS} tab={tab} pick={pick} label={label} name={s.myTools} panel="mine-panel" prefix="mytab-">
        {tab === 'mcp' && <MyMCP s={s} />}
        {tab === 'skills' && <Skills s={s} user />}
        {tab === 'knowledge' && <Knowledge s={s} user />}
        {tab === 'sharing' && <Sharing s={s} />}
        {tab === 'prompt' && <ExtraPrompt s={s} />}
        {tab === 'memory' && (
          <section aria-labelledby="my-memory-h">
            <h2 id="my-memory-h">{s.memory}</h2>
            <p class="muted">{s.memoryHint}</p>
            <MemoryRecords s={s} routes={userMemoryRoutes()} />
          </section>
        )}
      </Tabs>
    </div>
  );
}
