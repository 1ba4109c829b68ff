import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useParams, useSearchParams } from 'react-router-dom';
import { answer, api } from '../api';
import { LoadState } from '../components/feedback';
import { PlainTable } from '../components/plain-table';
import { Timestamp } from '../components/time';
import { namesById, useChannels, useDevice, useGroups } from '../queries';
import type { AuditEvent } from '../types';
import { queryKeys } from '../query-keys';

const PAGE_SIZE = 50;

/** The resources whose actions the trail can be narrowed to (the API's `action` takes a resource for all its actions). */
const RESOURCES: Array<[string, string]> = [
  ['deployment', 'Deployments'],
  ['release', 'Releases'],
  ['artifact', 'Artifacts'],
  ['device', 'Devices'],
  ['device_token', 'Device tokens'],
  ['group', 'Groups'],
  ['channel', 'Channels'],
  ['token', 'Project tokens'],
  ['signing_key', 'Signing keys'],
  ['member', 'Members and roles'],
  ['webhook', 'Webhooks'],
  ['project', 'The project'],
];

/** "deployment.cancelled" as "Deployment cancelled". */
function actionWords(action: string): string {
  const text = action.replace('.', ' ').replaceAll('_', ' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The audit trail newest first, a page at a time (the API's `before` cursor), narrowed by resource in the URL. */
export function AuditPage() {
  const { projectId = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const action = params.get('action') ?? '';
  // The cursor of each page seen so far, so that "Newer" goes back exactly.
  const [cursors, setCursors] = useState<string[]>(['']);
  const before = cursors.at(-1) ?? '';
  const page = useQuery({
    queryKey: queryKeys.audit(projectId, action, before),
    queryFn: () => {
      const query = { limit: PAGE_SIZE, ...(before ? { before } : {}), ...(action ? { action } : {}) };
      return answer(api.GET('/api/v1/projects/{id}/audit/', { params: { path: { id: projectId }, query } }));
    },
  });
  const events = page.data ?? [];
  return (
    <>
      <h1>Audit trail</h1>
      <form className="filters" aria-label="Filter the audit trail" onSubmit={(event) => event.preventDefault()}>
        <label>
          Show
          <select
            value={action}
            onChange={(event) => {
              setCursors(['']);
              setParams(event.target.value ? { action: event.target.value } : {}, { replace: true });
            }}
          >
            <option value="">every action</option>
            {RESOURCES.map(([resource, label]) => (
              <option key={resource} value={resource}>
                {label}
              </option>
            ))}
          </select>
        </label>
      </form>
      <LoadState loading={page.isLoading} error={page.error} empty={events.length === 0 && 'No events on this page.'}>
        <PlainTable caption="Audit events" headers={['When', 'Action', 'By', 'Target', 'Details']}>
          {events.map((event) => (
            <tr key={event.id}>
              <td>
                <Timestamp at={event.created_at} />
              </td>
              <td title={event.action}>{actionWords(event.action)}</td>
              <td>
                <Actor event={event} />
              </td>
              <td>
                <Target projectId={projectId} event={event} />
              </td>
              <td>
                {/* What the target already names is not said again. */}
                <Details details={event.details} omit={event.target_type === 'member' ? ['email', 'group'] : event.target_type === 'token' ? ['name', 'prefix'] : []} />
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

/** How an actor signed in, in words (the audit's `actor_via`). */
const VIA_WORDS: Record<string, string> = {
  personal_token: 'personal token',
  console_session: 'console, with a personal token',
  sso_session: 'console, single sign-on',
  project_token: 'project token',
};

function Actor({ event }: { event: AuditEvent }) {
  const how = (
    <span className="muted" data-testid="actor-how">
      {event.actor_role ? ` as ${event.actor_role}` : ''}
      {event.actor_via ? ` · ${VIA_WORDS[event.actor_via] ?? event.actor_via}` : ''}
    </span>
  );
  if (event.actor_type === 'user')
    return (
      <span title={`token ${event.token_prefix}…`}>
        {event.actor_email ?? 'a deleted user'}
        {how}
      </span>
    );
  if (event.actor_type === 'project_token')
    return (
      <span>
        project token <code>{event.token_prefix}…</code>
        {how}
      </span>
    );
  return <span className="muted">the service itself</span>;
}

/** A detail that is text, or undefined. */
function textDetail(event: AuditEvent, key: string): string | undefined {
  const value = event.details[key];
  return typeof value === 'string' ? value : undefined;
}

/** The target as a link people can follow, named as they know it (a device by its device_id). */
function Target({ projectId, event }: { projectId: string; event: AuditEvent }) {
  const groups = useGroups(projectId);
  const channels = useChannels(projectId);
  const isDevice = event.target_type === 'device';
  const device = useDevice(projectId, event.target_id, isDevice);
  const base = `/projects/${projectId}`;
  switch (event.target_type) {
    case 'device':
      if (device.isLoading) return <span className="muted">a device…</span>;
      return device.data ? <Link to={`${base}/devices/${event.target_id}`}>device {device.data.device_id}</Link> : <span className="muted">a deleted device</span>;
    case 'deployment':
      return <Link to={`${base}/deployments/${event.target_id}`}>a deployment</Link>;
    case 'group': {
      const name = namesById(groups.data).get(event.target_id);
      return name ? <Link to={`${base}/groups/${event.target_id}`}>group {name}</Link> : <span className="muted">a deleted group</span>;
    }
    case 'channel':
      return <span>channel {namesById(channels.data).get(event.target_id) ?? <span className="muted">(deleted)</span>}</span>;
    case 'artifact':
      return <Link to={`${base}/artifacts`}>a build</Link>;
    case 'member': {
      // A person by their e-mail, a group by its name: what the Members page shows.
      const who = textDetail(event, 'email') ?? (textDetail(event, 'group') ? `group “${textDetail(event, 'group')}”` : undefined);
      return <Link to={`${base}/members`}>{who ?? 'a member'}</Link>;
    }
    case 'token': {
      const name = textDetail(event, 'name');
      const prefix = textDetail(event, 'prefix');
      return (
        <Link to={`${base}/tokens`}>
          token {name ?? ''} {prefix && <code>{prefix}…</code>}
        </Link>
      );
    }
    default:
      return <span>{event.target_type.replaceAll('_', ' ')}</span>;
  }
}

/** The event's details as "key: value" lines; nested values stay JSON. */
function Details({ details, omit }: { details: Record<string, unknown>; omit: readonly string[] }) {
  const entries = Object.entries(details).filter(([key, value]) => value !== undefined && value !== null && !omit.includes(key));
  if (entries.length === 0) return null;
  return (
    <dl className="details">
      {entries.map(([key, value]) => (
        <div key={key}>
          <dt>{key.replaceAll('_', ' ')}</dt>
          <dd>{Array.isArray(value) ? <ListValue items={value} /> : typeof value === 'object' ? <code>{JSON.stringify(value)}</code> : String(value)}</dd>
        </div>
      ))}
    </dl>
  );
}

/** A list in a detail (the device ids of a bulk change, up to 1000): how many, and the first few. */
const LIST_SHOWN = 5;
function ListValue({ items }: { items: unknown[] }) {
  if (items.length === 0) return <span className="muted">none</span>;
  const shown = items.slice(0, LIST_SHOWN).map((item) => (typeof item === 'string' ? item : JSON.stringify(item)));
  return (
    <span title={items.length > LIST_SHOWN ? `${items.length} in all` : undefined}>
      {items.length > LIST_SHOWN && `${items.length}: `}
      <code>{shown.join(', ')}</code>
      {items.length > LIST_SHOWN && <span className="muted"> and {items.length - LIST_SHOWN} more</span>}
    </span>
  );
}
