// An MCP App (the io.modelcontextprotocol/ui extension) next to its tool
// card: the page the tool names (a ui:// resource of a configured MCP
// server, read as the user from GET /wunder/mcp-apps/resource) runs in an
// iframe with sandbox="allow-scripts" alone — an opaque origin, never
// allow-same-origin — under a CSP built from the page's _meta.ui.csp (no
// network unless it declares domains). The console is the app's host over
// postMessage (JSON-RPC 2.0): it answers ui/initialize, sends the tool's
// input and result, follows size changes, and relays resources/read and
// tools/call to the app's own server as the user (POST
// /wunder/mcp-apps/call: the policy decides, the audit records). Every message whose source is not this iframe's window is
// ignored. docs/console.md#mcp-apps.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { api, withUser } from './api';
import type { Strings } from './i18n';
import type { ToolView } from './run';

interface Contents {
  uri: string;
  mimeType?: string;
  text?: string;
  blob?: string;
  _meta?: { ui?: { csp?: Csp; prefersBorder?: boolean } };
}
interface Csp {
  connectDomains?: string[];
  resourceDomains?: string[];
  frameDomains?: string[];
  baseUriDomains?: string[];
}

const PROTOCOL = '2026-01-26';

/** origin keeps a declared domain that is a plain origin (https://a.example, https://*.b.example:8443); anything else, which could smuggle CSP syntax, is dropped. */
function origins(list?: string[]): string[] {
  return (list || []).filter((d) => typeof d === 'string' && /^(https|wss?):\/\/(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*(:\d{1,5})?$/i.test(d));
}

/** appCSP is the page's policy from its _meta.ui.csp; without one, the extension's restrictive default (no network). */
export function appCSP(csp?: Csp): string {
  const res = origins(csp?.resourceDomains).join(' ');
  const src = (base: string) => (res ? base + ' ' + res : base);
  const list = (l: string[]) => (l.length ? l.join(' ') : "'none'");
  return [
    "default-src 'none'",
    src("script-src 'unsafe-inline'"),
    src("style-src 'unsafe-inline'"),
    src('img-src data:'),
    src('media-src data:'),
    src('font-src data:'),
    'connect-src ' + list(origins(csp?.connectDomains)),
    'frame-src ' + list(origins(csp?.frameDomains)),
    'base-uri ' + list(origins(csp?.baseUriDomains)),
    "object-src 'none'",
    "form-action 'none'",
  ].join('; ');
}

/** withCSP puts the policy first in the page's head, before anything it loads or runs. */
function withCSP(html: string, csp: string): string {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${csp.replace(/"/g, '&quot;')}">`;
  const head = /<head(\s[^>]*)?>/i.exec(html);
  if (head) return html.slice(0, head.index + head[0].length) + meta + html.slice(head.index + head[0].length);
  const root = /<html(\s[^>]*)?>/i.exec(html);
  if (root) return html.slice(0, root.index + root[0].length) + '<head>' + meta + '</head>' + html.slice(root.index + root[0].length);
  return '<head>' + meta + '</head>' + html;
}

function decode(c: Contents): string {
  if (typeof c.text === 'string') return c.text;
  const bytes = Uint8Array.from(atob(c.blob || ''), (ch) => ch.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}

/** serverOf is the server of a namespaced ui://{server}/… URI. */
function serverOf(uri: string): string {
  return uri.slice('ui://'.length).split('/')[0];
}

async function readPage(uri: string): Promise<Contents> {
  const r = await api<{ contents: Contents[] }>('GET', withUser('/wunder/mcp-apps/resource?uri=' + encodeURIComponent(uri)));
  const c = r.contents?.[0];
  if (!c || !(c.mimeType || '').startsWith('text/html')) throw new Error(`${uri}: not an HTML page (${c?.mimeType ?? 'no contents'})`);
  return c;
}

function args(v: unknown): Record<string, unknown> {
  if (typeof v === 'string') {
    try {
      return JSON.parse(v);
    } catch {
      return {};
    }
  }
  return (v && typeof v === 'object' ? v : {}) as Record<string, unknown>;
}

export function McpApp({ s, uri, t }: { s: Strings; uri: string; t: ToolView }) {
  const frame = useRef<HTMLIFrameElement>(null);
  const [page, setPage] = useState<Contents | null>(null);
  const [err, setErr] = useState('');
  const [height, setHeight] = useState(160);
  const ready = useRef(false); // the app sent ui/notifications/initialized
  const sentResult = useRef(false);
  const tool = useRef(t);
  tool.current = t;

  useEffect(() => {
    readPage(uri).then(setPage, (e) => setErr(e.message));
  }, [uri]);

  const post = (msg: unknown) => frame.current?.contentWindow?.postMessage(msg, '*'); // an opaque origin: '*' is the only target
  const sendResult = () => {
    const cur = tool.current;
    if (!ready.current || sentResult.current || cur.result === undefined) return;
    sentResult.current = true;
    post({ jsonrpc: '2.0', method: 'ui/notifications/tool-result', params: { content: [{ type: 'text', text: cur.result }], isError: !!cur.isError } });
  };
  useEffect(sendResult, [t.result]);

  // Listening before the frame can speak: layout effects run before the frame's page arrives.
  useLayoutEffect(() => {
    if (!page) return;
    const reply = (id: unknown, result: unknown) => post({ jsonrpc: '2.0', id, result });
    const fail = (id: unknown, code: number, message: string) => post({ jsonrpc: '2.0', id, error: { code, message } });
    const onMessage = (e: MessageEvent) => {
      if (!frame.current || e.source !== frame.current.contentWindow) return; // this app's frame, nobody else
      const m = e.data;
      if (m && m.type === 'wunder/app-frame-ready') {
        post({ type: 'wunder/app-frame', html: withCSP(decode(page), appCSP(page._meta?.ui?.csp)) });
        return;
      }
      if (!m || m.jsonrpc !== '2.0' || typeof m.method !== 'string') return; // answers to requests the host never sends
      const p = m.params || {};
      switch (m.method) {
        case 'ui/initialize':
          reply(m.id, {
            protocolVersion: PROTOCOL,
            hostInfo: { name: 'wunder-console', version: '1' },
            hostCapabilities: { serverResources: {}, serverTools: {}, logging: {} },
            hostContext: {
              toolInfo: { tool: { name: tool.current.name, inputSchema: { type: 'object' } } },
              theme: document.documentElement.dataset.theme === 'dark' ? 'dark' : 'light',
              displayMode: 'inline',
              availableDisplayModes: ['inline'],
              locale: document.documentElement.lang || navigator.language,
              platform: 'web',
            },
          });
          return;
        case 'ui/notifications/initialized':
          ready.current = true;
          post({ jsonrpc: '2.0', method: 'ui/notifications/tool-input', params: { arguments: args(tool.current.args) } });
          sendResult();
          return;
        case 'ui/notifications/size-changed':
          if (typeof p.height === 'number' && p.height > 0) setHeight(Math.min(Math.ceil(p.height), 2000));
          return;
        case 'ping':
          reply(m.id, {});
          return;
        case 'resources/read': {
          // The app's own server's pages, under the same rule as the page itself.
          const want = typeof p.uri === 'string' && p.uri.startsWith('ui://') ? 'ui://' + serverOf(uri) + '/' + p.uri.slice('ui://'.length) : '';
          if (!want) return fail(m.id, -32602, 'only ui:// resources of this app’s server can be read');
          readPage(want).then(
            (c) => reply(m.id, { contents: [{ ...c, uri: p.uri }] }),
            (e) => fail(m.id, -32603, e.message),
          );
          return;
        }
        case 'notifications/message':
          return;
        case 'tools/call':
          // A tool of the app's own server, as the user: the server decides which (the policy, the tool's visibility).
          if (typeof p.name !== 'string' || !p.name) return fail(m.id, -32602, 'tools/call needs the name of a tool of this app’s server');
          api<unknown>('POST', withUser('/wunder/mcp-apps/call'), { uri, name: p.name, arguments: p.arguments ?? {} }).then(
            (r) => reply(m.id, r),
            (e) => fail(m.id, -32603, e.message),
          );
          return;
      }
      if (m.id !== undefined) fail(m.id, -32601, 'method not supported by this host: ' + m.method);
    };
    addEventListener('message', onMessage);
    return () => removeEventListener('message', onMessage);
  }, [page]);

  if (err) return <div class="note error mcp-app-error">{s.appFailed}: {err}</div>;
  if (!page) return <div class="muted">{s.appLoading}</div>;
  return (
    <iframe
      ref={frame}
      class="mcp-app"
      title={`${s.app}: ${t.name}`}
      sandbox="allow-scripts"
      src="/wunder/web/app-frame.html"
      data-app={uri}
      style={{ height: height + 'px' }}
    />
  );
}
