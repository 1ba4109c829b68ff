import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router-dom';
import { answer, answerWithHeaders, api } from '../../api';
import { LoadState, StaleNote } from '../../components/feedback';
import { PlainTable } from '../../components/plain-table';
import { Timestamp } from '../../components/time';
import { ROLLOUT_STATUSES, type Deployment, type DeviceState, type DeviceTotal } from '../../types';
import { ROLLOUT_STATUS_WORDS, reasonWords, statusWords, totalWords } from '../../words';
import { shareBefore } from '../../id-space';
import { queryKeys } from '../../query-keys';

const PAGE = 50;

/** A page of states a status filter reads at most before it shows what it found: pages of few matches follow one another. */
const PAGES_PER_VIEW = 8;

/** One page of the deployment's states, and the pages after it while a status filter finds few (up to PAGES_PER_VIEW). */
async function statesPage(d: Deployment, status: string, afterId: string) {
  let states: DeviceState[] = [];
  let total: DeviceTotal = { count: 0, estimated: false };
  let cursor = afterId;
  for (let read = 0; read < PAGES_PER_VIEW && states.length < PAGE; read += 1) {
    const query = { limit: PAGE - states.length, ...(cursor ? { after_id: cursor } : {}), ...(status ? { status } : {}) };
    const page = await answerWithHeaders(api.GET('/api/v1/projects/{id}/deployments/{did}/states/', { params: { path: { id: d.project_id, did: d.id }, query } }));
    const estimate = page.headers.get('x-total-count-estimate');
    if (read === 0) total = estimate === null ? { count: Number(page.headers.get('x-total-count') ?? 0), estimated: false } : { count: Number(estimate), estimated: true };
    states = [...states, ...page.body];
    cursor = page.headers.get('x-next-after-id') ?? '';
    if (!cursor) break;
  }
  return { states, total, nextAfterId: cursor || undefined };
}

/**
 * The deployment's devices a page at a time from the server, in the order of their ids, with a
 * status filter (the failed ones, say). Only the devices of the page are read to name them.
 */
export function DeviceStates({ deployment: d, refreshMs }: { deployment: Deployment; refreshMs: number | false }) {
  const [status, setStatus] = useState('');
  // Where this page starts, and the starts of the pages before it, so that Previous goes back exactly.
  const [afterId, setAfterId] = useState('');
  const [earlier, setEarlier] = useState<Array<{ afterId: string; before: number }>>([]);
  const [before, setBefore] = useState(0);
  const base = `/projects/${d.project_id}`;
  const page = useQuery({
    queryKey: queryKeys.statesPage(d.id, status, afterId),
    queryFn: () => statesPage(d, status, afterId),
    refetchInterval: refreshMs,
    placeholderData: keepPreviousData,
  });
  const ids = (page.data?.states ?? []).map((state) => state.device_id);
  const names = useQuery({
    queryKey: queryKeys.deviceNames(ids),
    queryFn: async () => {
      const devices = await answer(api.GET('/api/v1/projects/{id}/devices/', { params: { path: { id: d.project_id }, query: { ids: ids.join(',') } } }));
      return new Map(devices.map((device) => [device.id, device.device_id]));
    },
    enabled: ids.length > 0,
    staleTime: 60_000,
  });
  const total = page.data?.total ?? { count: 0, estimated: false };
  const shown = page.data?.states.length ?? 0;
  const nextAfterId = page.data?.nextAfterId;
  return (
    <section aria-labelledby="per-device">
      <h2 id="per-device">Devices in this rollout</h2>
      <form className="filters" aria-label="Filter the devices in this rollout" onSubmit={(event) => event.preventDefault()}>
        <label>
          Status
          <select
            value={status}
            onChange={(event) => {
              setStatus(event.target.value);
              setAfterId('');
              setEarlier([]);
              setBefore(0);
            }}
          >
            <option value="">any</option>
            {ROLLOUT_STATUSES.filter((candidate) => candidate !== 'pending').map((candidate) => (
              <option key={candidate} value={candidate}>
                {ROLLOUT_STATUS_WORDS[candidate]}
              </option>
            ))}
          </select>
        </label>
      </form>
      <StaleNote error={page.data ? page.error : null} updatedAt={page.dataUpdatedAt} />
      <LoadState loading={page.isLoading} error={page.data ? null : page.error} empty={shown === 0 && !nextAfterId && !afterId && (status ? 'No device is at this status.' : 'No device has been offered this build yet.')}>
        <p className="muted" data-testid="state-count">
          {shown === 0 ? 'No device on this page' : `Devices ${before + 1}–${before + shown}`} of {totalWords(total)}
          {nextAfterId && shown < PAGE ? ` (${Math.round(shareBefore(nextAfterId) * 100)}% of the rollout searched; Next goes on)` : ''}
        </p>
        <PlainTable caption="Per-device rollout states" headers={['Device', 'Status', 'Reason', 'Updated']}>
          {page.data?.states.map((state) => (
            <tr key={state.device_id}>
              <td className="nowrap">
                <Link to={`${base}/devices/${state.device_id}`}>{names.data?.get(state.device_id) ?? `${state.device_id.slice(0, 8)}…`}</Link>
              </td>
              <td>
                <span className={`status status-${state.status}`}>{statusWords(state.status)}</span>
              </td>
              <td>{state.reason ? <span title={state.reason}>{reasonWords(state.reason)}</span> : ''}</td>
              <td>
                <Timestamp at={state.updated_at} />
              </td>
            </tr>
          ))}
        </PlainTable>
        {(afterId || nextAfterId) && (
          <nav className="pager" aria-label="Pages of devices in this rollout">
            <button
              type="button"
              disabled={!afterId}
              onClick={() => {
                const previous = earlier.at(-1) ?? { afterId: '', before: 0 };
                setEarlier(earlier.slice(0, -1));
                setAfterId(previous.afterId);
                setBefore(previous.before);
              }}
            >
              Previous
            </button>
            <button
              type="button"
              disabled={!nextAfterId}
              onClick={() => {
                setEarlier([...earlier, { afterId, before }]);
                setAfterId(nextAfterId!);
                setBefore(before + shown);
              }}
            >
              Next
            </button>
          </nav>
        )}
      </LoadState>
    </section>
  );
}
