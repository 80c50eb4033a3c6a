// The performance page (admins; loaded on demand): this server's load
// over the last hour, sampled every interval by the server
// (GET /wunder/admin/performance, docs/monitor.md#performance): runs per
// second, run latency and tool latency (median and 95th percentile),
// each a line chart in inline SVG (no chart library). Read again every
// interval while the page is open.
import { useEffect, useState } from 'preact/hooks';
import { api } from './api';
import { lang, strings, type Strings } from './i18n';
import { useSignal } from './state';

interface Point {
  at: string;
  seconds: number;
  runs: number;
  runs_per_s: number;
  runs_failed: number;
  run_p50_ms: number;
  run_p95_ms: number;
  run_max_ms: number;
  tool_calls: number;
  tool_errors: number;
  tool_p50_ms: number;
  tool_p95_ms: number;
  tool_max_ms: number;
  active: number;
  queued: number;
}
interface Page {
  interval_s: number;
  points: Point[];
}

export function Performance() {
  const s = strings(useSignal(lang));
  const [page, setPage] = useState<Page | null>(null);
  const [err, setErr] = useState('');
  const load = () =>
    api<Page>('GET', '/wunder/admin/performance')
      .then((p) => {
        setPage(p);
        setErr('');
      })
      .catch((e) => setErr((e as Error).message));
  const every = Math.max(2, page?.interval_s ?? 10) * 1000;
  useEffect(() => {
    load();
    const id = setInterval(() => {
      if (!document.hidden) load();
    }, every);
    return () => clearInterval(id);
  }, [every]);
  const pts = page?.points ?? [];
  const last = pts[pts.length - 1];
  const total = (k: 'runs' | 'tool_calls' | 'runs_failed' | 'tool_errors') => pts.reduce((n, p) => n + p[k], 0);
  return (
    <div class="performance">
      <h1>{s.performance}</h1>
      <p class="muted">
        {s.perfIntro.replace('{s}', String(page?.interval_s ?? '…'))}{' '}
        <button type="button" class="small" onClick={load}>
          {s.refresh}
        </button>
      </p>
      {err && (
        <p class="error" role="alert">
          {err}
        </p>
      )}
      {page && pts.length === 0 && <p class="muted">{s.perfNoPoints}</p>}
      {pts.length > 0 && (
        <>
          <dl class="system perf-totals">
            <div>
              <dt>{s.perfRuns}</dt>
              <dd>
                {total('runs')} <span class="muted">({total('runs_failed')} {s.step_failed})</span>
              </dd>
            </div>
            <div>
              <dt>{s.perfToolCalls}</dt>
              <dd>
                {total('tool_calls')} <span class="muted">({total('tool_errors')} {s.step_failed})</span>
              </dd>
            </div>
            <div>
              <dt>{s.activeRuns}</dt>
              <dd>{last ? `${last.active} · ${s.queued} ${last.queued}` : '—'}</dd>
            </div>
          </dl>
          <div class="charts">
            <LineChart s={s} id="runs-per-s" label={s.perfRunRate} unit="/s" points={pts} series={[{ key: 'runs_per_s', name: s.perfRunRate, cls: 's1' }]} digits={2} />
            <LineChart
              s={s}
              id="run-latency"
              label={s.perfRunLatency}
              unit={s.ms}
              points={pts}
              series={[
                { key: 'run_p50_ms', name: 'p50', cls: 's1' },
                { key: 'run_p95_ms', name: 'p95', cls: 's2' },
              ]}
            />
            <LineChart
              s={s}
              id="tool-latency"
              label={s.perfToolLatency}
              unit={s.ms}
              points={pts}
              series={[
                { key: 'tool_p50_ms', name: 'p50', cls: 's1' },
                { key: 'tool_p95_ms', name: 'p95', cls: 's2' },
              ]}
            />
          </div>
        </>
      )}
    </div>
  );
}

type Key = 'runs_per_s' | 'run_p50_ms' | 'run_p95_ms' | 'tool_p50_ms' | 'tool_p95_ms';

const W = 420;
const H = 150;
const PAD = { l: 44, r: 8, t: 8, b: 22 };

const hhmm = (d: Date) => d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });

/**
 * LineChart draws each series of points over time: a line and a dot per
 * point (titled with its time and value), the y axis from 0 to the
 * largest value, the first and last times under it.
 */
function LineChart({ s, id, label, unit, points, series, digits = 0 }: { s: Strings; id: string; label: string; unit: string; points: Point[]; series: { key: Key; name: string; cls: string }[]; digits?: number }) {
  const ts = points.map((p) => new Date(p.at).getTime());
  const t0 = ts[0];
  const t1 = ts[ts.length - 1];
  const max = Math.max(...series.flatMap((x) => points.map((p) => p[x.key])), digits ? 0.01 : 1);
  const x = (t: number) => PAD.l + (t1 === t0 ? (W - PAD.l - PAD.r) / 2 : ((t - t0) / (t1 - t0)) * (W - PAD.l - PAD.r));
  const y = (v: number) => PAD.t + (1 - v / max) * (H - PAD.t - PAD.b);
  const fmt = (v: number) => v.toFixed(digits);
  const lastOf = (k: Key) => points[points.length - 1][k];
  const summary = `${label}: ${series.map((x) => `${x.name} ${s.perfNow} ${fmt(lastOf(x.key))} ${unit}`).join(', ')}; ${s.max} ${fmt(max)} ${unit}`;
  return (
    <figure class="chart line-chart" data-chart={id}>
      <figcaption>
        {label}{' '}
        <span class="muted">
          ({s.max} {fmt(max)} {unit})
        </span>
        {series.length > 1 && (
          <span class="legend">
            {series.map((x) => (
              <span class={'key ' + x.cls}>{x.name}</span>
            ))}
          </span>
        )}
      </figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} width={W} height={H} role="img" aria-label={summary}>
        <line x1={PAD.l} y1={H - PAD.b + 0.5} x2={W - PAD.r} y2={H - PAD.b + 0.5} class="axis-line" />
        <line x1={PAD.l - 0.5} y1={PAD.t} x2={PAD.l - 0.5} y2={H - PAD.b} class="axis-line" />
        <text x={PAD.l - 4} y={PAD.t + 8} text-anchor="end" class="axis">
          {fmt(max)}
        </text>
        <text x={PAD.l - 4} y={H - PAD.b} text-anchor="end" class="axis">
          0
        </text>
        <text x={PAD.l} y={H - 6} class="axis">
          {hhmm(new Date(t0))}
        </text>
        <text x={W - PAD.r} y={H - 6} text-anchor="end" class="axis">
          {hhmm(new Date(t1))}
        </text>
        {series.map((sr) => (
          <g class={'series ' + sr.cls} data-series={sr.key}>
            <polyline points={points.map((p, i) => `${x(ts[i]).toFixed(1)},${y(p[sr.key]).toFixed(1)}`).join(' ')} class="line" />
            {points.map((p, i) => (
              <circle cx={x(ts[i])} cy={y(p[sr.key])} r={2.5} class="pt">
                <title>{`${hhmm(new Date(ts[i]))} ${sr.name}: ${fmt(p[sr.key])} ${unit}`}</title>
              </circle>
            ))}
          </g>
        ))}
      </svg>
    </figure>
  );
}
