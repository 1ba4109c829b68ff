import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { operations } from '../../generated/api';
import { useEffect, useRef, useState } from 'react';
import { Link, useLocation, useParams, useSearchParams } from 'react-router-dom';
import { ApiError, answer, api } from '../api';
import { BusyButton, ConfirmDialog, ErrorNote, LoadState } from '../components/feedback';
import { NamedOptions } from '../components/named-options';
import { PlainTable } from '../components/plain-table';
import { Timestamp } from '../components/time';
import { namesById, useChannels, useGroups } from '../queries';
import type { DeviceTotal, MembershipChange, MembershipImpact } from '../types';
import { CHECK_STATE_WORDS, checkStatusWords, totalWords } from '../words';
import { RoleControls, useProjectWrite } from '../project-access';
import { DEVICE_PAGE_SIZE, devicePage, FILTERS, type DevicePage } from '../device-pages';
import { OtaStatus } from '../components/ota-status';
import { queryKeys } from '../query-keys';
import { shareBefore } from '../id-space';


/** The most devices the API takes in one bulk membership change, and the largest page it serves. */
const BULK_CHUNK = 1000;






/** Pages a text search reads at most for one page of the list before it shows what it found. */
const SEARCH_PAGES_PER_VIEW = 16;

/**
 * A page of the list: a text search that finds little in a large project answers short pages,
 * so they are followed until the page is full, the list ends, or SEARCH_PAGES_PER_VIEW were read.
 */
export async function filledDevicePage(projectId: string, filters: URLSearchParams, afterId: string, onProgress: (share: number) => void): Promise<DevicePage> {
  let page = await devicePage(projectId, filters, afterId);
  const devices = [...page.devices];
  for (let read = 1; read < SEARCH_PAGES_PER_VIEW && devices.length < DEVICE_PAGE_SIZE && page.nextAfterId; read += 1) {
    onProgress(shareBefore(page.nextAfterId));
    page = await devicePage(projectId, filters, page.nextAfterId, DEVICE_PAGE_SIZE - devices.length);
    devices.push(...page.devices);
  }
  return { ...page, devices };
}

/** A page before this one: where it started, and how many devices the pages before it showed. */
interface EarlierPage {
  afterId: string;
  before: number;
}

export function DevicesPage() {
  const { projectId = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const writable = useProjectWrite(projectId);
  const groups = useGroups(projectId);
  const channels = useChannels(projectId);
  // The cursors of the pages before this one, so that Previous goes back exactly. They live in the
  // history entry of the page, so that the browser's Back and Forward bring their own along.
  const location = useLocation();
  const earlier = (location.state as { earlier?: EarlierPage[] } | null)?.earlier ?? [];
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const after = params.get('after_id') ?? '';
  const filterKey = FILTERS.map((key) => params.get(key) ?? '').join('|');
  const [searched, setSearched] = useState(0);
  const page = useQuery({
    queryKey: queryKeys.devicePage(projectId, filterKey, after),
    queryFn: () => filledDevicePage(projectId, params, after, setSearched),
    refetchInterval: 10_000,
    placeholderData: (previous) => previous,
  });
  const setFilter = (key: (typeof FILTERS)[number], value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value);
    else next.delete(key);
    next.delete('after_id');
    setSelected(new Set());
    setParams(next, { replace: true, state: { earlier: [], before: 0 } });
  };
  const goTo = (cursor: string, history: EarlierPage[], devicesBefore: number) => {
    const next = new URLSearchParams(params);
    if (cursor) next.set('after_id', cursor);
    else next.delete('after_id');
    setParams(next, { state: { earlier: history, before: devicesBefore } });
  };
  const devices = page.data?.devices ?? [];
  const total = page.data?.total ?? { count: 0, estimated: false };
  const nextAfterId = page.data?.nextAfterId;
  // The position of this page is known when it was reached by paging here; a cursor that came in
  // the URL (a reload, a shared link) says only where the page starts.
  const before = (location.state as { before?: number } | null)?.before;
  const firstIndex = after && (earlier.length === 0 || before === undefined) ? undefined : (before ?? 0);
  // A search that read its share of pages and found nothing more yet says how far it came.
  const searchedShare = nextAfterId && devices.length < DEVICE_PAGE_SIZE ? shareBefore(nextAfterId) : undefined;
  const groupNames = namesById(groups.data);
  const channelNames = namesById(channels.data);
  const filtered = FILTERS.some((key) => params.get(key));
  const allOnPage = devices.length > 0 && devices.every((device) => selected.has(device.id));
  return (
    <>
      <h1>Devices</h1>
      <form className="filters" onSubmit={(event) => event.preventDefault()} aria-label="Filter devices">
        <label>
          Search
          <input type="search" value={params.get('q') ?? ''} onChange={(event) => setFilter('q', event.target.value.trim())} placeholder="device id contains…" />
        </label>
        <label>
          Active
          <select value={params.get('active') ?? ''} onChange={(event) => setFilter('active', event.target.value)}>
            <option value="">all</option>
            <option value="true">active</option>
            <option value="false">deactivated</option>
          </select>
        </label>
        <label>
          Group
          <select value={params.get('group_id') ?? ''} onChange={(event) => setFilter('group_id', event.target.value)}>
            <option value="">any</option>
            <NamedOptions items={groups.data} />
          </select>
        </label>
        <label>
          Channel
          <select value={params.get('channel_id') ?? ''} onChange={(event) => setFilter('channel_id', event.target.value)}>
            <option value="">any</option>
            <NamedOptions items={channels.data} />
          </select>
        </label>
        <label>
          Chip family
          <input value={params.get('chip_family') ?? ''} onChange={(event) => setFilter('chip_family', event.target.value.trim())} placeholder="esp32s3" />
        </label>
      </form>
      <RoleControls projectId={projectId} what="Adding devices to groups and removing them">
        <BulkMembership projectId={projectId} selected={selected} total={total} filters={params} filtered={filtered} onDone={() => setSelected(new Set())} />
      </RoleControls>
      <LoadState
        loading={page.isLoading}
        error={page.error}
        empty={
          devices.length === 0 &&
          !nextAfterId &&
          (filtered ? 'No device matches these filters.' : 'No devices yet: a device registers itself on its first check with a device-scope project token.')
        }
      >
        <p className="muted" data-testid="device-count" role="status">
          {page.isPlaceholderData
            ? 'Loading the page…'
            : total.count === 0 && devices.length === 0
            ? 'No devices found yet'
            : firstIndex === undefined || devices.length === 0
              ? `${devices.length} devices on this page, of ${totalWords(total)}`
              : `Devices ${(firstIndex + 1).toLocaleString('en')}–${(firstIndex + devices.length).toLocaleString('en')} of ${totalWords(total)}`}
          {filtered ? ' matching the filters' : ''}
          {searchedShare !== undefined && ` · searched ${Math.round(searchedShare * 100)}% of the project so far; Next searches on`}
          {page.isFetching && !page.isLoading && searched > 0 && searched < 1 && ` · searching (${Math.round(searched * 100)}%)…`}
        </p>
        <PlainTable
          caption="Devices"
          headers={[writable ? 'Select' : '', 'Device', 'Hardware', 'Build', 'Last seen', 'Last OTA status', 'Last check', 'Channel', 'Groups', 'Active'].filter(Boolean)}
        >
          {writable && (
            <tr className="select-all">
              <td colSpan={10}>
                <label className="check">
                  <input
                    type="checkbox"
                    checked={allOnPage}
                    onChange={() => setSelected(allOnPage ? new Set([...selected].filter((id) => !devices.some((device) => device.id === id))) : new Set([...selected, ...devices.map((device) => device.id)]))}
                  />{' '}
                  Select the {devices.length} devices on this page
                </label>
              </td>
            </tr>
          )}
          {devices.map((device) => (
            <tr key={device.id}>
              {writable && (
                <td>
                  <input
                    type="checkbox"
                    aria-label={`Select ${device.device_id}`}
                    checked={selected.has(device.id)}
                    onChange={() => {
                      const next = new Set(selected);
                      if (next.has(device.id)) next.delete(device.id);
                      else next.add(device.id);
                      setSelected(next);
                    }}
                  />
                </td>
              )}
              <td className="nowrap">
                <Link to={`/projects/${projectId}/devices/${device.id}`}>{device.device_id}</Link>
              </td>
              <td>{[device.framework, device.chip_family, device.board_id, device.hardware_revision].filter(Boolean).join(' · ')}</td>
              <td>
                {device.current_build_number} <span className="muted">{device.current_version_label}</span>
              </td>
              <td>
                <Timestamp at={device.last_seen} />
              </td>
              <td>
                <OtaStatus status={device.last_ota_status} reason={device.last_ota_reason} />
              </td>
              <td>
                {device.last_check_status ? checkStatusWords(device.last_check_status) : <span className="muted">none</span>}
                <div className="muted small-text">{CHECK_STATE_WORDS[device.check_state]}</div>
              </td>
              <td>{channelNames.get(device.channel_id) ?? ''}</td>
              <td>{device.group_ids.map((id) => groupNames.get(id) ?? id).join(', ')}</td>
              <td>{device.active ? 'yes' : <strong>no</strong>}</td>
            </tr>
          ))}
        </PlainTable>
        <nav className="pager" aria-label="Device pages">
          <button type="button" disabled={!after} onClick={() => goTo(earlier.at(-1)?.afterId ?? '', earlier.slice(0, -1), earlier.at(-1)?.before ?? 0)}>
            Previous
          </button>
          <button type="button" disabled={!nextAfterId} onClick={() => goTo(nextAfterId!, [...earlier, { afterId: after, before: firstIndex ?? 0 }], (firstIndex ?? 0) + devices.length)}>
            Next
          </button>
        </nav>
      </LoadState>
    </>
  );
}

/**
 * Past this many devices a bulk change wants the group's name typed: a slip of the hand at that
 * size changes who a rollout reaches by more than a person checks by eye.
 */
export const BULK_TYPE_NAME_ABOVE = 100;

type MembershipAction = 'add' | 'remove';
type Affected = MembershipImpact['deployments'][number];
type MembershipSelection = NonNullable<operations['startMembershipChange']['requestBody']>['content']['application/json']['matching'];

/** A change read and weighed, waiting for the person's yes. */
interface PendingChange {
  change: MembershipAction;
  /**
   * The devices named one by one (the selected ones), or every device the filters match, changed as
   * one operation in the service; `exact` when few enough matched to be read and weighed one by one.
   */
  scope: { ids: string[] } | { matching: MembershipSelection; total: DeviceTotal; exact: boolean };
  group: { id: string; name: string };
  deployments: Affected[];
}

/**
 * The device list's filters as the selection of a bulk change (docs/api.md, "Bulk group changes").
 * A value the list would refuse goes to the service as it is, so that the change is refused with
 * the same detail rather than applied to more devices than the list shows.
 */
function selectionOf(filters: URLSearchParams): MembershipSelection {
  const matching: Record<string, unknown> = {};
  const active = filters.get('active');
  if (active) matching.active = active === 'true' ? true : active === 'false' ? false : active;
  for (const [key, field] of [['group_id', 'group_id'], ['channel_id', 'channel_id'], ['chip_family', 'chip_family'], ['q', 'search']] as const) {
    const value = filters.get(key);
    if (value) matching[field] = value;
  }
  return matching as MembershipSelection;
}

/** How far a running bulk change has come, in words. */
function changeProgressWords(change: MembershipChange): string {
  const walked = `${Math.floor(change.share_done * 100)}% of the project walked`;
  const done = change.action === 'add' ? `${change.added.toLocaleString('en')} added` : `${change.removed.toLocaleString('en')} removed`;
  return `${change.action === 'add' ? 'Adding' : 'Removing'}: ${walked}, ${change.devices_matched.toLocaleString('en')} matching devices found, ${done}…`;
}

/**
 * Up to this many matching devices, the console reads them before it asks, so that the question
 * says exactly what each rollout gains and loses; past it, a bound.
 */
const READ_TO_WEIGH_UP_TO = 5_000;

/** How often the console asks a running bulk change how far it has come. */
const CHANGE_POLL_MS = 1_000;

/** The impact of a change of up to any size: one impact request per BULK_CHUNK, summed per deployment. */
async function impactOf(projectId: string, groupId: string, change: MembershipAction, ids: string[]): Promise<MembershipImpact> {
  let group = { id: groupId, name: '' };
  const byId = new Map<string, Affected>();
  for (let start = 0; start < Math.max(ids.length, 1); start += BULK_CHUNK) {
    const body = { [change]: ids.slice(start, start + BULK_CHUNK) };
    const impact = await answer(api.POST('/api/v1/projects/{id}/groups/{gid}/members/changes/impact/', { params: { path: { id: projectId, gid: groupId } }, body }));
    group = impact.group;
    for (const deployment of impact.deployments) {
      const seen = byId.get(deployment.id);
      byId.set(
        deployment.id,
        seen
          ? { ...seen, gains: seen.gains + deployment.gains, gains_on_earlier_builds: seen.gains_on_earlier_builds + deployment.gains_on_earlier_builds, loses: seen.loses + deployment.loses }
          : deployment,
      );
    }
  }
  return { group, deployments: [...byId.values()] };
}

/** What a change of every matching device may do to one rollout that targets the group, in words: the devices it moves are known only as it runs. */
function targetingWords(deployment: Affected, change: MembershipAction, total: DeviceTotal): string {
  const what = `Build ${deployment.build_number} (${deployment.version_label}), ${deployment.state} at ${deployment.rollout_percentage}%`;
  return change === 'add'
    ? `${what} may gain up to ${totalWords(total)} devices (those not yet in the group and not already targeted), ${deployment.state === 'active' ? 'offered the build at their next check' : 'offered the build once it is resumed'}.`
    : `${what} may lose up to ${totalWords(total)} devices (those it targets only through this group).`;
}

/** What the change does to one rollout, in words. */
function affectedWords(deployment: Affected): string {
  const what = `Build ${deployment.build_number} (${deployment.version_label}), ${deployment.state} at ${deployment.rollout_percentage}%`;
  const moves = [deployment.gains > 0 && `gains ${deployment.gains} device${deployment.gains === 1 ? '' : 's'}`, deployment.loses > 0 && `loses ${deployment.loses}`].filter(Boolean).join(' and ') || 'gains and loses no device';
  // Only a gained device on an earlier build can be offered it; the percentage then takes its share.
  const earlier = deployment.gains_on_earlier_builds;
  const onIt = deployment.gains - earlier;
  const already = onIt > 0 ? ` (${onIt} already run${onIt === 1 ? 's' : ''} build ${deployment.build_number} or a later one)` : '';
  const offered =
    deployment.gains === 0
      ? ''
      : earlier === 0
        ? `: none would be offered the build, as all run it or a later one`
        : deployment.state === 'active'
          ? `: about ${Math.round((earlier * deployment.rollout_percentage) / 100)} of them would be offered the build at their next check${already}`
          : `: ${earlier} would be offered the build once it is resumed${already}`;
  return `${what} ${moves}${offered}.`;
}

/**
 * Adds the selected devices to a group, or removes them, or every device that matches the filters.
 * Before anything changes it asks, naming each active or paused deployment that targets the group
 * and what the change does to it; past BULK_TYPE_NAME_ABOVE devices the group's name is typed.
 * Selected devices are sent in one request per 1000; every matching device is one operation in the
 * service, whose progress is shown until it ends.
 */
function BulkMembership({ projectId, selected, total, filters, filtered, onDone }: { projectId: string; selected: Set<string>; total: DeviceTotal; filters: URLSearchParams; filtered: boolean; onDone: () => void }) {
  const queryClient = useQueryClient();
  const groups = useGroups(projectId);
  const [groupId, setGroupId] = useState('');
  const [scope, setScope] = useState<'selected' | 'matching'>('selected');
  const [progress, setProgress] = useState('');
  const [share, setShare] = useState<number | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [pending, setPending] = useState<PendingChange | null>(null);
  // A change that runs on in the service is no longer followed once the page is left.
  const mounted = useRef(true);
  useEffect(() => () => void (mounted.current = false), []);
  const count = scope === 'selected' ? selected.size : total.count;

  /** The matching devices' ids, read page by page, to weigh a change of few of them exactly. */
  const matchingIds = async (): Promise<string[]> => {
    const ids: string[] = [];
    let afterId = '';
    for (;;) {
      setProgress(`Reading the matching devices: ${ids.length.toLocaleString('en')} of ${totalWords(total)}…`);
      const next = await devicePage(projectId, filters, afterId, BULK_CHUNK);
      ids.push(...next.devices.map((device) => device.id));
      if (!next.nextAfterId) return ids;
      afterId = next.nextAfterId;
    }
  };

  /** Reads what the change would do, then asks. Nothing changes here. */
  const prepare = async (change: MembershipAction) => {
    setBusy(true);
    setError(null);
    try {
      const exact = scope === 'selected' || (!total.estimated && total.count <= READ_TO_WEIGH_UP_TO);
      const ids = scope === 'selected' ? [...selected] : exact ? await matchingIds() : [];
      setProgress('Working out what the change does to rollouts…');
      const impact = await impactOf(projectId, groupId, change, ids);
      setProgress('');
      setPending({ change, scope: scope === 'selected' ? { ids } : { matching: selectionOf(filters), total, exact }, group: impact.group, deployments: impact.deployments });
    } catch (failure) {
      setError(failure instanceof ApiError ? failure : new ApiError(0, String(failure)));
      setProgress('');
    } finally {
      setBusy(false);
    }
  };

  /** The selected devices, one request per 1000. A failure says what went through before it. */
  const applyToIds = async (change: MembershipAction, ids: string[], group: { id: string; name: string }) => {
    let changed = 0;
    let sent = 0;
    try {
      for (let start = 0; start < ids.length; start += BULK_CHUNK) {
        setProgress(`${change === 'add' ? 'Adding' : 'Removing'}: ${start} of ${ids.length}…`);
        const body = { [change]: ids.slice(start, start + BULK_CHUNK) };
        const counts = await answer(api.POST('/api/v1/projects/{id}/groups/{gid}/members/changes/', { params: { path: { id: projectId, gid: group.id } }, body }));
        changed += change === 'add' ? counts.added : counts.removed;
        sent = Math.min(ids.length, start + BULK_CHUNK);
      }
      setProgress(`${change === 'add' ? `Added ${changed} devices to` : `Removed ${changed} devices from`} ${group.name}.`);
    } catch (failure) {
      setProgress(sent > 0 ? `${change === 'add' ? 'Added' : 'Removed'} ${changed} of the ${ids.length} devices before the change stopped; the rest were not changed.` : '');
      throw failure;
    }
  };

  /**
   * Every matching device, as one operation in the service, followed until it ends. A moment in
   * which the service cannot be asked is not a failure: the change goes on there.
   */
  const applyToMatching = async (change: MembershipAction, matching: MembershipSelection, group: { id: string; name: string }) => {
    const path = { id: projectId, gid: group.id };
    let followed = await answer(api.POST('/api/v1/projects/{id}/groups/{gid}/members/bulk-changes/', { params: { path }, body: { action: change, matching } }));
    while (followed.state === 'running' && mounted.current) {
      setProgress(changeProgressWords(followed));
      setShare(followed.share_done);
      await new Promise((resolve) => setTimeout(resolve, CHANGE_POLL_MS));
      try {
        followed = await answer(api.GET('/api/v1/projects/{id}/groups/{gid}/members/bulk-changes/{bid}/', { params: { path: { ...path, bid: followed.id } } }));
      } catch {
        setProgress(`${changeProgressWords(followed)} (the service did not answer just now; the change goes on there)`);
      }
    }
    setShare(null);
    const changed = change === 'add' ? followed.added : followed.removed;
    if (followed.state === 'failed') {
      setProgress(`${change === 'add' ? 'Added' : 'Removed'} ${changed.toLocaleString('en')} devices before the change stopped; they stay changed.`);
      throw new ApiError(0, followed.detail);
    }
    if (followed.state === 'done') setProgress(`${change === 'add' ? `Added ${changed.toLocaleString('en')} devices to` : `Removed ${changed.toLocaleString('en')} devices from`} ${group.name}.`);
  };

  /** The change the person confirmed. */
  const apply = async ({ change, scope: changeScope, group }: PendingChange) => {
    setBusy(true);
    setError(null);
    try {
      if ('ids' in changeScope) await applyToIds(change, changeScope.ids, group);
      else await applyToMatching(change, changeScope.matching, group);
      onDone();
    } finally {
      setBusy(false);
      await Promise.all([queryClient.invalidateQueries({ queryKey: queryKeys.devices(projectId) }), queryClient.invalidateQueries({ queryKey: queryKeys.groups(projectId) })]);
    }
  };

  const weighed = pending !== null && ('ids' in pending.scope || pending.scope.exact);
  const moved = pending?.deployments.filter((deployment) => !weighed || deployment.gains + deployment.loses > 0) ?? [];
  const pendingWords =
    pending && ('ids' in pending.scope ? `${pending.scope.ids.length} device${pending.scope.ids.length === 1 ? '' : 's'}` : `all ${totalWords(pending.scope.total)} devices ${filtered ? 'matching the filters' : 'of the project'}`);
  const pendingCount = pending ? ('ids' in pending.scope ? pending.scope.ids.length : pending.scope.total.count) : 0;
  return (
    <>
      <form className="inline bulk" aria-label="Group membership of many devices" onSubmit={(event) => event.preventDefault()}>
        <label>
          <select aria-label="Which devices" value={scope} onChange={(event) => setScope(event.target.value as 'selected' | 'matching')}>
            <option value="selected">the {selected.size} selected devices</option>
            <option value="matching">
              all {totalWords(total)} devices {filtered ? 'matching the filters' : 'of the project'}
            </option>
          </select>
        </label>
        <label>
          Group
          <select aria-label="Group to change" value={groupId} onChange={(event) => setGroupId(event.target.value)}>
            <option value="">choose a group</option>
            <NamedOptions items={groups.data} />
          </select>
        </label>
        <BusyButton type="button" busy={busy} disabled={!groupId || count === 0} onClick={() => void prepare('add')}>
          Add to group…
        </BusyButton>
        <BusyButton type="button" busy={busy} disabled={!groupId || count === 0} onClick={() => void prepare('remove')}>
          Remove from group…
        </BusyButton>
        {share !== null && <progress aria-label="Share of the project walked" value={share} max={1} />}
        {progress && (
          <span role="status" data-testid="bulk-progress">
            {progress}
          </span>
        )}
        <ErrorNote error={error} />
      </form>
        <ConfirmDialog
          open={pending !== null}
          title={pending ? `${pending.change === 'add' ? 'Add' : 'Remove'} ${pendingWords} ${pending.change === 'add' ? 'to' : 'from'} ${pending.group.name}?` : ''}
          confirmLabel={pending?.change === 'add' ? 'Add to group' : 'Remove from group'}
          danger={moved.length > 0}
          typeToConfirm={pending && pendingCount > BULK_TYPE_NAME_ABOVE ? pending.group.name : undefined}
          onClose={() => setPending(null)}
          onConfirm={() => apply(pending!)}
        >
          <div data-testid="bulk-impact">
            {pending && pending.deployments.length === 0 && <p>No active or paused deployment targets {pending.group.name}: this change offers no device anything.</p>}
            {pending && pending.deployments.length > 0 && (
              <>
                <p>Deployments that target {pending.group.name} now:</p>
                <ul>
                  {pending.deployments.map((deployment) => (
                    <li key={deployment.id}>{weighed || 'ids' in pending.scope ? affectedWords(deployment) : targetingWords(deployment, pending.change, pending.scope.total)}</li>
                  ))}
                </ul>
              </>
            )}
            {pending && 'matching' in pending.scope && <p>The change runs in the service; this page shows how far it has come, and it goes on if you leave.</p>}
          </div>
        </ConfirmDialog>
    </>
  );
}

