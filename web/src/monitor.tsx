// The monitor (admins): live runs from GET /wunder/admin/monitor with the
// tool each is in and a cancel button, and the tool-usage table of the
// last 24 hours (docs/monitor.md). Polled every two seconds.
import { useEffect, useState } from 'preact/hooks';
import { api } from './api';
import { lang, strings } from './i18n';
import { useSignal } from './state';
import { Bars, Heatmap, perHour, SystemView, type RunPoint, type System, type UsageBuckets } from './monitorviews';

interface MonitorRun {
  run_id: string;
  session_id: string;
  user_id: string;
  state: string;
  question: string;
  current_tool: string;
  duration_ms: number;
}
interface ToolUsage {
  tool: string;
  calls: number;
  errors: number;
  p50_ms: number;
  p95_ms: number;
  users: number;
}

export function Monitor() {
  const s = strings(useSignal(lang));
  const [runs, setRuns] = useState<MonitorRun[] | null>(null);
  const [usage, setUsage] = useState<ToolUsage[] | null>(null);
  const [err, setErr] = useState('');
  const [sys, setSys] = useState<System | null>(null);
  const [group, setGroup] = useState<'hour' | 'user'>('hour');
  const [heat, setHeat] = useState<UsageBuckets[] | null>(null);
  const [day, setDay] = useState<RunPoint[] | null>(null);
  // the heavier pictures: every 15 s, and when the grouping changes
  const loadPictures = async () => {
    try {
      const [h, d] = await Promise.all([
        api<{ tools: UsageBuckets[] }>('GET', '/wunder/admin/monitor/tool_usage?group=' + group),
        api<{ runs: RunPoint[] }>('GET', '/wunder/admin/monitor?since=24h&limit=500'),
      ]);
      setHeat(h.tools);
      setDay(d.runs);
    } catch (e) {
      setErr((e as Error).message);
    }
  };
  useEffect(() => {
    loadPictures();
    const id = setInterval(loadPictures, 15000);
    return () => clearInterval(id);
  }, [group]);
  // a tool seen for the first time (the usage table polls faster): redraw the pictures now
  const seen = usage?.length ?? 0;
  useEffect(() => {
    if (seen) loadPictures();
  }, [seen]);
  const load = async () => {
    try {
      const [r, u, y] = await Promise.all([
        api<{ runs: MonitorRun[] }>('GET', '/wunder/admin/monitor?state=queued,running,waiting_approval,waiting_input,cancelling'),
        api<{ tools: ToolUsage[] }>('GET', '/wunder/admin/monitor/tool_usage'),
        api<System>('GET', '/wunder/admin/monitor/system'),
      ]);
      setRuns(r.runs);
      setUsage(u.tools);
      setSys(y);
      setErr('');
    } catch (e) {
      setErr((e as Error).message);
    }
  };
  useEffect(() => {
    load();
    const id = setInterval(load, 2000);
    return () => clearInterval(id);
  }, []);
  const cancel = async (sessionId: string) => {
    await api('POST', `/wunder/admin/monitor/${encodeURIComponent(sessionId)}/cancel`).catch((e) => setErr(e.message));
    load();
  };

  return (
    <div class="monitor">
      <div class="row">
        <h1>{s.monitor}</h1>
        <button type="button" class="ghost" onClick={() => (load(), loadPictures())}>
          {s.refresh}
        </button>
      </div>
      {err && (
        <p class="error" role="alert">
          {err}
        </p>
      )}
      <section aria-labelledby="system-h">
        <h2 id="system-h">{s.system}</h2>
        {sys && <SystemView s={s} sys={sys} />}
      </section>
      <h2>{s.liveRuns}</h2>
      {runs && runs.length === 0 && <p class="muted">{s.noRuns}</p>}
      {runs && runs.length > 0 && (
        <div class="table-wrap">
          <table class="runs">
            <thead>
              <tr>
                <th scope="col">{s.user}</th>
                <th scope="col">{s.state}</th>
                <th scope="col">{s.currentTool}</th>
                <th scope="col">{s.duration}</th>
                <th scope="col">{s.question}</th>
                <th scope="col">
                  <span class="sr-only">{s.cancel}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {runs.map((r) => (
                <tr data-run-id={r.run_id}>
                  <td>{r.user_id}</td>
                  <td>
                    <span class={'badge ' + r.state}>{r.state}</span>
                  </td>
                  <td>
                    <code>{r.current_tool || '—'}</code>
                  </td>
                  <td>{(r.duration_ms / 1000).toFixed(1)} s</td>
                  <td class="q" title={r.question}>
                    {r.question}
                  </td>
                  <td>
                    <button type="button" class="danger small" aria-label={`${s.cancel} ${r.run_id}`} onClick={() => cancel(r.session_id)}>
                      {s.cancel}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h2>{s.toolUsage}</h2>
      {usage && usage.length === 0 && <p class="muted">{s.noToolUsage}</p>}
      {usage && usage.length > 0 && (
        <div class="table-wrap">
          <table class="usage">
            <thead>
              <tr>
                <th scope="col">{s.tool}</th>
                <th scope="col">{s.calls}</th>
                <th scope="col">{s.errors}</th>
                <th scope="col">p50 ({s.ms})</th>
                <th scope="col">p95 ({s.ms})</th>
                <th scope="col">{s.users}</th>
              </tr>
            </thead>
            <tbody>
              {usage.map((u) => (
                <tr>
                  <td>
                    <code>{u.tool}</code>
                  </td>
                  <td>{u.calls}</td>
                  <td>{u.errors}</td>
                  <td>{u.p50_ms}</td>
                  <td>{u.p95_ms}</td>
                  <td>{u.users}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <section aria-labelledby="heat-h">
        <div class="row">
          <h2 id="heat-h">{s.heatmap}</h2>
          <label class="inline">
            <span class="sr-only">{s.heatmap}</span>
            <select value={group} onChange={(e) => setGroup((e.target as HTMLSelectElement).value as 'hour' | 'user')}>
              <option value="hour">{s.byHour}</option>
              <option value="user">{s.byUser}</option>
            </select>
          </label>
        </div>
        <div class="table-wrap">{heat && heat.length > 0 ? <Heatmap s={s} tools={heat} group={group} /> : <p class="muted">{s.noToolUsage}</p>}</div>
      </section>
      {day && (
        <div class="charts">
          <Bars s={s} label={s.runRate} values={perHour(day).count} unit="" />
          <Bars s={s} label={s.latency} values={perHour(day).p95} unit={s.ms} />
        </div>
      )}
    </div>
  );
}
