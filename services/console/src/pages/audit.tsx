import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useParams } from 'react-router-dom';
import { get } from '../api';
import { LoadState } from '../components/feedback';
import { PlainTable } from '../components/plain-table';
import { RelativeTime } from '../components/time';
import { projectPath } from '../queries';
import type { AuditEvent } from '../types';

const PAGE_SIZE = 50;

/** The audit trail newest first, a page at a time (the API's `before` cursor). */
export function AuditPage() {
  const { projectId = '' } = useParams();
  // The cursor of each page seen so far, so that "Newer" goes back exactly.
  const [cursors, setCursors] = useState<string[]>(['']);
  const before = cursors.at(-1) ?? '';
  const page = useQuery({
    queryKey: ['audit', projectId, before],
    queryFn: () => get<AuditEvent[]>(`${projectPath(projectId)}/audit/?limit=${PAGE_SIZE}${before ? `&before=${before}` : ''}`),
  });
  const events = page.data ?? [];
  return (
    <>
      <h1>Audit trail</h1>
      <LoadState loading={page.isLoading} error={page.error} empty={events.length === 0 && 'No events on this page.'}>
        <PlainTable caption="Audit events" headers={['When', 'Action', 'By', 'Target', 'Details']}>
          {events.map((event) => (
            <tr key={event.id}>
              <td>
                <RelativeTime at={event.created_at} />
              </td>
              <td>{event.action}</td>
              <td>
                {event.actor_type} <code>{event.token_prefix}</code>
              </td>
              <td>
                {event.target_type} <span className="hash">{event.target_id.slice(0, 8)}</span>
              </td>
              <td>
                <code className="detail">{Object.keys(event.details).length ? JSON.stringify(event.details) : ''}</code>
              </td>
            </tr>
          ))}
        </PlainTable>
      </LoadState>
      <nav className="pager" aria-label="Audit pages">
        <button type="button" disabled={cursors.length === 1} onClick={() => setCursors(cursors.slice(0, -1))}>
          Newer
        </button>
        <span>Page {cursors.length}</span>
        <button type="button" disabled={events.length < PAGE_SIZE} onClick={() => setCursors([...cursors, events.at(-1)!.id])}>
          Older
        </button>
      </nav>
    </>
  );
}
