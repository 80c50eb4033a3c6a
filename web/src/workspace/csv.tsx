// A .csv file as a table: RFC 4180 fields (quoted, with "" for a quote and
// line breaks inside quotes), the first row as the header. At most ROWS
// rows are shown, and the table says how many more there are.
import type { Strings } from '../i18n';

export const ROWS = 1000;

/** parseCSV splits text into rows of fields; sep is ',' or, for a .tsv, a tab. */
export function parseCSV(text: string, sep = ','): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === sep) {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

export function CSVTable({ s, text, sep }: { s: Strings; text: string; sep?: string }) {
  const rows = parseCSV(text, sep);
  if (!rows.length) return <p class="muted">{s.emptyFile}</p>;
  const [head, ...body] = rows;
  return (
    <div class="table-wrap">
      <table class="csv">
        <thead>
          <tr>
            {head.map((h) => (
              <th>{h}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {body.slice(0, ROWS).map((r) => (
            <tr>
              {r.map((c) => (
                <td>{c}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {body.length > ROWS && <p class="muted">{s.moreRows.replace('{n}', String(body.length - ROWS))}</p>}
    </div>
  );
}
