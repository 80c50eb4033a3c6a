// Skills (docs/tools.md#skills, docs/http.md), the admin's and a user's
// own. The admin's: GET /wunder/admin/skills lists every user's skills, a
// switch each writes the enabled list (POST {"enabled"}). A user's ("My
// tools", user): GET /wunder/user_tools/skills lists their own uploads,
// the switches write their enabled and shared lists (POST {"enabled",
// "shared"}; shared ⊆ enabled), each skill shared showing the name others
// see (owner@skill). Both: a ZIP goes to .../skills/upload (multipart,
// the field file); "View" shows SKILL.md (GET .../content?name=), its
// frontmatter as text and its body through the workspace's safe Markdown
// renderer; uploads can be deleted.
import { useEffect, useState } from 'preact/hooks';
import { api, apiForm, withUser } from '../api';
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
  /** a user's own skill, offered to every other user */
  shared?: boolean;
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

/**
 * skillRoutes are the routes of the admin's skills, or (user) of the
 * user's own, naming the user the console shows.
 */
function skillRoutes(user?: boolean) {
  return user ? (p: string) => withUser('/wunder/user_tools/skills' + p) : (p: string) => '/wunder/admin/skills' + p;
}

export function Skills({ s, user }: { s: Strings; user?: boolean }) {
  const at = skillRoutes(user);
  const [skills, setSkills] = useState<Skill[] | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [view, setView] = useState<Content | null>(null);
  const [status, setStatus] = useState('');
  const load = () =>
    api<{ skills: Skill[] }>('GET', at(''))
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
    const all = skills || [];
    const enabled = all.filter((y) => (y === x ? !y.enabled : y.enabled)).map((y) => y.name);
    if (!user) return act(() => api('POST', at(''), { enabled }));
    // a skill switched off stops being shared (shared ⊆ enabled)
    const shared = all.filter((y) => y.shared && enabled.includes(y.name)).map((y) => y.name);
    return act(() => api('POST', at(''), { enabled, shared }));
  };
  const share = (x: Skill) => {
    const shared = (skills || []).filter((y) => (y === x ? !y.shared : y.shared)).map((y) => y.name);
    return act(() => api('POST', at(''), { shared }));
  };
  const upload = (files: FileList | null) => {
    const f = files?.[0];
    if (!f) return;
    const form = new FormData();
    form.append('file', f);
    act(() => apiForm(at('/upload'), form), s.uploaded + ': ' + f.name);
  };
  const open = (name: string) =>
    api<Content>('GET', at('/content?name=' + q(name)))
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
      <AdminTable s={s} heads={user ? [s.name, s.sharedHead, s.description] : [s.name, s.source, s.description]} empty={skills?.length === 0}>
      {skills?.map((x) => (
        <tr data-skill={x.name}>
          <td>
            <label class="check">
              <input type="checkbox" name="skill-enabled" checked={x.enabled} onChange={() => toggle(x)} aria-label={(x.enabled ? s.disable : s.enable) + ' ' + x.name} />
              <span>{x.name}</span>
            </label>
          </td>
          {user ? (
            <td>
              <label class="check">
                <input type="checkbox" name="skill-shared" checked={!!x.shared} disabled={!x.enabled} onChange={() => share(x)} aria-label={s.shareWithOthers + ' ' + x.name} />
                <span>{x.shared ? x.tool_name : s.notShared}</span>
              </label>
            </td>
          ) : (
            <td>
              {x.source === 'upload' ? s.sourceUpload : s.sourceFolder}
              {x.has_script && <span class="badge"> {s.script}</span>}
            </td>
          )}
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
                  act(() => api('DELETE', at('?name=' + q(x.name)))).then(() => {
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
