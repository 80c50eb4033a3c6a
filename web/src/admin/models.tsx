// Models: GET|POST /wunder/admin/llm. The list, and the section edited
// as JSON (every key of llm.models.<name> in configuration.md), saved
// with its revision; the server's validation shows with its key paths.
import { useEffect, useState } from 'preact/hooks';
import type { Strings } from '../i18n';
import { SectionEditor, useSection } from './config';

interface LLM {
  llm: { default: string; models: Record<string, { provider?: string; model?: string; base_url?: string; max_context?: number }> };
}

export function Models({ s }: { s: Strings }) {
  const sec = useSection<LLM>('/wunder/admin/llm', s);
  const [text, setText] = useState('');
  useEffect(() => {
    if (sec.data) setText(JSON.stringify({ default: sec.data.llm.default, models: sec.data.llm.models }, null, 2));
  }, [sec.data]);
  const save = () => {
    let llm: unknown;
    try {
      llm = JSON.parse(text);
    } catch (e) {
      sec.setProblem({ text: s.invalidJSON + ': ' + (e as Error).message, errors: [] });
      return;
    }
    sec.save({ llm } as Partial<LLM>);
  };
  const models = Object.entries(sec.data?.llm.models || {});
  return (
    <section aria-labelledby="models-h">
      <h2 id="models-h">{s.models}</h2>
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th>{s.name}</th>
              <th>{s.provider}</th>
              <th>{s.model}</th>
              <th>URL</th>
            </tr>
          </thead>
          <tbody>
            {models.map(([name, m]) => (
              <tr data-model={name}>
                <td>
                  {name}
                  {name === sec.data?.llm.default && <span class="badge"> {s.defaultModel}</span>}
                </td>
                <td>{m.provider}</td>
                <td>{m.model}</td>
                <td class="q">{m.base_url}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <SectionEditor s={s} section="llm" sec={sec} text={text} setText={setText} onSave={save} rows={14} />
    </section>
  );
}
