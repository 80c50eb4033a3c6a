// A2A services: GET|POST /wunder/admin/a2a (list, add, remove) and
// "fetch card": POST /wunder/admin/a2a/card shows the peer's card.
import { useState } from 'preact/hooks';
import { api } from '../api';
import type { Strings } from '../i18n';
import { ProblemView, Saved, toProblem, useSection, type Problem } from './config';
import { AdminTable } from './table';

interface Service {
  name: string;
  endpoint: string;
  enabled?: boolean;
}
interface Card {
  url: string;
  card: unknown;
  summary: { name: string; description: string; streaming: boolean; skills: unknown[]; interfaces: { url: string; transport: string }[] };
}

export function A2A({ s }: { s: Strings }) {
  const sec = useSection<{ services: Service[] }>('/wunder/admin/a2a', s);
  const [card, setCard] = useState<Card | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [name, setName] = useState('');
  const [endpoint, setEndpoint] = useState('');
  const services = sec.data?.services || [];
  const fetchCard = async (body: Record<string, string>) => {
    setProblem(null);
    setCard(null);
    try {
      setCard(await api<Card>('POST', '/wunder/admin/a2a/card', body));
    } catch (e) {
      setProblem(toProblem(e, s));
    }
  };
  return (
    <section aria-labelledby="a2a-h">
      <h2 id="a2a-h">{s.a2aServices}</h2>
      <AdminTable s={s} heads={[s.name, s.endpoint]} empty={services.length === 0}>
      {services.map((x) => (
        <tr data-service={x.name}>
          <td>{x.name}</td>
          <td class="q">{x.endpoint}</td>
          <td class="nowrap">
            <button type="button" class="small" onClick={() => fetchCard({ name: x.name })}>
              {s.fetchCard}
            </button>{' '}
            <button type="button" class="small danger" aria-label={s.remove + ' ' + x.name} onClick={() => sec.save({ services: services.filter((y) => y !== x) })}>
              {s.remove}
            </button>
          </td>
        </tr>
      ))}
      </AdminTable>
      <ProblemView p={sec.problem || problem} />
      <Saved s={s} on={sec.saved} />
      {card && (
        <div class="card-view">
          <h3>
            {card.summary.name} <span class="muted">{card.url}</span>
          </h3>
          <p>{card.summary.description}</p>
          <p class="muted">
            {s.skills}: {card.summary.skills?.length ?? 0} · {s.streaming}: {card.summary.streaming ? s.yes : s.no}
          </p>
          <details>
            <summary>{s.card}</summary>
            <pre>{JSON.stringify(card.card, null, 2)}</pre>
          </details>
        </div>
      )}
      <form
        class="add-form"
        aria-labelledby="a2a-add-h"
        onSubmit={async (e) => {
          e.preventDefault();
          if (await sec.save({ services: [...services, { name: name.trim(), endpoint: endpoint.trim() }] })) {
            setName('');
            setEndpoint('');
          }
        }}
      >
        <h3 id="a2a-add-h">{s.addService}</h3>
        <label>
          {s.name}
          <input required value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          {s.endpoint}
          <input required type="url" value={endpoint} onInput={(e) => setEndpoint((e.target as HTMLInputElement).value)} />
        </label>
        <div class="actions">
          <button type="submit" class="primary">
            {s.add}
          </button>
          <button type="button" disabled={!endpoint.trim()} onClick={() => fetchCard({ endpoint: endpoint.trim() })}>
            {s.fetchCard}
          </button>
        </div>
      </form>
    </section>
  );
}
