// A2UI v0.9 surfaces (docs/console.md#a2ui-surfaces): the state the chat
// keeps of the surfaces a session's runs sent with the a2ui tool (the
// `a2ui` events live, the tool's arguments in stored history), and the
// basic catalog's functions. The server checked every batch
// (internal/a2ui); this side still treats each message on its own and
// skips what it cannot apply, as the protocol asks of a renderer.
//
// Rendering is in a2uiview.tsx; nothing here touches the DOM.

/** ACTION_PREFIX starts the message a surface's action sends (internal/a2ui.ActionPrefix). */
export const ACTION_PREFIX = '[a2ui action] ';

/** Comp is a component as the server sent it: id, component, and its properties. */
export type Comp = { id: string; component: string; [prop: string]: unknown };

export interface Surface {
  id: string;
  /** origin is the key of the batch that created the surface: it is shown there. */
  origin: string;
  comps: Map<string, Comp>;
  data: unknown;
  deleted: boolean;
  /** rev changes whenever the surface changes, so views redraw. */
  rev: number;
}

/** Surfaces are one transcript's A2UI surfaces, built by applying its batches in order. */
export class Surfaces {
  readonly byId = new Map<string, Surface>();
  private applied = new Set<string>();

  /** apply applies a batch once: key names it (a run's event, a history call). */
  apply(key: string, messages: unknown) {
    if (this.applied.has(key) || !Array.isArray(messages)) return;
    this.applied.add(key);
    for (const m of messages) {
      try {
        this.one(key, m as Record<string, any>);
      } catch {
        /* a message that cannot be applied is skipped; the others still are */
      }
    }
  }

  private one(key: string, m: Record<string, any>) {
    if (m.createSurface) {
      const id = String(m.createSurface.surfaceId);
      // a surface created again (after deleteSurface, or by a new ask) starts over where it was created last
      this.byId.set(id, { id, origin: key, comps: new Map(), data: {}, deleted: false, rev: 0 });
      return;
    }
    const body = m.updateComponents ?? m.updateDataModel ?? m.deleteSurface;
    if (!body) return;
    const id = String(body.surfaceId);
    let s = this.byId.get(id);
    if (!s) {
      // an update of a surface created before this page knew of it: shown where it first appears
      s = { id, origin: key, comps: new Map(), data: {}, deleted: false, rev: 0 };
      this.byId.set(id, s);
    }
    s.rev++;
    if (m.deleteSurface) {
      s.deleted = true;
    } else if (m.updateComponents) {
      for (const c of body.components ?? []) if (c && typeof c.id === 'string') s.comps.set(c.id, c as Comp);
    } else {
      s.data = setPointer(s.data, body.path ?? '/', body.value, 'value' in body);
    }
  }

  /** at lists the live surfaces shown at batch key. */
  at(key: string): Surface[] {
    return [...this.byId.values()].filter((s) => s.origin === key && !s.deleted);
  }
}

/** tokens splits a JSON Pointer (RFC 6901) into its reference tokens. */
function tokens(p: string): string[] {
  const t = p.replace(/^\//, '');
  return t === '' ? [] : t.split('/').map((x) => x.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** getPointer reads the value at p, or undefined. */
export function getPointer(doc: unknown, p: string): unknown {
  let cur: any = doc;
  for (const t of tokens(p)) {
    if (cur === null || typeof cur !== 'object') return undefined;
    if (Array.isArray(cur)) {
      if (!/^\d+$/.test(t)) return undefined;
      cur = cur[Number(t)];
    } else {
      if (!Object.prototype.hasOwnProperty.call(cur, t)) return undefined;
      cur = cur[t];
    }
  }
  return cur;
}

/** setPointer returns doc with the value at p replaced (has) or removed, creating objects on the way. */
export function setPointer(doc: unknown, p: string, value: unknown, has = true): unknown {
  const ts = tokens(p);
  if (!ts.length) return has ? value : {};
  const set = (cur: any, i: number): any => {
    const t = ts[i];
    if (t === '__proto__' || t === 'constructor' || t === 'prototype') return cur; // never touch a prototype
    const last = i === ts.length - 1;
    if (Array.isArray(cur) && /^\d+$/.test(t)) {
      const out = cur.slice();
      const n = Number(t);
      if (last && !has) out.splice(n, 1);
      else out[n] = last ? value : set(out[n], i + 1);
      return out;
    }
    const obj = cur !== null && typeof cur === 'object' && !Array.isArray(cur) ? { ...cur } : {};
    if (last && !has) delete obj[t];
    else obj[t] = last ? value : set(obj[t], i + 1);
    return obj;
  };
  return set(doc, 0);
}

/** resolvePath makes a binding's path absolute: a relative one is inside scope (a template's item). */
export function resolvePath(p: string, scope: string): string {
  return p.startsWith('/') ? p : `${scope}/${p}`;
}

/** Ctx is what evaluating a dynamic value reads. */
export interface Ctx {
  data: unknown;
  scope: string;
}

/** evaluate resolves a Dynamic* value: a literal, a binding {path}, or a function call. */
export function evaluate(v: unknown, ctx: Ctx, depth = 0): unknown {
  if (v === null || typeof v !== 'object' || Array.isArray(v) || depth > 16) return v;
  const o = v as Record<string, any>;
  if (typeof o.path === 'string') return getPointer(ctx.data, resolvePath(o.path, ctx.scope));
  if (typeof o.call === 'string') return call(o.call, o.args ?? {}, ctx, depth + 1);
  return v;
}

/** text is a value as the user reads it: objects and lists as JSON, nothing as "". */
export function text(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

function arg(args: Record<string, unknown>, k: string, ctx: Ctx, depth: number): unknown {
  return evaluate(args[k], ctx, depth);
}

/** call runs a function of the basic catalog; an unknown one gives undefined. */
function call(name: string, args: Record<string, unknown>, ctx: Ctx, depth: number): unknown {
  const a = (k: string) => arg(args, k, ctx, depth);
  const num = (k: string) => Number(a(k));
  switch (name) {
    case 'required': {
      const v = a('value');
      return !(v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0));
    }
    case 'regex':
      try {
        return new RegExp(String(args.pattern)).test(text(a('value')));
      } catch {
        return false;
      }
    case 'length': {
      const v = a('value');
      const n = Array.isArray(v) ? v.length : text(v).length;
      return (args.min === undefined || n >= Number(args.min)) && (args.max === undefined || n <= Number(args.max));
    }
    case 'numeric': {
      const n = num('value');
      return !Number.isNaN(n) && (args.min === undefined || n >= Number(args.min)) && (args.max === undefined || n <= Number(args.max));
    }
    case 'email':
      return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(text(a('value')));
    case 'and':
      return Array.isArray(args.values) && args.values.every((x) => evaluate(x, ctx, depth) === true);
    case 'or':
      return Array.isArray(args.values) && args.values.some((x) => evaluate(x, ctx, depth) === true);
    case 'not':
      return a('value') !== true;
    case 'formatString':
      return formatString(text(args.value), ctx);
    case 'formatNumber': {
      const d = args.decimals === undefined ? undefined : num('decimals');
      return new Intl.NumberFormat(undefined, { minimumFractionDigits: d, maximumFractionDigits: d, useGrouping: a('grouping') !== false }).format(num('value'));
    }
    case 'formatCurrency': {
      const d = args.decimals === undefined ? undefined : num('decimals');
      try {
        return new Intl.NumberFormat(undefined, { style: 'currency', currency: text(a('currency')), minimumFractionDigits: d, maximumFractionDigits: d, useGrouping: a('grouping') !== false }).format(num('value'));
      } catch {
        return `${text(a('value'))} ${text(a('currency'))}`;
      }
    }
    case 'formatDate':
      return formatDate(a('value'), text(a('format')));
    case 'pluralize': {
      const n = num('value');
      const cat = n === 0 && args.zero !== undefined ? 'zero' : new Intl.PluralRules().select(n);
      return text(args[cat] !== undefined ? a(cat) : a('other'));
    }
  }
  return undefined;
}

/** formatString replaces ${/path} (or ${relative}) with the data's values; \${ stays literal. */
function formatString(s: string, ctx: Ctx): string {
  return s.replace(/(\\?)\$\{([^${}()]*)\}/g, (m, esc: string, p: string) => (esc ? m.slice(1) : text(getPointer(ctx.data, resolvePath(p.trim(), ctx.scope)))));
}

const MONTHS = (style: 'long' | 'short') => Array.from({ length: 12 }, (_, i) => new Date(2026, i, 1).toLocaleString(undefined, { month: style }));
const DAYS = (style: 'long' | 'short') => Array.from({ length: 7 }, (_, i) => new Date(2026, 1, i + 1).toLocaleString(undefined, { weekday: style })); // 2026-02-01 is a Sunday

/** formatDate writes a date with a TR35 pattern's common tokens. */
function formatDate(v: unknown, pattern: string): string {
  const d = new Date(typeof v === 'number' ? v : text(v));
  if (Number.isNaN(d.getTime())) return text(v);
  const pad = (n: number) => String(n).padStart(2, '0');
  const h12 = d.getHours() % 12 || 12;
  const sub: Record<string, () => string> = {
    yyyy: () => String(d.getFullYear()),
    YYYY: () => String(d.getFullYear()),
    yy: () => pad(d.getFullYear() % 100),
    MMMM: () => MONTHS('long')[d.getMonth()],
    MMM: () => MONTHS('short')[d.getMonth()],
    MM: () => pad(d.getMonth() + 1),
    M: () => String(d.getMonth() + 1),
    dd: () => pad(d.getDate()),
    d: () => String(d.getDate()),
    EEEE: () => DAYS('long')[d.getDay()],
    E: () => DAYS('short')[d.getDay()],
    HH: () => pad(d.getHours()),
    H: () => String(d.getHours()),
    hh: () => pad(h12),
    h: () => String(h12),
    mm: () => pad(d.getMinutes()),
    ss: () => pad(d.getSeconds()),
    a: () => (d.getHours() < 12 ? 'AM' : 'PM'),
  };
  return pattern.replace(/'[^']*'|yyyy|YYYY|yy|MMMM|MMM|MM|M|dd|d|EEEE|E|HH|H|hh|h|mm|ss|a/g, (t) => (t.startsWith("'") ? t.slice(1, -1) : sub[t]()));
}

/** actionText is the message an action sends: its prefix and the action as JSON (keys in the server's order). */
export function actionText(name: string, surfaceId: string, sourceComponentId: string, context: Record<string, unknown>): string {
  return ACTION_PREFIX + JSON.stringify({ context, name, sourceComponentId, surfaceId, timestamp: new Date().toISOString() });
}
