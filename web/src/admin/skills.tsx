// Skills (docs/tools.md#skills, docs/http.md): GET /wunder/admin/skills
// lists every user's skills; a switch each writes the enabled list
// (POST {"enabled"}); a ZIP goes to POST /wunder/admin/skills/upload
// (multipart, the field file); "View" shows SKILL.md
// (GET .../content?name=), its frontmatter as text and its body through
// the workspace's safe Markdown renderer; uploads can be deleted.
import { useEffect, useState } from 'preact/hooks';
import { api, apiForm } from '../api';
import type { Strings } from '../i18n';
import { ConfirmButton } from '../confirm';
import { Markdown } from '../markdown';
import { ProblemView, toProblem, type Problem } from './config';
import { AdminTable } from './table';

interface Skill {
  name: string;
  tool_name?: string;
  description: string;
  source: 'path' | 'upload';
  enabled: boolean;
  has_script?: boolean;
}
interface Content {
  name: string;
  path: string;
  content: string;
  files?: { path: string; size: number }[];
}
const q = encodeURIComponent;

/** splitFrontmatter parts SKILL.md into its YAML header and its Markdown body. */
function splitFrontmatter(text: string): [string, string] {
  const m = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
  return m ? [m[1], text.slice(m[0].length)] : ['', text];
}

export function Skills({ s }: { s: Strings }) {
  const [skills, setSkills] = useState<Skill[] | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [view, setView] = useState<Content | null>(null);
  const [status, setStatus] = useState('');
  const load = () =>
    api<{ skills: Skill[] }>('GET', '/wunder/admin/skills')
      .then((r) => setSkills(r.skills || []))
      .catch((e) => setProblem(toProblem(e, s)));
  useEffect(() => {
    load();
  }, []);
  const act = async (f: () => Promise<unknown>, done?: string) => {
    setProblem(null);
    setStatus('');
    try {
      await f();
      if (done) setStatus(done);
      await load();
    } catch (e) {
      setProblem(toProblem(e, s));
    }
  };
  const toggle = (x: Skill) => {
    const enabled = (skills || []).filter((y) => (y === x ? !y.enabled : y.enabled)).map((y) => y.name);
    act(() => api('POST', '/wunder/admin/skills', { enabled }));
  };
  const upload = (files: FileList | null) => {
    const f = files?.[0];
    if (!f) return;
    const form = new FormData();
    form.append('file', f);
    act(() => apiForm('/wunder/admin/skills/upload', form), s.uploaded + ': ' + f.name);
  };
  const open = (name: string) =>
    api<Content>('GET', '/wunder/admin/skills/content?name=' + q(name))
      .then(setView)
      .catch((e) => setProblem(toProblem(e, s)));
  const [front, body] = view ? splitFrontmatter(view.content) : ['', ''];
  return (
    <section aria-labelledby="skills-h">
      <h2 id="skills-h">{s.skills}</h2>
      <div class="row">
        <label class="button">
          {s.uploadSkill}
          <input
            type="file"
            name="skill-zip"
            accept=".zip,application/zip"
            class="sr-only"
            onChange={(e) => {
              const el = e.target as HTMLInputElement;
              upload(el.files);
              el.value = '';
            }}
          />
        </label>
      </div>
      {status && (
        <p class="status" role="status">
          {status}
        </p>
      )}
      <ProblemView p={problem} />
      <AdminTable s={s} heads={[s.name, s.source, s.description]} empty={skills?.length === 0}>
      {skills?.map((x) => (
        <tr data-skill={x.name}>
          <td>
            <label class="check">
              <input type="checkbox" checked={x.enabled} onChange={() => toggle(x)} aria-label={(x.enabled ? s.disable : s.enable) + ' ' + x.name} />
              <span>{x.name}</span>
            </label>
          </td>
          <td>
            {x.source === 'upload' ? s.sourceUpload : s.sourceFolder}
            {x.has_script && <span class="badge"> {s.script}</span>}
          </td>
          <td class="q">{x.description}</td>
          <td class="nowrap">
            <button type="button" class="small" aria-label={s.view + ' ' + x.name} onClick={() => open(x.name)}>
              {s.view}
            </button>{' '}
            {x.source === 'upload' && (
              <ConfirmButton
                s={s}
                small
                label={s.delete}
                what={x.name}
                onConfirm={() =>
                  act(() => api('DELETE', '/wunder/admin/skills?name=' + q(x.name))).then(() => {
                    if (view?.name === x.name) setView(null);
                  })
                }
              />
            )}
          </td>
        </tr>
      ))}
      </AdminTable>
      {view && (
        <article class="skill-view" aria-labelledby="skill-view-h">
          <h3 id="skill-view-h">
            {view.name}: {view.path}
          </h3>
          {front && <pre class="frontmatter">{front}</pre>}
          <Markdown source={body} />
          {view.files && view.files.length > 0 && (
            <p class="muted">
              {s.files}: {view.files.map((f) => f.path).join(', ')}
            </p>
          )}
        </article>
      )}
    </section>
  );
}
