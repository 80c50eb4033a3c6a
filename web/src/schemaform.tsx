// A form built from a tool's JSON Schema, for the approval dialog's
// edited arguments: an object whose properties are all simple (string,
// number, integer, boolean, or an enum of those) becomes form controls;
// any other schema returns null and the dialog keeps its JSON textarea.
import { useState } from 'preact/hooks';
import type { Strings } from './i18n';

interface Prop {
  type?: string | string[];
  enum?: unknown[];
  description?: string;
  title?: string;
}
export interface ObjectSchema {
  type?: string;
  properties?: Record<string, Prop>;
  required?: string[];
}

function simpleType(p: Prop): string | null {
  const t = Array.isArray(p.type) ? p.type.filter((x) => x !== 'null') : [p.type];
  if (t.length !== 1) return null;
  if (p.enum) return p.enum.every((v) => ['string', 'number', 'boolean'].includes(typeof v)) ? 'enum' : null;
  return ['string', 'number', 'integer', 'boolean'].includes(t[0] as string) ? (t[0] as string) : null;
}

/** formable says whether schema can be shown as a form. */
export function formable(schema: unknown): schema is ObjectSchema {
  const sc = schema as ObjectSchema | undefined;
  if (!sc || typeof sc !== 'object' || (sc.type && sc.type !== 'object') || !sc.properties) return false;
  const props = Object.values(sc.properties);
  return props.length > 0 && props.every((p) => p && typeof p === 'object' && simpleType(p) !== null);
}

/** fromForm turns the form's values into arguments; it throws a message for a bad number. */
export function fromForm(schema: ObjectSchema, base: Record<string, unknown>, vals: Record<string, string | boolean>, s: Strings): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, p] of Object.entries(schema.properties!)) {
    const v = vals[k];
    const t = simpleType(p)!;
    if (t === 'boolean') {
      out[k] = !!v;
      continue;
    }
    if (v === '' || v === undefined) {
      delete out[k];
      continue;
    }
    if (t === 'number' || t === 'integer') {
      const n = Number(v);
      if (!Number.isFinite(n) || (t === 'integer' && !Number.isInteger(n))) throw new Error(`${k}: ${s.notANumber}`);
      out[k] = n;
    } else if (t === 'enum') {
      out[k] = p.enum!.find((e) => String(e) === v) ?? v;
    } else out[k] = v;
  }
  return out;
}

/** toForm reads the arguments into the form's values. */
export function toForm(schema: ObjectSchema, args: Record<string, unknown>): Record<string, string | boolean> {
  const vals: Record<string, string | boolean> = {};
  for (const [k, p] of Object.entries(schema.properties!)) {
    const v = args[k];
    vals[k] = simpleType(p) === 'boolean' ? !!v : v === undefined || v === null ? '' : String(v);
  }
  return vals;
}

export function SchemaForm({ schema, vals, onChange }: { schema: ObjectSchema; vals: Record<string, string | boolean>; onChange: (k: string, v: string | boolean) => void }) {
  const req = new Set(schema.required || []);
  // long or multi-line strings get a textarea, decided once so typing never swaps the control
  const [long] = useState(() => new Set(Object.keys(vals).filter((k) => typeof vals[k] === 'string' && ((vals[k] as string).length > 60 || (vals[k] as string).includes('\n')))));
  return (
    <div class="schema-form">
      {Object.entries(schema.properties!).map(([k, p]) => {
        const t = simpleType(p);
        const label = (
          <span>
            {p.title || k}
            {req.has(k) && <span aria-hidden="true"> *</span>}
            {p.description && <span class="muted hint"> — {p.description}</span>}
          </span>
        );
        if (t === 'boolean')
          return (
            <label class="check">
              <input type="checkbox" name={k} checked={!!vals[k]} onChange={(e) => onChange(k, (e.target as HTMLInputElement).checked)} />
              {label}
            </label>
          );
        if (t === 'enum')
          return (
            <label>
              {label}
              <select name={k} required={req.has(k)} value={String(vals[k])} onChange={(e) => onChange(k, (e.target as HTMLSelectElement).value)}>
                {!req.has(k) && <option value="" />}
                {p.enum!.map((v) => (
                  <option value={String(v)}>{String(v)}</option>
                ))}
              </select>
            </label>
          );
        return (
          <label>
            {label}
            {t === 'string' && long.has(k) ? (
              <textarea name={k} rows={4} required={req.has(k)} value={String(vals[k])} onInput={(e) => onChange(k, (e.target as HTMLTextAreaElement).value)} />
            ) : (
              <input
                name={k}
                type={(t === 'string' ? 'text' : 'number') as 'text'}
                step={t === 'integer' ? 1 : 'any'}
                required={req.has(k)}
                value={String(vals[k])}
                onInput={(e) => onChange(k, (e.target as HTMLInputElement).value)}
              />
            )}
          </label>
        );
      })}
    </div>
  );
}
