// The table every admin tab lists its objects in: its headings, a last
// column for the row's actions (named for screen readers), and a row that
// says "none" when empty is set.

import type { ComponentChildren } from 'preact';
import type { Strings } from '../i18n';

export function AdminTable({ s, heads, empty, children }: { s: Strings; heads: string[]; empty: boolean; children: ComponentChildren }) {
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            {heads.map((h) => (
              <th>{h}</th>
            ))}
            <th>
              <span class="sr-only">{s.actions}</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {empty && (
            <tr>
              <td colSpan={heads.length + 1} class="muted">
                {s.none}
              </td>
            </tr>
          )}
          {children}
        </tbody>
      </table>
    </div>
  );
}
