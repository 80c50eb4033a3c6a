// Models: GET|POST /wunder/admin/llm as a form. The list of llm.models
// (the default marked), a form per model — name, provider, base URL,
// model id, API key (never shown: a stored key is "********" in the GET
// and is sent back as such to keep it), context window and the usual
// knobs — saved as the whole section with its revision, and "Test
// connection": POST /wunder/admin/llm/test with the form's settings (not
// saved yet) makes one real chat call and shows the reply and latency or
// the adapter's error. Keys the form does not show (retry, fallbacks, …)
// go back as they were read. The section as JSON stays under "Advanced".
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import type { Strings } from '../i18n';
import { ProblemView, SectionEditor, toProblem, useSection, type Problem } from './config';
import { AdminTable } from './table';

/** Mask is what the server shows for a stored secret (config.Mask). */
const MASK = '********';
const PROVIDERS = ['openai', 'local', 'deepseek', 'qwen', 'scripted'];

interface Entry {
  enabled?: boolean;
  provider?: string;
  base_url?: string;
  api_key?: string;
  model?: string;
  script?: string;
  temperature?: number | null;
  timeout_s?: number;
  max_rounds?: number;
  max_context?: number;
  max_output?: number;
  tool_call_mode?: string;
  stream?: boolean;
  support_vision?: boolean;
  [k: string]: unknown;
}
interface LLM {
  llm: { default: string; models: Record<string, Entry>; [k: string]: unknown };
}
interface TestResult {
  ok: boolean;
  reply?: string;
  latency_ms: number;
  error?: string;
  kind?: string;
}

/** Form is what the inputs hold: text for numbers, so an empty field means "default". */
interface Form {
  name: string;
  enabled: boolean;
  provider: string;
  base_url: string;
  model: string;
  script: string;
  /** a new key typed in; "" keeps the stored one */
  apiKey: string;
  clearKey: boolean;
  temperature: string;
  timeout_s: string;
  max_rounds: string;
  max_context: string;
  max_output: string;
  tool_call_mode: string;
  stream: boolean;
  support_vision: boolean;
  isDefault: boolean;
}

const num = (v: number | null | undefined) => (v === undefined || v === null || v === 0 ? '' : String(v));

function toForm(name: string, e: Entry, isDefault: boolean): Form {
  return {
    name,
    enabled: e.enabled ?? true,
    provider: e.provider || 'openai',
    base_url: e.base_url || '',
    model: e.model || '',
    script: e.script || '',
    apiKey: '',
    clearKey: false,
    temperature: e.temperature === null || e.temperature === undefined ? '' : String(e.temperature),
    timeout_s: num(e.timeout_s),
    max_rounds: num(e.max_rounds),
    max_context: num(e.max_context),
    max_output: num(e.max_output),
    tool_call_mode: e.tool_call_mode || 'tool_call',
    stream: e.stream ?? true,
    support_vision: e.support_vision ?? false,
    isDefault,
  };
}

/**
 * toEntry is the llm.models entry of f: the stored entry (the keys the
 * form does not show) with the form's fields over it. An empty number
 * field is left out, so it takes its default; the key is the new one
 * typed, "" to clear it, else the stored mask (kept by the server).
 */
function toEntry(f: Form, stored: Entry, s: Strings): Entry {
  const e: Entry = { ...stored };
  e.enabled = f.enabled;
  e.provider = f.provider;
  e.base_url = f.base_url.trim();
  e.model = f.model.trim();
  e.tool_call_mode = f.tool_call_mode;
  e.stream = f.stream;
  e.support_vision = f.support_vision;
  if (f.provider === 'scripted') e.script = f.script.trim();
  else delete e.script;
  const setNum = (k: 'timeout_s' | 'max_rounds' | 'max_context' | 'max_output', v: string, label: string) => {
    const t = v.trim();
    if (t === '') {
      delete e[k];
      return;
    }
    const n = Number(t);
    if (!Number.isInteger(n) || n < 0) throw new Error(label + ': ' + s.notANumber);
    e[k] = n;
  };
  setNum('timeout_s', f.timeout_s, s.timeoutS);
  setNum('max_rounds', f.max_rounds, s.maxRounds);
  setNum('max_context', f.max_context, s.contextWindow);
  setNum('max_output', f.max_output, s.maxOutput);
  if (f.temperature.trim() === '') e.temperature = null;
  else {
    const t = Number(f.temperature);
    if (!Number.isFinite(t)) throw new Error(s.temperature + ': ' + s.notANumber);
    e.temperature = t;
  }
  if (f.apiKey !== '') e.api_key = f.apiKey;
  else if (f.clearKey) e.api_key = '';
  else if (stored.api_key) e.api_key = stored.api_key;
  else delete e.api_key;
  return e;
}

export function Models({ s }: { s: Strings }) {
  const sec = useSection<LLM>('/wunder/admin/llm', s);
  const [text, setText] = useState('');
  // the model the form edits: its stored name, "" for a new one, null for none
  const [editing, setEditing] = useState<string | null>(null);
  const [form, setForm] = useState<Form | null>(null);
  const [formProblem, setFormProblem] = useState<Problem | null>(null);
  const [testing, setTesting] = useState(false);
  const [result, setResult] = useState<TestResult | null>(null);
  useEffect(() => {
    if (sec.data) setText(JSON.stringify({ default: sec.data.llm.default, models: sec.data.llm.models }, null, 2));
  }, [sec.data]);
  const llm = sec.data?.llm;
  const models = Object.entries(llm?.models || {}).sort(([a], [b]) => a.localeCompare(b));

  const open = (name: string | null) => {
    setEditing(name);
    setResult(null);
    setFormProblem(null);
    if (name === null) setForm(null);
    else setForm(toForm(name, llm?.models[name] || {}, name !== '' && name === llm?.default));
  };
  const set = <K extends keyof Form>(k: K, v: Form[K]) => form && setForm({ ...form, [k]: v });

  const entry = (): Entry | null => {
    if (!form || editing === null) return null;
    try {
      return toEntry(form, llm?.models[editing] || {}, s);
    } catch (x) {
      setFormProblem({ text: (x as Error).message, errors: [] });
      return null;
    }
  };
  const saveForm = async (e: Event) => {
    e.preventDefault();
    setFormProblem(null);
    const ent = entry();
    if (!ent || !form || !llm) return;
    const name = form.name.trim();
    const next: Record<string, Entry> = { ...llm.models };
    if (editing) delete next[editing];
    next[name] = ent;
    let def = llm.default;
    if (form.isDefault) def = name;
    else if (def === editing) def = '';
    if (await sec.save({ llm: { ...llm, default: def, models: next } })) open(name);
  };
  const remove = async (name: string) => {
    if (!llm || !confirm(s.confirmDelete + ' ' + name + '?')) return;
    const next = { ...llm.models };
    delete next[name];
    if (await sec.save({ llm: { ...llm, default: llm.default === name ? '' : llm.default, models: next } })) open(null);
  };
  const test = async () => {
    setFormProblem(null);
    setResult(null);
    const ent = entry();
    if (!ent || !form) return;
    // an unchanged key is left out: the server takes the stored one
    const settings: Entry = { ...ent };
    if (settings.api_key === MASK) delete settings.api_key;
    setTesting(true);
    try {
      setResult(await api<TestResult>('POST', '/wunder/admin/llm/test', { model_name: editing || form.name.trim(), model: settings }));
    } catch (x) {
      setFormProblem(toProblem(x, s));
    } finally {
      setTesting(false);
    }
  };
  const probe = async () => {
    if (!editing) return;
    setFormProblem(null);
    try {
      const r = await api<{ max_context: number; source: string; detail?: string }>('POST', '/wunder/admin/llm/context_window', { model_name: editing });
      if (r.max_context > 0) set('max_context', String(r.max_context));
      else setFormProblem({ text: s.contextUnknown + (r.detail ? ': ' + r.detail : ''), errors: [] });
    } catch (x) {
      setFormProblem(toProblem(x, s));
    }
  };
  const saveJSON = () => {
    let next: unknown;
    try {
      next = JSON.parse(text);
    } catch (e) {
      sec.setProblem({ text: s.invalidJSON + ': ' + (e as Error).message, errors: [] });
      return;
    }
    sec.save({ llm: next } as Partial<LLM>);
  };

  const stored = editing ? llm?.models[editing] : undefined;
  const keyStored = !!stored?.api_key;
  const input = (k: 'base_url' | 'model' | 'script' | 'temperature' | 'timeout_s' | 'max_rounds' | 'max_context' | 'max_output', label: string, extra: Record<string, unknown> = {}) => (
    <label>
      {label}
      <input name={'model-' + k} value={form![k]} onInput={(e) => set(k, (e.target as HTMLInputElement).value)} {...extra} />
    </label>
  );
  return (
    <section aria-labelledby="models-h">
      <h2 id="models-h">{s.models}</h2>
      <AdminTable s={s} heads={[s.name, s.provider, s.model, 'URL', s.contextWindow]} empty={models.length === 0}>
        {models.map(([name, m]) => (
          <tr data-model={name}>
            <td>
              {name}
              {name === llm?.default && <span class="badge"> {s.defaultModel}</span>}
              {m.enabled === false && <span class="badge"> {s.disabled}</span>}
            </td>
            <td>{m.provider}</td>
            <td>{m.model}</td>
            <td class="q">{m.base_url}</td>
            <td>{m.max_context || '—'}</td>
            <td class="nowrap">
              <button type="button" class="small" aria-label={s.editEntry + ' ' + name} onClick={() => open(name)}>
                {s.editEntry}
              </button>{' '}
              <button type="button" class="small danger" aria-label={s.remove + ' ' + name} onClick={() => remove(name)}>
                {s.remove}
              </button>
            </td>
          </tr>
        ))}
      </AdminTable>
      <ProblemView p={editing === null ? sec.problem : null} />
      <div class="actions">
        <button type="button" onClick={() => open('')}>
          {s.addModel}
        </button>
      </div>
      {form && (
        <form class="add-form model-form" aria-labelledby="model-form-h" onSubmit={saveForm}>
          <h3 id="model-form-h">{editing ? s.editEntry + ': ' + editing : s.addModel}</h3>
          <label>
            {s.name}
            <input name="model-name" required pattern="[^\s]+" value={form.name} onInput={(e) => set('name', (e.target as HTMLInputElement).value)} />
          </label>
          <label class="check">
            <input type="checkbox" name="model-enabled" checked={form.enabled} onChange={() => set('enabled', !form.enabled)} />
            <span>{s.enabledModel}</span>
          </label>
          <label class="check">
            <input type="checkbox" name="model-default" checked={form.isDefault} onChange={() => set('isDefault', !form.isDefault)} />
            <span>{s.makeDefault}</span>
          </label>
          <label>
            {s.provider}
            <select name="model-provider" value={form.provider} onChange={(e) => set('provider', (e.target as HTMLSelectElement).value)}>
              {PROVIDERS.map((p) => (
                <option value={p}>{p}</option>
              ))}
            </select>
          </label>
          {form.provider === 'scripted' ? (
            input('script', s.scriptFile)
          ) : (
            <>
              {input('base_url', s.baseURL, { type: 'url', placeholder: form.provider === 'local' ? 'http://127.0.0.1:8080/v1' : s.providerDefault })}
              {input('model', s.modelId, { required: true })}
              <label>
                {s.apiKey}
                <input
                  name="model-api-key"
                  type="password"
                  autocomplete="new-password"
                  value={form.apiKey}
                  placeholder={keyStored && !form.clearKey ? s.apiKeyKept : s.apiKeyNone}
                  onInput={(e) => set('apiKey', (e.target as HTMLInputElement).value)}
                />
              </label>
              {keyStored && (
                <label class="check">
                  <input type="checkbox" name="model-clear-key" checked={form.clearKey} onChange={() => set('clearKey', !form.clearKey)} />
                  <span>{s.clearKey}</span>
                </label>
              )}
            </>
          )}
          <div class="field-grid">
            <div class="field-row">
              {input('max_context', s.contextWindow, { inputMode: 'numeric' })}
              {editing && form.provider !== 'scripted' && (
                <button type="button" class="small" onClick={probe}>
                  {s.probeContext}
                </button>
              )}
            </div>
            {input('max_output', s.maxOutput, { inputMode: 'numeric' })}
            {input('temperature', s.temperature, { inputMode: 'decimal' })}
            {input('timeout_s', s.timeoutS, { inputMode: 'numeric' })}
            {input('max_rounds', s.maxRounds, { inputMode: 'numeric' })}
            <label>
              {s.toolCallMode}
              <select name="model-tool-call-mode" value={form.tool_call_mode} onChange={(e) => set('tool_call_mode', (e.target as HTMLSelectElement).value)}>
                <option value="tool_call">tool_call</option>
                <option value="function_call">function_call</option>
              </select>
            </label>
          </div>
          <label class="check">
            <input type="checkbox" name="model-stream" checked={form.stream} onChange={() => set('stream', !form.stream)} />
            <span>{s.streamAnswers}</span>
          </label>
          <label class="check">
            <input type="checkbox" name="model-vision" checked={form.support_vision} onChange={() => set('support_vision', !form.support_vision)} />
            <span>{s.takesImages}</span>
          </label>
          <ProblemView p={formProblem || sec.problem} />
          {sec.saved && (
            <p class="status" role="status">
              {s.saved}
            </p>
          )}
          {result && <TestView s={s} r={result} />}
          <div class="actions">
            <button type="submit" class="primary">
              {s.save}
            </button>
            <button type="button" class="test-connection" disabled={testing} onClick={test}>
              {testing ? s.testing : s.testConnection}
            </button>
            <button type="button" onClick={() => open(null)}>
              {s.cancel}
            </button>
          </div>
        </form>
      )}
      <details class="advanced">
        <summary>{s.advancedJSON}</summary>
        <SectionEditor s={s} section="llm" sec={sec} text={text} setText={setText} onSave={saveJSON} rows={14} name="llm-json" />
      </details>
    </section>
  );
}

function TestView({ s, r }: { s: Strings; r: TestResult }) {
  if (r.ok)
    return (
      <div class="model-test" data-ok="true" role="status">
        <p>
          <span class="badge finished">{s.testOK}</span> {s.testLatency.replace('{ms}', String(r.latency_ms))}
        </p>
        {r.reply && (
          <p>
            {s.reply}: <q class="model-reply">{r.reply}</q>
          </p>
        )}
      </div>
    );
  return (
    <div class="model-test error" data-ok="false" data-kind={r.kind} role="alert">
      <p>
        <span class="badge failed">{s.testFailed}</span> {r.kind && (s.testKinds as Record<string, string>)[r.kind]}
      </p>
      <pre class="model-error">{r.error}</pre>
    </div>
  );
}
