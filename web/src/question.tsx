// The model's question to the user (ask_user, docs/http.md#questions-ask_user):
// a card in the chat, its options as buttons (a multiple choice as
// checkboxes), a free-text field where the question takes one, answered
// with POST /wunder/runs/{run_id}/input. Decline lets the model go on
// without an answer; Stop ends the run.
import { useState } from 'preact/hooks';
import { api, withUser } from './api';
import type { Strings } from './i18n';
import type { Question, RunView } from './run';

interface Props {
  s: Strings;
  run: RunView;
  onError: (e: string) => void;
  /** onDecided is called once the server took the answer (the pending list reloads) */
  onDecided?: () => void;
}

/** QuestionCard shows the run's first pending question. */
export function QuestionCard(p: Props) {
  const q = p.run.questions[0];
  return q ? <Card {...p} q={q} key={q.question_id} /> : null;
}

function Card({ s, run, onError, onDecided, q }: Props & { q: Question }) {
  const [text, setText] = useState('');
  const [picked, setPicked] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const options = q.options ?? [];
  const open = q.free_text || options.length === 0;
  const base = `/wunder/runs/${encodeURIComponent(run.runId)}`;

  const post = async (path: string, body: Record<string, unknown>) => {
    setBusy(true);
    try {
      await api('POST', withUser(base + path), body);
      // user_input_answered (or the final event) removes it from run.questions
      onDecided?.();
    } catch (e) {
      onError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const answer = (a: string | string[]) => post('/input', { question_id: q.question_id, answer: a });
  const decide = (decision: string) => post(`/approvals/${encodeURIComponent(q.question_id)}`, { decision });
  const toggle = (o: string) => setPicked(picked.includes(o) ? picked.filter((x) => x !== o) : [...picked, o]);

  return (
    <section class="question" aria-labelledby={`q-${q.question_id}`} data-question={q.question_id}>
      <h3 id={`q-${q.question_id}`}>{s.questionTitle}</h3>
      <p class="question-text">{q.question}</p>
      {options.length > 0 && !q.multi && (
        <div class="options" role="group" aria-label={s.questionOptions}>
          {options.map((o) => (
            <button type="button" class="option" disabled={busy} onClick={() => answer(o)}>
              {o}
            </button>
          ))}
        </div>
      )}
      {options.length > 0 && q.multi && (
        <fieldset class="options">
          <legend>{s.questionPickSeveral}</legend>
          {options.map((o) => (
            <label>
              <input type="checkbox" checked={picked.includes(o)} onChange={() => toggle(o)} /> {o}
            </label>
          ))}
          <button type="button" class="primary" disabled={busy || picked.length === 0} onClick={() => answer(picked)}>
            {s.questionSend}
          </button>
        </fieldset>
      )}
      {open && (
        <form
          class="free"
          onSubmit={(e) => {
            e.preventDefault();
            if (text.trim()) answer(q.multi ? [...picked, text.trim()] : text.trim());
          }}
        >
          <input aria-label={s.questionYourAnswer} placeholder={s.questionYourAnswer} value={text} onInput={(e) => setText((e.target as HTMLInputElement).value)} />
          <button type="submit" class="primary" disabled={busy || !text.trim()}>
            {s.questionSend}
          </button>
        </form>
      )}
      <div class="actions">
        <button type="button" class="ghost small" disabled={busy} onClick={() => decide('decline')}>
          {s.questionDecline}
        </button>
        <button type="button" class="danger small" disabled={busy} onClick={() => decide('cancel')}>
          {s.cancelRun}
        </button>
      </div>
    </section>
  );
}
