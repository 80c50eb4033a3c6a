// The monitor's pictures (docs/monitor.md): the system snapshot
// (/wunder/admin/monitor/system), the tool-usage heatmap (tool_usage with
// group=hour or group=user), and runs per hour with their p95 duration
// from the last 24 hours of runs, drawn as inline SVG (no chart library).
import type { Strings } from './i18n';

export interface System {
  goroutines: number;
  cpus: number;
  cpu?: { seconds: number; percent_of_one_core?: number };
  memory: { heap_alloc_bytes: number; sys_bytes: number; gc_cycles: number };
  open_streams: number;
  runs: { active: number; queued: number; max_active_runs: number; queue_size: number };
  store?: { latency_ms: number; error?: string };
  data_dir?: { bytes: number; entries: number; partial: boolean; fs_free_bytes?: number; fs_total_bytes?: number };
}

export function bytes(n: number | undefined): string {
  if (n === undefined) return '—';
  const u = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) {
    n /= 1024;
    i++;
  }
  return (i ? n.toFixed(1) : String(n)) + ' ' + u[i];
}

export function SystemView({ s, sys }: { s: Strings; sys: System }) {
  const items: [string, string][] = [
    [s.cpu, `${sys.cpu?.percent_of_one_core !== undefined ? sys.cpu.percent_of_one_core.toFixed(1) + ' %' : (sys.cpu?.seconds.toFixed(1) ?? '—') + ' s'} · ${sys.cpus} ${s.cpus}`],
    [s.goroutines, String(sys.goroutines)],
    [s.heap, `${bytes(sys.memory.heap_alloc_bytes)} / ${bytes(sys.memory.sys_bytes)}`],
    [s.openStreams, String(sys.open_streams)],
    [s.activeRuns, `${sys.runs.active} / ${sys.runs.max_active_runs || '∞'}`],
    [s.queued, `${sys.runs.queued} / ${sys.runs.queue_size || '∞'}`],
    [s.store, sys.store ? (sys.store.error ? sys.store.error : `${sys.store.latency_ms.toFixed(1)} ${s.ms}`) : '—'],
    [s.dataDir, sys.data_dir ? `${bytes(sys.data_dir.bytes)}${sys.data_dir.partial ? '+' : ''} · ${sys.data_dir.entries}` : '—'],
    [s.freeDisk, sys.data_dir?.fs_total_bytes ? `${bytes(sys.data_dir.fs_free_bytes)} / ${bytes(sys.data_dir.fs_total_bytes)}` : '—'],
  ];
  return (
    <dl class="system">
      {items.map(([k, v]) => (
        <div>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

export interface UsageBuckets {
  tool: string;
  buckets?: { key: string; calls: number; errors: number }[];
}

/** hours are the 24 hour keys ending with the current one, oldest first. */
export function lastHours(now = new Date()): string[] {
  const h = new Date(now);
  h.setUTCMinutes(0, 0, 0);
  const out: string[] = [];
  for (let i = 23; i >= 0; i--) out.push(new Date(h.getTime() - i * 3600_000).toISOString().replace('.000Z', 'Z'));
  return out;
}

export function Heatmap({ s, tools, group }: { s: Strings; tools: UsageBuckets[]; group: 'hour' | 'user' }) {
  const cols = group === 'hour' ? lastHours() : [...new Set(tools.flatMap((t) => (t.buckets || []).map((b) => b.key)))].sort();
  const rows = tools.slice(0, 20);
  const max = Math.max(1, ...rows.flatMap((t) => (t.buckets || []).map((b) => b.calls)));
  const cw = group === 'hour' ? 18 : 60;
  const lw = 140;
  const w = lw + cols.length * cw;
  const h = 18 + rows.length * 18;
  const colLabel = (k: string) => (group === 'hour' ? String(new Date(k).getHours()).padStart(2, '0') : k.slice(0, 8));
  return (
    <svg class="heatmap" viewBox={`0 0 ${w} ${h}`} width={w} height={h} role="img" aria-label={`${s.heatmap}: ${rows.length} × ${cols.length}`}>
      {cols.map((k, i) =>
        group === 'user' || i % 3 === 0 ? (
          <text x={lw + i * cw + cw / 2} y={12} text-anchor="middle" class="axis">
            {colLabel(k)}
          </text>
        ) : null,
      )}
      {rows.map((t, r) => {
        const by = new Map((t.buckets || []).map((b) => [b.key, b]));
        return (
          <g>
            <text x={lw - 6} y={18 + r * 18 + 13} text-anchor="end" class="axis">
              {t.tool.length > 20 ? t.tool.slice(0, 19) + '…' : t.tool}
            </text>
            {cols.map((k, i) => {
              const b = by.get(k);
              const v = b ? b.calls / max : 0;
              return (
                <rect x={lw + i * cw + 1} y={18 + r * 18 + 1} width={cw - 2} height={16} rx={2} class={b?.errors ? 'cell err' : 'cell'} fill-opacity={b ? 0.15 + 0.85 * v : 0.05}>
                  <title>{`${t.tool} · ${group === 'hour' ? new Date(k).toLocaleString() : k}: ${b?.calls ?? 0} ${s.calls}, ${b?.errors ?? 0} ${s.errors}`}</title>
                </rect>
              );
            })}
          </g>
        );
      })}
    </svg>
  );
}

export interface RunPoint {
  started_at?: string;
  created_at?: string;
  duration_ms: number;
}

/** Bars draws one value per hour of the last 24 as bars, labelled for screen readers. */
export function Bars({ s, label, values, unit }: { s: Strings; label: string; values: number[]; unit: string }) {
  const max = Math.max(1, ...values);
  const w = 24 * 14;
  const h = 80;
  return (
    <figure class="chart">
      <figcaption>
        {label} <span class="muted">({s.max} {Math.round(max)} {unit})</span>
      </figcaption>
      <svg viewBox={`0 0 ${w} ${h}`} width={w} height={h} role="img" aria-label={`${label}: ${values.map((v) => Math.round(v)).join(', ')}`}>
        <line x1={0} y1={h - 0.5} x2={w} y2={h - 0.5} class="axis-line" />
        {values.map((v, i) => (
          <rect x={i * 14 + 2} y={h - (v / max) * (h - 4)} width={10} height={(v / max) * (h - 4)} class="bar">
            <title>{`${Math.round(v)} ${unit}`}</title>
          </rect>
        ))}
      </svg>
    </figure>
  );
}

/** perHour folds runs into the last 24 hours: how many started, and the p95 of their durations. */
export function perHour(runs: RunPoint[]): { count: number[]; p95: number[] } {
  const hours = lastHours().map((k) => new Date(k).getTime());
  const durs: number[][] = hours.map(() => []);
  for (const r of runs) {
    const t = new Date(r.started_at || r.created_at || '').getTime();
    const i = hours.findIndex((h) => t >= h && t < h + 3600_000);
    if (i >= 0) durs[i].push(r.duration_ms);
  }
  return {
    count: durs.map((d) => d.length),
    p95: durs.map((d) => {
      if (!d.length) return 0;
      d.sort((a, b) => a - b);
      return d[Math.ceil(0.95 * d.length) - 1];
    }),
  };
}
