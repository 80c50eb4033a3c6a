import type { Attachment } from './attach';

// The console's one client of wunder's public HTTP API (docs/http.md).
// The credential lives in sessionStorage (never in a URL); in the anonymous
// local mode there is none and every call names user_id instead.

export interface Identity {
  /** login token (Bearer wdr_…); "" in the anonymous local mode */
  token: string;
  userId: string;
  admin: boolean;
}

const KEY = 'wunder.identity';

let ident: Identity | null = loadIdentity();

function loadIdentity(): Identity | null {
  try {
    const raw = sessionStorage.getItem(KEY);
    return raw ? (JSON.parse(raw) as Identity) : null;
  } catch {
    return null;
  }
}

export function identity(): Identity | null {
  return ident;
}

export function setIdentity(i: Identity | null) {
  ident = i;
  if (i) sessionStorage.setItem(KEY, JSON.stringify(i));
  else {
    sessionStorage.removeItem(KEY);
    sessionStorage.removeItem('wunder.session'); // the chat's open session was that user's
  }
}

/** ApiError carries the problem document's code and detail. */
export class ApiError extends Error {
  constructor(
    public status: number,
    public code: string,
    message: string,
    /** per-key problems of an invalid_config answer (docs/admin.md) */
    public errors: { key: string; message: string }[] = [],
    /** the session of the run a refusal names (a 429 whose run waits for a person) */
    public sessionId = '',
  ) {
    super(message);
  }
}

function headers(extra?: Record<string, string>): Record<string, string> {
  const h: Record<string, string> = { ...extra };
  if (ident?.token) h['Authorization'] = 'Bearer ' + ident.token;
  return h;
}

/**
 * withUser adds ?user_id=: the anonymous mode must name the user, and an
 * admin's token acts for whoever it names, so the console always names the
 * user it shows (a user's token may name itself).
 */
export function withUser(path: string): string {
  if (!ident) return path;
  return path + (path.includes('?') ? '&' : '?') + 'user_id=' + encodeURIComponent(ident.userId);
}

async function problem(r: Response): Promise<ApiError> {
  let code = 'http_' + r.status;
  let detail = r.statusText;
  let errors: { key: string; message: string }[] = [];
  let sessionId = '';
  try {
    const p = await r.json();
    code = p.code || code;
    detail = p.detail || p.title || detail;
    if (Array.isArray(p.errors)) errors = p.errors;
    if (typeof p.session_id === 'string') sessionId = p.session_id;
  } catch {
    /* not JSON */
  }
  return new ApiError(r.status, code, detail, errors, sessionId);
}

export async function api<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const r = await fetch(path, {
    method,
    headers: headers(body === undefined ? undefined : { 'Content-Type': 'application/json' }),
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  if (!r.ok) throw await problem(r);
  if (r.status === 204) return undefined as T;
  return (await r.json()) as T;
}

/** apiForm posts multipart form data (uploads); the browser sets the boundary. */
export async function apiForm<T>(path: string, form: FormData): Promise<T> {
  const r = await fetch(path, { method: 'POST', headers: headers(), body: form });
  if (!r.ok) throw await problem(r);
  return (await r.json()) as T;
}

/** apiBlob fetches a file (downloads, images) with the credential in a header, never in the URL. */
export async function apiBlob(path: string): Promise<Blob> {
  const r = await fetch(path, { headers: headers() });
  if (!r.ok) throw await problem(r);
  return r.blob();
}

/** saveBlob hands a blob to the browser as a download named name. */
export function saveBlob(b: Blob, name: string) {
  const url = URL.createObjectURL(b);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** RunEvent is one event of a run's log (docs/http.md#events). */
export interface RunEvent {
  run_id: string;
  session_id: string;
  seq: number;
  type: string;
  data: any;
  time: string;
}

export interface StreamStart {
  runId: string;
  sessionId: string;
}

/**
 * sse reads a text/event-stream body and calls onEvent for each event's
 * data (parsed JSON). It returns when the body ends; it throws when the
 * connection breaks.
 */
async function readSSE(r: Response, onEvent: (ev: RunEvent) => void) {
  const reader = r.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  let data: string[] = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      let line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line === '') {
        if (data.length) onEvent(JSON.parse(data.join('\n')) as RunEvent);
        data = [];
      } else if (line.startsWith('data:')) {
        data.push(line.slice(line.charAt(5) === ' ' ? 6 : 5));
      }
      // event:, id: and comments (": ping") carry nothing the JSON lacks
    }
  }
}

export interface AskRequest {
  question: string;
  /** docs/attachments.md */
  attachments?: Attachment[];
  session_id?: string;
  model_name?: string;
  tool_names?: string[];
  language?: string;
}

/**
 * follow runs (ask) or follows (runId) a run and delivers each event
 * exactly once, in order: when the connection drops before `final`, it
 * resumes with Last-Event-ID from the last seq it delivered, retrying
 * with a growing delay until the run ends or signal aborts.
 */
export async function streamRun(
  req: AskRequest | { runId: string; afterSeq: number },
  onStart: (s: StreamStart) => void,
  onEvent: (ev: RunEvent) => void,
  onReconnect: (attempt: number) => void,
  signal: AbortSignal,
): Promise<void> {
  let runId = '';
  let lastSeq = 0;
  let ended = false;
  const deliver = (ev: RunEvent) => {
    if (ev.seq <= lastSeq) return; // replayed: already shown
    lastSeq = ev.seq;
    if (ev.type === 'final') ended = true;
    onEvent(ev);
  };
  let r: Response;
  if ('runId' in req) {
    runId = req.runId;
    lastSeq = req.afterSeq;
  } else {
    const body: Record<string, unknown> = { ...req, stream: true };
    if (ident) body.user_id = ident.userId;
    r = await fetch('/wunder', {
      method: 'POST',
      headers: headers({ 'Content-Type': 'application/json', Accept: 'text/event-stream' }),
      body: JSON.stringify(body),
      signal,
    });
    if (!r.ok) throw await problem(r);
    runId = r.headers.get('X-Run-Id') || '';
    onStart({ runId, sessionId: r.headers.get('X-Session-Id') || '' });
    try {
      await readSSE(r, deliver);
    } catch (e) {
      if (signal.aborted) throw e;
    }
  }
  let first = 'runId' in req; // following from afterSeq: connect at once
  for (let attempt = 0; !ended && !signal.aborted; ) {
    if (!runId) throw new ApiError(0, 'no_run', 'the server did not say which run it started');
    if (!first) {
      attempt++;
      onReconnect(attempt);
      await new Promise((res) => setTimeout(res, Math.min(250 * 2 ** (attempt - 1), 5000)));
    }
    first = false;
    try {
      r = await fetch(withUser(`/wunder/runs/${encodeURIComponent(runId)}/events`), {
        headers: headers({ Accept: 'text/event-stream', 'Last-Event-ID': String(lastSeq) }),
        signal,
      });
      if (!r.ok) {
        const err = await problem(r);
        if (r.status >= 400 && r.status < 500) throw err; // not found, forbidden: retrying will not help
        continue;
      }
      attempt = 0;
      await readSSE(r, deliver);
    } catch (e) {
      if (e instanceof ApiError || signal.aborted) throw e;
    }
  }
}
