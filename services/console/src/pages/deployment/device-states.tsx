import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router-dom';
import { answer, answerWithHeaders, api } from '../../api';
import { LoadState, StaleNote } from '../../components/feedback';
import { PlainTable } from '../../components/plain-table';
import { Timestamp } from '../../components/time';
import { ROLLOUT_STATUSES, type Deployment, type Device } from '../../types';
import { ROLLOUT_STATUS_WORDS, reasonWords, statusWords } from '../../words';
import { queryKeys } from '../../query-keys';

const PAGE = 50;

/**
 * The deployment's devices, most recently changed first, a page at a time from the server, with a
 * status filter (the failed ones, say). Only the devices of the page are read to name them.
 */
export function DeviceStates({ deployment: d, refreshMs }: { deployment: Deployment; refreshMs: number | false }) {
  const [status, setStatus] = useState('');
  const [offset, setOffset] = useState(0);
  const base = `/projects/${d.project_id}`;
  const page = useQuery({
    queryKey: queryKeys.statesPage(d.id, status, offset),
    queryFn: async () => {
      const query = { limit: String(PAGE), offset: String(offset), ...(status ? { status } : {}) };
      const states = await answerWithHeaders(api.GET('/api/v1/projects/{id}/deployments/{did}/states/', { params: { path: { id: d.project_id, did: d.id }, query } }));
      return { states: states.body, total: Number(states.headers.get('x-total-count') ?? 0) };
    },
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
  const total = page.data?.total ?? 0;
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
              setOffset(0);
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
      <LoadState loading={page.isLoading} error={page.data ? null : page.error} empty={total === 0 && (status ? 'No device is at this status.' : 'No device has been offered this build yet.')}>
        <p className="muted" data-testid="state-count">
          Devices {offset + 1}–{offset + (page.data?.states.length ?? 0)} of {total}
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
        {total > PAGE && (
          <nav className="pager" aria-label="Pages of devices in this rollout">
            <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
              Previous
            </button>
            <button type="button" disabled={offset + PAGE >= total} onClick={() => setOffset(offset + PAGE)}>
              Next
            </button>
          </nav>
        )}
      </LoadState>
    </section>
  );
}
