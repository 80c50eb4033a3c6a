// RunView folds a run's events (docs/http.md#events) into what the chat
// shows. apply mutates in place and is O(1) per event, so a long run
// renders by batching: the page redraws at most once a frame.
import type { RunEvent } from './api';
import type { Attachment } from './attach';

export interface ToolView {
  callId: string;
  name: string;
  args: unknown;
  output: string;
  result?: string;
  isError?: boolean;
  durationMs?: number;
}

export type Item =
  | { kind: 'text'; round: number; text: string; reasoning: string }
  | { kind: 'tool'; tool: ToolView }
  | { kind: 'note'; text: string; error?: boolean }
  /** a2ui is a batch of A2UI messages the run sent (the a2ui tool); key names it in the transcript's surfaces. */
  | { kind: 'a2ui'; key: string; messages: unknown };

export interface Approval {
  approval_id: string;
  kind: string;
  tool: string;
  arguments: unknown;
  reason: string;
  decisions: string[];
  missing?: unknown;
}

export interface Question {
  question_id: string;
  question: string;
  options?: string[];
  multi?: boolean;
  free_text?: boolean;
}

export interface PlanStep {
  title: string;
  status: string; // pending, running, completed, failed, skipped
}

export interface Plan {
  steps: PlanStep[];
  strategy?: string;
  note?: string;
}

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

export interface RunView {
  runId: string;
  sessionId: string;
  question: string;
  attachments?: Attachment[];
  items: Item[];
  lastSeq: number;
  events: number;
  usage?: Usage;
  state: string; // running, waiting_approval, waiting_input, finished, cancelled, failed
  stopReason?: string;
  answer?: string;
  pending: Approval[];
  questions: Question[];
  plan?: Plan;
}

export function newRun(question: string, attachments?: Attachment[]): RunView {
  return { runId: '', sessionId: '', question, attachments, items: [], lastSeq: 0, events: 0, state: 'running', pending: [], questions: [] };
}

function textItem(v: RunView, round: number) {
  const last = v.items[v.items.length - 1];
  if (last && last.kind === 'text' && last.round === round) return last;
  const it = { kind: 'text' as const, round, text: '', reasoning: '' };
  v.items.push(it);
  return it;
}

function tool(v: RunView, callId: string, name: string): ToolView {
  for (let i = v.items.length - 1; i >= 0; i--) {
    const it = v.items[i];
    if (it.kind === 'tool' && it.tool.callId === callId) return it.tool;
  }
  const t: ToolView = { callId, name, args: undefined, output: '' };
  v.items.push({ kind: 'tool', tool: t });
  return t;
}

/** apply folds one event into v. */
export function apply(v: RunView, ev: RunEvent) {
  v.lastSeq = ev.seq;
  v.events++;
  v.runId ||= ev.run_id;
  v.sessionId ||= ev.session_id;
  const d = ev.data || {};
  switch (ev.type) {
    case 'llm_output_delta': {
      const it = textItem(v, d.round ?? 0);
      if (d.delta) it.text += d.delta;
      if (d.reasoning_delta) it.reasoning += d.reasoning_delta;
      break;
    }
    case 'llm_stream_retry': {
      const it = textItem(v, d.round ?? 0);
      it.text = '';
      it.reasoning = '';
      break;
    }
    case 'llm_output': {
      const it = textItem(v, d.round ?? 0);
      it.text = d.content ?? it.text;
      it.reasoning = d.reasoning_content ?? it.reasoning;
      break;
    }
    case 'tool_call': {
      const t = tool(v, d.call_id, d.name);
      t.args = d.arguments;
      break;
    }
    case 'tool_output_delta':
      tool(v, d.call_id, d.name).output += d.delta ?? '';
      break;
    case 'tool_result': {
      const t = tool(v, d.call_id, d.name);
      t.result = typeof d.content === 'string' ? d.content : JSON.stringify(d.content);
      t.isError = !!d.is_error;
      t.durationMs = d.duration_ms;
      break;
    }
    case 'a2ui':
      v.items.push({ kind: 'a2ui', key: `${ev.run_id}:${ev.seq}`, messages: d.messages });
      break;
    case 'plan':
      v.plan = { steps: d.steps || [], strategy: d.strategy, note: d.note };
      break;
    case 'token_usage':
      v.usage = d.total ?? d.usage;
      break;
    case 'approval_required':
      v.state = 'waiting_approval';
      v.pending = [...v.pending.filter((a) => a.approval_id !== d.approval_id), d as Approval];
      break;
    case 'approval_decided':
      v.pending = v.pending.filter((a) => a.approval_id !== d.approval_id);
      if (!v.pending.length) v.state = 'running';
      v.items.push({ kind: 'note', text: `${d.tool}: ${d.state}${d.reason ? ' — ' + d.reason : ''} (${d.decided_by})` });
      break;
    case 'user_input_required':
      v.state = 'waiting_input';
      v.questions = [...v.questions.filter((q) => q.question_id !== d.question_id), d as Question];
      break;
    case 'user_input_answered':
      v.questions = v.questions.filter((q) => q.question_id !== d.question_id);
      if (!v.questions.length && !v.pending.length) v.state = 'running';
      v.items.push({ kind: 'note', text: d.declined ? 'question declined' : `answered: ${Array.isArray(d.answer) ? d.answer.join(', ') : d.answer}` });
      break;
    case 'compaction':
      v.items.push({ kind: 'note', text: `compaction: ${d.messages} messages, ${d.tokens_before} → ${d.tokens_after} tokens`, error: !!d.error });
      break;
    case 'knowledge_request':
      v.items.push({ kind: 'note', text: `knowledge: ${d.base ?? ''} ${d.query ?? ''}`.trim() });
      break;
    case 'a2a_request':
    case 'a2a_status':
    case 'a2a_result':
      v.items.push({ kind: 'note', text: `${ev.type}: ${d.service ?? d.name ?? ''} ${d.state ?? ''}`.trim() });
      break;
    case 'error':
      v.items.push({ kind: 'note', text: `${d.code}: ${d.message}`, error: true });
      break;
    case 'final':
      v.state = d.state || 'finished';
      v.stopReason = d.stop_reason;
      v.answer = d.answer;
      if (d.usage) v.usage = d.usage;
      v.pending = [];
      v.questions = [];
      break;
  }
}

/** visibleText hides tool_call-mode markup (<tool_call>…</tool_call>) in the model's text. */
export function visibleText(s: string): string {
  if (!s.includes('<tool_call>')) return s;
  return s
    .replace(/<tool_call>[\s\S]*?<\/tool_call>/g, '')
    .replace(/<tool_call>[\s\S]*$/, '')
    .trim();
}
