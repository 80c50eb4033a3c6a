// An A2UI surface in the chat (docs/console.md#a2ui-surfaces): the basic
// catalog's components as Preact elements, from the surface's root. Only
// elements are built, never HTML from a string, so nothing a surface says
// can run: text is text (Text's Markdown goes through ./markdown, which
// keeps no raw HTML), links keep http(s) targets, and images load only
// from the console's own origin or data: (the CSP's img-src), others
// become links. Inputs write the surface's data model (two-way binding);
// a button's event action sends the user's action as a new message of
// the session ("[a2ui action] {...}", as A2A clients send it).
import { useRef, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import type { Strings } from './i18n';
import { actionText, evaluate, getPointer, resolvePath, setPointer, text, type Comp, type Ctx, type Surface } from './a2ui';
import { Markdown, safeHref } from './markdown';

/** MAX_DEPTH bounds a surface's tree, as the server does (internal/a2ui.MaxTreeDepth). */
const MAX_DEPTH = 32;

interface Props {
  s: Strings;
  surface: Surface;
  /** busy: a run of the session is going; actions wait for it. */
  busy: boolean;
  /** onAction sends an action's message; absent in a view that cannot send. */
  onAction?: (message: string) => void;
}

/** R is what every node of one surface's view shares. */
interface R {
  s: Strings;
  surface: Surface;
  busy: boolean;
  onAction?: (message: string) => void;
  /** local holds the values of inputs bound to no data path, by scope and id. */
  local: Map<string, unknown>;
  /** touched are the inputs the user changed: their failed checks show. */
  touched: Set<string>;
  write: (path: string | undefined, key: string, v: unknown) => void;
}

export function SurfaceView({ s, surface, busy, onAction }: Props) {
  const [, setTick] = useState(0);
  const local = useRef(new Map<string, unknown>()).current;
  const touched = useRef(new Set<string>()).current;
  const write = (path: string | undefined, key: string, v: unknown) => {
    if (path) surface.data = setPointer(surface.data, path, v);
    else local.set(key, v);
    touched.add(key);
    surface.rev++;
    setTick((n) => n + 1);
  };
  const r: R = { s, surface, busy, onAction, local, touched, write };
  return (
    <section class="a2ui" aria-label={`${s.a2uiSurface}: ${surface.id}`} data-surface={surface.id}>
      {surface.comps.has('root') ? <Node r={r} id="root" scope="" depth={0} /> : <p class="muted">{s.a2uiEmpty}</p>}
    </section>
  );
}

/** bindingOf is the absolute data path a value is bound to, if it is bound. */
function bindingOf(v: unknown, scope: string): string | undefined {
  return v !== null && typeof v === 'object' && typeof (v as { path?: unknown }).path === 'string' ? resolvePath((v as { path: string }).path, scope) : undefined;
}

/** childList lists a container's children: ids, or a template repeated over a data list (each in its item's scope). */
function childList(r: R, c: Comp, scope: string): { id: string; scope: string; key: string }[] {
  const ch = c.children as unknown;
  if (Array.isArray(ch)) return ch.filter((x): x is string => typeof x === 'string').map((id) => ({ id, scope, key: id }));
  if (ch && typeof ch === 'object') {
    const t = ch as { componentId?: unknown; path?: unknown };
    if (typeof t.componentId !== 'string' || typeof t.path !== 'string') return [];
    const abs = resolvePath(t.path, scope);
    const items = getPointer(r.surface.data, abs);
    return Array.isArray(items) ? items.slice(0, 500).map((_, i) => ({ id: t.componentId as string, scope: `${abs}/${i}`, key: `${abs}/${i}` })) : [];
  }
  return [];
}

function Node({ r, id, scope, depth, seen = [] }: { r: R; id: string; scope: string; depth: number; seen?: string[] }) {
  const c = r.surface.comps.get(id);
  if (!c || depth > MAX_DEPTH || seen.includes(id)) return null; // a missing child is a placeholder; a cycle stops
  const path = [...seen, id];
  const ctx: Ctx = { data: r.surface.data, scope };
  const str = (k: string) => text(evaluate(c[k], ctx));
  const key = `${scope}#${id}`;
  const child = (cid: unknown, s = scope) => (typeof cid === 'string' ? <Node r={r} id={cid} scope={s} depth={depth + 1} seen={path} /> : null);
  const grow = typeof c.weight === 'number' ? { flexGrow: c.weight, flexBasis: 0 } : undefined;
  const wrap = (el: ComponentChildren) => (grow ? <div class="a2ui-weight" style={grow}>{el}</div> : el);
  switch (c.component) {
    case 'Text': {
      // h1-h5 are headings of the chat's third level (under the page's h2s), sized by the variant
      const v = typeof c.variant === 'string' ? c.variant : 'body';
      if (/^h[1-5]$/.test(v))
        return wrap(
          <p class={'a2ui-text a2ui-' + v} role="heading" aria-level={3} data-id={id}>
            {str('text')}
          </p>,
        );
      return wrap(<Markdown class={'a2ui-text a2ui-' + v} source={str('text')} shift={3} breaks />);
    }
    case 'Image': {
      const url = str('url');
      const alt = str('description');
      const local = /^data:image\//.test(url) || (safeHref(url) ?? '').startsWith(location.origin + '/');
      if (local) return wrap(<img class={'a2ui-image a2ui-' + String(c.variant ?? 'mediumFeature')} src={url} alt={alt} data-fit={String(c.fit ?? 'fill')} />);
      return wrap(<ExternalLink href={url} label={`${r.s.a2uiImage}: ${alt || url}`} />);
    }
    case 'Video':
    case 'AudioPlayer':
      return wrap(<ExternalLink href={str('url')} label={`${c.component === 'Video' ? r.s.a2uiVideo : r.s.a2uiAudio}: ${str('description') || str('url')}`} />);
    case 'Icon':
      return wrap(<Icon name={evaluate(c.name, ctx)} />);
    case 'Row':
    case 'Column':
    case 'List': {
      const dir = c.component === 'Row' || (c.component === 'List' && c.direction === 'horizontal') ? 'row' : 'column';
      const kids = childList(r, c, scope);
      const cls = `a2ui-${dir} a2ui-justify-${String(c.justify ?? 'start')} a2ui-align-${String(c.align ?? 'stretch')}`;
      if (c.component === 'List')
        return wrap(
          <ul class={'a2ui-list ' + cls} data-id={id}>
            {kids.map((k) => (
              <li key={k.key}>{child(k.id, k.scope)}</li>
            ))}
          </ul>,
        );
      return wrap(
        <div class={cls} data-id={id}>
          {kids.map((k) => child(k.id, k.scope))}
        </div>,
      );
    }
    case 'Card':
      return wrap(
        <div class="a2ui-card" data-id={id}>
          {child(c.child)}
        </div>,
      );
    case 'Divider':
      return wrap(<hr class={'a2ui-divider a2ui-' + String(c.axis ?? 'horizontal')} />);
    case 'Tabs':
      return wrap(<Tabs r={r} c={c} ctx={ctx} render={(cid) => child(cid)} />);
    case 'Modal':
      return wrap(<Modal s={r.s} trigger={child(c.trigger)} content={child(c.content)} />);
    case 'Button': {
      const failed = failedChecks(c, ctx);
      const act = () => runAction(r, c, id, ctx);
      const cls = c.variant === 'primary' ? 'primary' : c.variant === 'borderless' ? 'ghost a2ui-borderless' : '';
      return wrap(
        <button type="button" class={'a2ui-button ' + cls} data-id={id} disabled={r.busy || failed.length > 0 || (!r.onAction && isEvent(c))} title={failed.join('\n') || undefined} onClick={act}>
          {child(c.child)}
        </button>,
      );
    }
    case 'TextField': {
      const bound = bindingOf(c.value, scope);
      const val = text(bound ? getPointer(r.surface.data, bound) : r.local.has(key) ? r.local.get(key) : evaluate(c.value, ctx));
      const set = (e: Event) => r.write(bound, key, (e.target as HTMLInputElement).value);
      const variant = String(c.variant ?? 'shortText');
      const field =
        variant === 'longText' ? (
          <textarea rows={3} value={val} onInput={set} />
        ) : variant === 'obscured' ? (
          <input type="password" value={val} onInput={set} />
        ) : variant === 'number' ? (
          <input type="number" value={val} onInput={set} />
        ) : (
          <input type="text" value={val} onInput={set} />
        );
      const invalid = r.touched.has(key) && val !== '' && !matches(c.validationRegexp, val);
      return wrap(
        <label class="a2ui-field" data-id={id}>
          <span>{str('label')}</span>
          {field}
          <Failed r={r} c={c} ctx={ctx} k={key} />
          {invalid && (
            <span class="a2ui-failed" role="alert">
              {r.s.a2uiInvalid}
            </span>
          )}
        </label>,
      );
    }
    case 'CheckBox': {
      const bound = bindingOf(c.value, scope);
      const on = (bound ? getPointer(r.surface.data, bound) : r.local.has(key) ? r.local.get(key) : evaluate(c.value, ctx)) === true;
      return wrap(
        <label class="a2ui-check" data-id={id}>
          <input type="checkbox" checked={on} onChange={(e) => r.write(bound, key, (e.target as HTMLInputElement).checked)} /> <span>{str('label')}</span>
          <Failed r={r} c={c} ctx={ctx} k={key} />
        </label>,
      );
    }
    case 'ChoicePicker': {
      const bound = bindingOf(c.value, scope);
      const cur = bound ? getPointer(r.surface.data, bound) : r.local.has(key) ? r.local.get(key) : evaluate(c.value, ctx);
      const picked = Array.isArray(cur) ? cur.map(text) : [];
      const multi = c.variant === 'multipleSelection';
      const opts = Array.isArray(c.options) ? (c.options as { label?: unknown; value?: unknown }[]) : [];
      const pick = (v: string, on: boolean) => r.write(bound, key, multi ? (on ? [...picked.filter((x) => x !== v), v] : picked.filter((x) => x !== v)) : [v]);
      return wrap(
        <fieldset class="a2ui-choice" data-id={id}>
          <legend>{str('label') || r.s.a2uiChoose}</legend>
          {opts.map((o) => {
            const v = text(o.value);
            return (
              <label class="a2ui-check">
                <input type={multi ? 'checkbox' : 'radio'} name={`${r.surface.id}-${key}`} checked={picked.includes(v)} onChange={(e) => pick(v, (e.target as HTMLInputElement).checked)} />{' '}
                <span>{text(evaluate(o.label, ctx))}</span>
              </label>
            );
          })}
          <Failed r={r} c={c} ctx={ctx} k={key} />
        </fieldset>,
      );
    }
    case 'Slider': {
      const bound = bindingOf(c.value, scope);
      const val = Number(bound ? getPointer(r.surface.data, bound) : r.local.has(key) ? r.local.get(key) : evaluate(c.value, ctx)) || 0;
      return wrap(
        <label class="a2ui-field" data-id={id}>
          <span>
            {str('label')} <output>{val}</output>
          </span>
          <input type="range" min={Number(c.min ?? 0)} max={Number(c.max ?? 100)} value={val} onInput={(e) => r.write(bound, key, Number((e.target as HTMLInputElement).value))} />
        </label>,
      );
    }
    case 'DateTimeInput': {
      const bound = bindingOf(c.value, scope);
      const val = text(bound ? getPointer(r.surface.data, bound) : r.local.has(key) ? r.local.get(key) : evaluate(c.value, ctx));
      const type = c.enableDate && c.enableTime ? 'datetime-local' : c.enableTime ? 'time' : 'date';
      return wrap(
        <label class="a2ui-field" data-id={id}>
          <span>{str('label') || r.s.a2uiDate}</span>
          <input type={type} value={val} min={str('min') || undefined} max={str('max') || undefined} onInput={(e) => r.write(bound, key, (e.target as HTMLInputElement).value)} />
        </label>,
      );
    }
  }
  return null; // not of the basic catalog: the server refuses those; skip
}

/** matches tests a TextField's validationRegexp (none, or one that does not compile, passes). */
function matches(re: unknown, v: string): boolean {
  if (typeof re !== 'string' || !re) return true;
  try {
    return new RegExp(re).test(v);
  } catch {
    return true;
  }
}

function isEvent(c: Comp): boolean {
  return !!(c.action && typeof c.action === 'object' && 'event' in (c.action as object));
}

/** runAction sends an event action (its context resolved against the data) or runs a local function. */
function runAction(r: R, c: Comp, id: string, ctx: Ctx) {
  const a = c.action as { event?: { name?: unknown; context?: Record<string, unknown> }; functionCall?: { call?: unknown; args?: Record<string, unknown> } } | undefined;
  if (a?.event && typeof a.event.name === 'string' && r.onAction) {
    const context: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(a.event.context ?? {})) context[k] = evaluate(v, ctx);
    r.onAction(actionText(a.event.name, r.surface.id, id, context));
  } else if (a?.functionCall?.call === 'openUrl') {
    const href = safeHref(text(evaluate(a.functionCall.args?.url, ctx)));
    if (href && !href.startsWith('mailto:')) window.open(href, '_blank', 'noopener,noreferrer');
  } else if (a?.functionCall) {
    evaluate(a.functionCall, ctx);
  }
}

/** failedChecks lists the messages of a component's checks that fail. */
function failedChecks(c: Comp, ctx: Ctx): string[] {
  if (!Array.isArray(c.checks)) return [];
  return (c.checks as { condition?: unknown; message?: unknown }[]).filter((k) => evaluate(k.condition, ctx) !== true).map((k) => text(k.message));
}

/** Failed shows an input's failed checks once the user changed it. */
function Failed({ r, c, ctx, k }: { r: R; c: Comp; ctx: Ctx; k: string }) {
  if (!r.touched.has(k)) return null;
  const failed = failedChecks(c, ctx);
  return failed.length ? (
    <span class="a2ui-failed" role="alert">
      {failed.join(' ')}
    </span>
  ) : null;
}

function ExternalLink({ href, label }: { href: string; label: string }) {
  const h = safeHref(href);
  return h ? (
    <a class="a2ui-link" href={h} target="_blank" rel="noopener noreferrer">
      {label}
    </a>
  ) : (
    <span class="a2ui-link">{label}</span>
  );
}

function Tabs({ r, c, ctx, render }: { r: R; c: Comp; ctx: Ctx; render: (id: unknown) => ComponentChildren }) {
  const [cur, setCur] = useState(0);
  const tabs = Array.isArray(c.tabs) ? (c.tabs as { title?: unknown; child?: unknown }[]) : [];
  const i = Math.min(cur, Math.max(0, tabs.length - 1));
  const base = `${r.surface.id}-${c.id}`;
  return (
    <div class="a2ui-tabs" data-id={c.id}>
      <div role="tablist">
        {tabs.map((t, j) => (
          <button type="button" role="tab" id={`${base}-t${j}`} aria-selected={j === i} aria-controls={`${base}-p`} class={j === i ? 'current' : ''} onClick={() => setCur(j)}>
            {text(evaluate(t.title, ctx))}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`${base}-p`} aria-labelledby={`${base}-t${i}`}>
        {tabs[i] && render(tabs[i].child)}
      </div>
    </div>
  );
}

function Modal({ s, trigger, content }: { s: Strings; trigger: ComponentChildren; content: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  return (
    <>
      <div class="a2ui-modal-trigger" onClickCapture={() => ref.current?.showModal()}>
        {trigger}
      </div>
      <dialog ref={ref} class="a2ui-modal">
        {content}
        <form method="dialog">
          <button type="submit" class="small">
            {s.close}
          </button>
        </form>
      </dialog>
    </>
  );
}

/** ICONS are the basic catalog's icon names the console draws, as characters. */
const ICONS: Record<string, string> = {
  accountCircle: '◉', add: '+', arrowBack: '←', arrowForward: '→', attachFile: '📎', calendarToday: '📅', call: '☎', camera: '📷',
  check: '✓', close: '✕', delete: '🗑', download: '⭳', edit: '✎', event: '📅', error: '⚠', favorite: '♥', favoriteOff: '♡',
  folder: '📁', help: '?', home: '⌂', info: 'ℹ', locationOn: '⌖', lock: '🔒', lockOpen: '🔓', mail: '✉', menu: '☰',
  moreVert: '⋮', moreHoriz: '⋯', notifications: '🔔', notificationsOff: '🔕', pause: '⏸', payment: '💳', person: '👤',
  phone: '☎', photo: '🖼', play: '▶', print: '⎙', refresh: '↻', search: '⌕', send: '➤', settings: '⚙', share: '⤴',
  shoppingCart: '🛒', skipNext: '⏭', skipPrevious: '⏮', star: '★', starHalf: '⯪', starOff: '☆', stop: '■', upload: '⭱',
  visibility: '👁', warning: '⚠', fastForward: '⏩', rewind: '⏪', volumeUp: '🔊', volumeDown: '🔉', volumeMute: '🔇', volumeOff: '🔇',
};

function Icon({ name }: { name: unknown }) {
  if (name && typeof name === 'object' && typeof (name as { svgPath?: unknown }).svgPath === 'string')
    return (
      <svg class="a2ui-icon" viewBox="0 0 24 24" width="18" height="18" aria-hidden="true">
        <path d={(name as { svgPath: string }).svgPath} fill="currentColor" />
      </svg>
    );
  const ch = ICONS[text(name)];
  return ch ? (
    <span class="a2ui-icon" aria-hidden="true">
      {ch}
    </span>
  ) : null;
}
