// Shared pieces of the admin pages: a configuration section read with its
// revision and written back with it (docs/admin.md: a stale revision is
// 409 stale_revision, shown and reloaded), and the server's own problem
// messages, each with its key path.
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from '../api';
import type { Strings } from '../i18n';

export interface Problem {
  text: string;
  errors: { key: string; message: string }[];
}

export function toProblem(e: unknown, s: Strings): Problem {
  if (e instanceof ApiError) {
    if (e.code === 'stale_revision') return { text: s.stale, errors: [] };
    return { text: e.errors.length ? e.code : `${e.code}: ${e.message}`, errors: e.errors };
  }
  return { text: String((e as Error)?.message ?? e), errors: [] };
}

export function ProblemView({ p }: { p: Problem | null }) {
  if (!p) return null;
  return (
    <div class="error" role="alert">
      <p>{p.text}</p>
      {p.errors.length > 0 && (
        <ul class="problems">
          {p.errors.map((x) => (
            <li>
              <code>{x.key}</code>: {x.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** useSection reads GET path; save posts the section with the revision read. */
export function useSection<T>(path: string, s: Strings) {
  const [data, setData] = useState<(T & { revision: number }) | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [saved, setSaved] = useState(false);
  const load = () =>
    api<T & { revision: number }>('GET', path)
      .then((d) => setData(d))
      .catch((e) => setProblem(toProblem(e, s)));
  useEffect(() => {
    load();
  }, [path]);
  const save = async (section: Partial<T>): Promise<boolean> => {
    setProblem(null);
    setSaved(false);
    try {
      const d = await api<T & { revision: number }>('POST', path, { ...section, revision: data?.revision });
      setData(d);
      setSaved(true);
      return true;
    } catch (e) {
      setProblem(toProblem(e, s));
      if (e instanceof ApiError && e.status === 409) load();
      return false;
    }
  };
  return { data, problem, setProblem, saved, load, save };
}

export function Saved({ s, on }: { s: Strings; on: boolean }) {
  return on ? (
    <p class="status" role="status">
      {s.saved}
    </p>
  ) : null;
}

/**
 * SectionEditor edits a configuration section as JSON: the text with the
 * revision it was read at, the server's problems (key paths) or "saved",
 * and save / reload.
 */
export function SectionEditor({
  s,
  section,
  sec,
  text,
  setText,
  onSave,
  rows,
  name,
}: {
  s: Strings;
  section: string;
  sec: { data: { revision: number } | null; problem: Problem | null; saved: boolean; load: () => void };
  text: string;
  setText: (t: string) => void;
  onSave: () => void;
  rows: number;
  name?: string;
}) {
  return (
    <>
      <label>
        {s.editSection} <code>{section}</code> ({s.revision} {sec.data?.revision ?? '…'})
        <textarea class="mono" name={name} rows={rows} value={text} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} />
      </label>
      <ProblemView p={sec.problem} />
      <Saved s={s} on={sec.saved} />
      <div class="actions">
        <button type="button" class="primary" onClick={onSave}>
          {s.save}
        </button>
        <button type="button" onClick={sec.load}>
          {s.reload}
        </button>
      </div>
    </>
  );
}
