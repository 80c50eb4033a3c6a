// The extra prompt (docs/tools.md#user-tools-and-shared-tools): GET and
// POST /wunder/user_tools/extra_prompt; "" removes it. It goes into the
// system prompt of the user's own runs only.
import { useEffect, useState } from 'preact/hooks';
import { api, withUser } from '../api';
import type { Strings } from '../i18n';
import { ProblemView, Saved, toProblem, type Problem } from '../admin/config';
import { withMe } from './user';

const PATH = '/wunder/user_tools/extra_prompt';

export function ExtraPrompt({ s }: { s: Strings }) {
  const [text, setText] = useState<string | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [saved, setSaved] = useState(false);
  useEffect(() => {
    api<{ extra_prompt: string }>('GET', withUser(PATH))
      .then((r) => setText(r.extra_prompt || ''))
      .catch((e) => setProblem(toProblem(e, s)));
  }, []);
  const save = async (e: Event) => {
    e.preventDefault();
    setProblem(null);
    setSaved(false);
    try {
      const r = await api<{ extra_prompt: string }>('POST', PATH, withMe({ extra_prompt: text || '' }));
      setText(r.extra_prompt || '');
      setSaved(true);
    } catch (x) {
      setProblem(toProblem(x, s));
    }
  };
  return (
    <form class="extra-prompt" onSubmit={save} aria-labelledby="prompt-h">
      <h2 id="prompt-h">{s.extraPrompt}</h2>
      <p class="muted">{s.extraPromptHint}</p>
      <label>
        <span class="sr-only">{s.extraPrompt}</span>
        <textarea name="extra-prompt" rows={8} disabled={text === null} value={text ?? ''} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} />
      </label>
      <ProblemView p={problem} />
      <Saved s={s} on={saved} />
      <div class="actions">
        <button type="submit" class="primary" disabled={text === null}>
          {s.save}
        </button>
      </div>
    </form>
  );
}
