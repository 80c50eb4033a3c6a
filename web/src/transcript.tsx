// The transcript: a session's stored history (tool calls joined with their
// results in both tool-call modes), then the runs of this page as they
// stream, and the live run's plan panel.
import { useEffect, useMemo, useRef } from 'preact/hooks';
import type { Strings } from './i18n';
import { visibleText, type Plan, type RunView, type ToolView } from './run';
import { Chips, type Attachment } from './attach';
import { McpApp } from './mcpapp';
import { Markdown } from './markdown';
import { Surfaces } from './a2ui';
import { SurfaceView } from './a2uiview';

/** Apps maps a tool's name and wire name to the namespaced ui:// URI of the MCP App it names (the catalog's `app`). */
export type Apps = Map<string, string>;

export interface Message {
  role: string;
  content: string;
  reasoning_content?: string;
  tool_calls?: { id: string; name: string; arguments: unknown }[];
  name?: string;
  tool_call_id?: string;
  attachments?: Attachment[];
}

/** UI is what a transcript's A2UI surfaces need: their state, and how an action is sent. */
interface UI {
  surfaces: Surfaces;
  busy: boolean;
  onAction?: (message: string) => void;
}

interface TranscriptProps {
  s: Strings;
  history: Message[];
  runs: RunView[];
  apps: Apps;
  /** busy: a run is going, so a surface's actions wait. */
  busy?: boolean;
  /** onAction sends an A2UI action as the session's next message. */
  onAction?: (message: string) => void;
}

export function Transcript({ s, history, runs, apps, busy = false, onAction }: TranscriptProps) {
  const ref = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);
  useEffect(() => {
    const el = ref.current;
    if (el && pinned.current) el.scrollTop = el.scrollHeight;
  });
  const onScroll = () => {
    const el = ref.current!;
    pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
  };
  const turns = useMemo(() => foldHistory(history), [history]);
  // One session's surfaces, from its history on; the batches are applied
  // in order (each once) before anything is drawn, so a surface drawn
  // where it was created shows the later updates too.
  const surfaces = useMemo(() => new Surfaces(), [history]);
  turns.forEach((m, i) => m.tools.forEach((t, j) => batchOf(t) !== undefined && surfaces.apply(`h:${i}:${j}`, batchOf(t))));
  for (const r of runs) for (const it of r.items) if (it.kind === 'a2ui') surfaces.apply(it.key, it.messages);
  const ui: UI = { surfaces, busy, onAction };
  return (
    <div class="transcript" ref={ref} onScroll={onScroll} role="log" aria-live="polite" aria-label={s.chat} tabIndex={0}>
      {history.length === 0 && runs.length === 0 && <p class="muted empty">{s.emptyChat}</p>}
      {turns.map((m, i) =>
        m.role === 'user' ? (
          <div class="msg user">
            {m.text}
            {m.attachments && <Chips s={s} list={m.attachments} />}
          </div>
        ) : (
          <div class="msg assistant">
            {m.reasoning && <Reasoning s={s} text={m.reasoning} />}
            {m.text && <Markdown class="text" source={m.text} shift={1} breaks />}
            {m.tools.map((t, j) => (
              <>
                <ToolCall s={s} t={t} apps={apps} settled />
                <SurfacesAt s={s} ui={ui} at={`h:${i}:${j}`} />
              </>
            ))}
          </div>
        ),
      )}
      {runs.map((r) => (
        <RunBlock s={s} r={r} apps={apps} ui={ui} />
      ))}
    </div>
  );
}

interface Turn {
  role: 'user' | 'assistant';
  text: string;
  reasoning?: string;
  tools: ToolView[];
  attachments?: Attachment[];
}

/** RESPONSE starts each line of a tool_call-mode result message. */
const RESPONSE = 'tool_response: ';

/**
 * foldHistory turns stored messages into turns: tool calls come as
 * tool_calls (function_call mode) or <tool_call> blocks in the text
 * (tool_call mode); their results as role=tool messages or as user
 * messages of "tool_response: {...}" lines, one line per call of the
 * round. Each result joins its call: by id, or in tool_call mode (no ids)
 * the first call of that name still open.
 */
export function foldHistory(history: Message[]): Turn[] {
  const out: Turn[] = [];
  const open: ToolView[] = [];
  const byId = new Map<string, ToolView>();
  for (const m of history) {
    if (m.role === 'assistant') {
      const tools: ToolView[] = (m.tool_calls || []).map((c) => ({ callId: c.id, name: c.name, args: c.arguments, output: '' }));
      for (const [, body] of m.content.matchAll(/<tool_call>([\s\S]*?)<\/tool_call>/g)) {
        try {
          // as the server reads a block (orchestrator/toolcall_text.go): a code fence around it, "parameters" for "arguments"
          const c = JSON.parse(body.trim().replace(/^```[a-zA-Z]*\s*([\s\S]*?)\s*```$/, '$1'));
          if (c?.name) tools.push({ callId: '', name: c.name, args: c.arguments ?? c.parameters, output: '' });
        } catch {
          /* shown as text */
        }
      }
      tools.forEach((t) => (t.callId ? byId.set(t.callId, t) : open.push(t)));
      out.push({ role: 'assistant', text: visibleText(m.content), reasoning: m.reasoning_content, tools });
    } else if (m.role === 'tool') {
      const t = byId.get(m.tool_call_id || '');
      if (t) t.result = m.content;
    } else if (m.role === 'user' && m.content.startsWith(RESPONSE)) {
      // one line per result: a round of several calls answers them all in one message
      for (const line of m.content.split('\n')) {
        if (!line.startsWith(RESPONSE)) continue;
        let r: { name?: string; content?: unknown; ok?: boolean };
        try {
          r = JSON.parse(line.slice(RESPONSE.length));
        } catch {
          continue; // not a result line the server wrote
        }
        const i = open.findIndex((t) => t.name === r.name);
        const t = i >= 0 ? open.splice(i, 1)[0] : undefined;
        if (t) {
          t.result = typeof r.content === 'string' ? r.content : JSON.stringify(r.content);
          t.isError = r.ok === false;
        }
      }
    } else if (m.role === 'user') {
      out.push({ role: 'user', text: m.content, tools: [], attachments: m.attachments });
    }
  }
  return out;
}

/** A2UI_NAMES are the a2ui tool's names (and alias) as history may carry them. */
const A2UI_NAMES = ['a2ui', '界面'];

/** batchOf is the A2UI messages a settled, successful a2ui call of history sent, or undefined. */
function batchOf(t: ToolView): unknown {
  if (!A2UI_NAMES.includes(t.name) || t.result === undefined || t.isError) return undefined;
  const parse = (v: unknown): unknown => {
    if (typeof v !== 'string') return v;
    try {
      return JSON.parse(v);
    } catch {
      return undefined;
    }
  };
  const args = parse(t.args) as { messages?: unknown } | undefined;
  const msgs = parse(args?.messages);
  return Array.isArray(msgs) ? msgs : msgs && typeof msgs === 'object' ? [msgs] : undefined;
}

/** SurfacesAt draws the surfaces created by the batch at. */
function SurfacesAt({ s, ui, at }: { s: Strings; ui: UI; at: string }) {
  return (
    <>
      {ui.surfaces.at(at).map((x) => (
        <SurfaceView key={x.id} s={s} surface={x} busy={ui.busy} onAction={ui.onAction} />
      ))}
    </>
  );
}

function RunBlock({ s, r, apps, ui }: { s: Strings; r: RunView; apps: Apps; ui: UI }) {
  return (
    <>
      <div class="msg user">
        {r.question}
        {r.attachments && <Chips s={s} list={r.attachments} />}
      </div>
      <div class="msg assistant" aria-busy={r.state === 'running'} data-run-id={r.runId} data-state={r.state} data-events={r.events}>
        {r.items.map((it) => {
          if (it.kind === 'text')
            return (
              <>
                {it.reasoning && <Reasoning s={s} text={it.reasoning} />}
                {visibleText(it.text) && <Markdown class="text" source={visibleText(it.text)} shift={1} breaks />}
              </>
            );
          if (it.kind === 'tool') return <ToolCall s={s} t={it.tool} apps={apps} />;
          if (it.kind === 'a2ui') return <SurfacesAt s={s} ui={ui} at={it.key} />;
          return <div class={'note' + (it.error ? ' error' : '')}>{it.text}</div>;
        })}
        {(r.state === 'running' || r.state.startsWith('waiting_')) && (
          <div class="busy" role="status" data-busy={r.state}>
            <span class="dots" aria-hidden="true">
              <span />
              <span />
              <span />
            </span>
            {r.state === 'waiting_approval' ? s.waitingApproval : r.state === 'waiting_input' ? s.waitingInput : s.working}
          </div>
        )}
        <div class="meta">
          {r.usage && (
            <span class="usage">
              {s.usage}: {r.usage.input_tokens} → {r.usage.output_tokens} ({r.usage.total_tokens})
            </span>
          )}
          {r.state !== 'running' && !r.state.startsWith('waiting_') && (
            <span class={'badge ' + r.state}>
              {r.state}
              {r.stopReason && r.stopReason !== 'model_response' ? ` · ${r.stopReason}` : ''}
            </span>
          )}
        </div>
      </div>
    </>
  );
}

/** PlanPanel shows the live run's todo steps (its last `plan` event, docs/http.md#plans). */
export function PlanPanel({ s, plan }: { s: Strings; plan: Plan }) {
  const done = plan.steps.filter((x) => x.status === 'completed').length;
  return (
    <details class="plan" open aria-label={s.plan}>
      <summary>
        {s.plan} <span class="muted">({done}/{plan.steps.length})</span>
      </summary>
      <ol>
        {plan.steps.map((x) => (
          <li class={'step ' + x.status} data-status={x.status}>
            <span class="step-mark" aria-hidden="true">
              {x.status === 'completed' ? '✓' : x.status === 'running' ? '◐' : x.status === 'failed' ? '✗' : x.status === 'skipped' ? '–' : '○'}
            </span>
            <span>{x.title}</span> <span class="muted step-state">{(s as unknown as Record<string, string>)['step_' + x.status] || x.status}</span>
          </li>
        ))}
      </ol>
      {plan.strategy && <p class="muted">{s.strategy}: {plan.strategy}</p>}
      {plan.note && <p class="muted">{plan.note}</p>}
    </details>
  );
}

function Reasoning({ s, text }: { s: Strings; text: string }) {
  return (
    <details class="reasoning">
      <summary>{s.reasoning}</summary>
      <pre>{text}</pre>
    </details>
  );
}

function pretty(v: unknown): string {
  if (v === undefined) return '';
  if (typeof v === 'string') {
    try {
      return JSON.stringify(JSON.parse(v), null, 2);
    } catch {
      return v;
    }
  }
  return JSON.stringify(v, null, 2);
}

/** ToolCall is a call's card; settled: it is history, so a call without a result got none (its run ended first). */
function ToolCall({ s, t, apps, settled }: { s: Strings; t: ToolView; apps: Apps; settled?: boolean }) {
  const done = t.result !== undefined;
  const app = apps.get(t.name);
  const card = (
    <details class={'tool' + (t.isError ? ' failed' : '')} data-tool={t.name}>
      <summary>
        <span class="tool-name">{t.name}</span>
        <span class="muted">{done ? (t.durationMs !== undefined ? ` ${t.durationMs} ${s.ms}` : '') : ' ' + (settled ? s.noResult : s.running)}</span>
        {t.isError && <span class="badge failed">{s.error}</span>}
      </summary>
      <h3>{s.arguments}</h3>
      <pre>{pretty(t.args)}</pre>
      {t.output && <pre class="output">{t.output}</pre>}
      {done && (
        <>
          <h3>{s.result}</h3>
          <pre>{t.result}</pre>
        </>
      )}
    </details>
  );
  if (!app) return card;
  return (
    <div class="tool-with-app">
      {card}
      <McpApp s={s} uri={app} t={t} />
    </div>
  );
}
