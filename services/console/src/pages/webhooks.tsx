import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useParams } from 'react-router-dom';
import type { operations } from '../../generated/api';
import { answer, api } from '../api';
import { BusyButton, ConfirmDialog, ErrorNote, LoadState, ShownOnce } from '../components/feedback';
import { PlainTable } from '../components/plain-table';
import { Timestamp } from '../components/time';
import type { Webhook, WebhookDelivery } from '../types';
import { ReadOnlyNote, RoleFieldset } from '../project-access';
import { queryKeys } from '../query-keys';

type EventKind = operations['createWebhook']['requestBody']['content']['application/json']['events'][number];

/** Every kind a webhook may subscribe to, with words; a Record, so a kind the API adds must be listed here. */
const EVENT_WORDS: Record<EventKind, string> = {
  'deployment.created': 'a deployment is created',
  'deployment.started': 'a deployment starts',
  'deployment.paused': 'a deployment pauses (by a person or a guardrail)',
  'deployment.resumed': 'a deployment resumes',
  'deployment.ramped': 'a deployment’s percentage changes',
  'deployment.completed': 'a deployment is completed',
  'deployment.cancelled': 'a deployment is cancelled',
  'deployment.guardrail_tripped': 'a guardrail pauses a deployment',
  'deployment.stage_advanced': 'a staged plan moves to its next stage',
  'deployment.secure_version_raised': 'a deployment or release of a build that raises secure_version (burns eFuse bits) is made',
  'artifact.uploaded': 'a build is uploaded',
  'artifact.archived': 'a build is archived',
  'release.created': 'a release is made (upload, deployment and start in one)',
};
const EVENT_KINDS = Object.keys(EVENT_WORDS) as EventKind[];

export function WebhooksPage() {
  const { projectId = '' } = useParams();
  const queryClient = useQueryClient();
  const webhooks = useQuery({ queryKey: queryKeys.webhooks(projectId), queryFn: () => answer(api.GET('/api/v1/projects/{id}/webhooks/', { params: { path: { id: projectId } } })) });
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<EventKind[]>(['deployment.paused', 'deployment.guardrail_tripped']);
  const [secret, setSecret] = useState('');
  const [deleting, setDeleting] = useState<Webhook | null>(null);
  const [open, setOpen] = useState('');
  const refresh = () => queryClient.invalidateQueries({ queryKey: queryKeys.webhooks(projectId) });
  const create = useMutation({
    mutationFn: () => answer(api.POST('/api/v1/projects/{id}/webhooks/', { params: { path: { id: projectId } }, body: { url: url.trim(), events } })),
    onSuccess: (created) => {
      setSecret(created.secret);
      setUrl('');
      return refresh();
    },
  });
  return (
    <>
      <h1>Webhooks</h1>
      <p className="muted">
        The service POSTs each event to the URL, signed with the webhook’s secret (header <code>OTA-Signature</code>), and retries until the receiver answers 2xx or the
        retry window ends.
      </p>
      <ReadOnlyNote projectId={projectId} />
      <LoadState loading={webhooks.isLoading} error={webhooks.error} empty={webhooks.data?.length === 0 && 'No webhooks yet.'}>
        <ul className="plain">
          {webhooks.data?.map((webhook) => (
            <li key={webhook.id} className="webhook" data-testid="webhook">
              <code className="url">{webhook.url}</code>
              <div className="muted small-text">
                {webhook.events.join(', ')} · created <Timestamp at={webhook.created_at} />
              </div>
              <div className="row">
                <button type="button" className="small" aria-expanded={open === webhook.id} onClick={() => setOpen(open === webhook.id ? '' : webhook.id)}>
                  {open === webhook.id ? 'Hide deliveries' : 'Deliveries'}
                </button>
                <RoleFieldset projectId={projectId} inline>
                  <button type="button" className="small danger" aria-label={`Delete webhook ${webhook.url}`} onClick={() => setDeleting(webhook)}>
                    Delete…
                  </button>
                </RoleFieldset>
              </div>
              {open === webhook.id && <Deliveries projectId={projectId} webhookId={webhook.id} />}
            </li>
          ))}
        </ul>
      </LoadState>
      {secret && <ShownOnce label="The webhook's signing secret." secret={secret} onDismiss={() => setSecret('')} />}
      <RoleFieldset projectId={projectId}>
        <section aria-labelledby="new-webhook">
          <h2 id="new-webhook">New webhook</h2>
          <form
            className="grid"
            onSubmit={(event) => {
              event.preventDefault();
              create.mutate();
            }}
          >
            <label className="wide">
              Receiver URL
              <input type="url" required maxLength={2048} value={url} onChange={(event) => setUrl(event.target.value)} placeholder="https://hooks.example.com/ota" />
            </label>
            <fieldset className="wide">
              <legend>Send these events</legend>
              {EVENT_KINDS.map((kind) => (
                <label key={kind} className="check">
                  <input type="checkbox" checked={events.includes(kind)} onChange={() => setEvents(events.includes(kind) ? events.filter((other) => other !== kind) : [...events, kind])} />{' '}
                  {EVENT_WORDS[kind]} <code className="muted">{kind}</code>
                </label>
              ))}
            </fieldset>
            <div className="wide">
              <BusyButton type="submit" className="primary" busy={create.isPending} disabled={events.length === 0}>
                Create webhook
              </BusyButton>
              {events.length === 0 && <span className="muted"> Choose at least one event.</span>}
            </div>
          </form>
          <ErrorNote error={create.error} />
        </section>
      </RoleFieldset>
      <ConfirmDialog
        open={deleting !== null}
        title="Delete this webhook?"
        confirmLabel="Delete webhook"
        danger
        onClose={() => setDeleting(null)}
        onConfirm={async () => {
          await answer(api.DELETE('/api/v1/projects/{id}/webhooks/{wid}/', { params: { path: { id: projectId, wid: deleting!.id } } }));
          await refresh();
        }}
      >
        <p>
          <code>{deleting?.url}</code> gets no more events, and deliveries still being retried stop.
        </p>
      </ConfirmDialog>
    </>
  );
}

const DELIVERY_WORDS: Record<WebhookDelivery['state'], string> = { pending: 'retrying', delivered: 'delivered', failed: 'given up' };

/** A webhook's delivery log, newest first, refreshed while it is open. */
function Deliveries({ projectId, webhookId }: { projectId: string; webhookId: string }) {
  const deliveries = useQuery({
    queryKey: queryKeys.deliveries(webhookId),
    queryFn: () => answer(api.GET('/api/v1/projects/{id}/webhooks/{wid}/deliveries/', { params: { path: { id: projectId, wid: webhookId } } })),
    refetchInterval: 5_000,
  });
  return (
    <LoadState loading={deliveries.isLoading} error={deliveries.error} empty={deliveries.data?.length === 0 && 'Nothing sent yet.'}>
      <PlainTable caption="Deliveries" headers={['Event', 'State', 'Attempts', 'Last answer', 'Next attempt', 'Created']}>
        {deliveries.data?.map((delivery) => {
          const last = delivery.attempts.at(-1);
          return (
            <tr key={delivery.id} data-testid="delivery">
              <td>{delivery.event}</td>
              <td className={`delivery-${delivery.state}`}>{DELIVERY_WORDS[delivery.state]}</td>
              <td>{delivery.attempts.length}</td>
              <td>{last ? (last.status_code !== null ? `HTTP ${last.status_code}` : last.error || 'no answer') : <span className="muted">none yet</span>}</td>
              <td>
                <Timestamp at={delivery.next_attempt_at} never="—" />
              </td>
              <td>
                <Timestamp at={delivery.created_at} />
              </td>
            </tr>
          );
        })}
      </PlainTable>
    </LoadState>
  );
}
