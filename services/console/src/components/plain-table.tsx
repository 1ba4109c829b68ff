import type { ReactNode } from 'react';

/**
 * A table of the few rows a page shows at once (no sorting or paging in the browser; DataTable is
 * for long lists), with a caption for screen readers.
 */
export function PlainTable({ caption, headers, children }: { caption: string; headers: string[]; children: ReactNode }) {
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {headers.map((header) => (
              <th key={header} scope="col">
                {header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
