import { useQuery } from '@tanstack/react-query';
import { Link, useParams, useSearchParams } from 'react-router-dom';
import { answer, api } from '../api';
import { LoadState } from '../components/feedback';
import { PlainTable } from '../components/plain-table';
import { Timestamp } from '../components/time';
import { useArtifacts } from '../queries';
import { queryKeys } from '../query-keys';
import type { CrashFrame, CrashGroup } from '../types';

/** "load_access_fault" as "Load access fault". */
export function reasonWords(reason: string): string {
  const text = reason.replaceAll('_', ' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Where a crash happened, in one line: its first named frames, or the address when nothing names it. */
export function whereWords(frames: CrashFrame[]): string {
  const named = frames.filter((frame) => frame.function).slice(0, 3);
  return named.length > 0 ? named.map((frame) => frame.function).join(' ← ') : frames[0] ? `at ${frames[0].address}` : 'no frames';
}

/** The project's crash groups, most recently seen first, narrowed to a build in the URL. */
export function CrashesPage() {
  const { projectId = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const artifactId = params.get('build') ?? '';
  const builds = useArtifacts(projectId);
  const groups = useQuery({
    queryKey: queryKeys.crashes(projectId, artifactId),
    queryFn: () => answer(api.GET('/api/v1/projects/{id}/crashes/', { params: { path: { id: projectId }, query: artifactId ? { artifact_id: artifactId } : {} } })),
  });
  const list = groups.data ?? [];
  return (
    <>
      <h1>Crashes</h1>
      <p className="muted">
        Core dumps the devices sent, grouped by build and by where they crashed. A build's crashes are decoded into functions and lines once its ELF is
        uploaded (<code>otactl release --elf</code>).
      </p>
      <form className="filters" aria-label="Filter the crashes" onSubmit={(event) => event.preventDefault()}>
        <label>
          Build
          <select value={artifactId} onChange={(event) => setParams(event.target.value ? { build: event.target.value } : {}, { replace: true })}>
            <option value="">every build</option>
            {(builds.data ?? []).map((build) => (
              <option key={build.id} value={build.id}>
                {`Build ${build.build_number} (${build.version_label})`}
              </option>
            ))}
          </select>
        </label>
      </form>
      <LoadState loading={groups.isLoading} error={groups.error} empty={list.length === 0 && 'No crashes reported.'}>
        <PlainTable caption="Crash groups" headers={['Crash', 'Where', 'Build', 'Crashes', 'Devices', 'Last seen']}>
          {list.map((group) => (
            <tr key={group.id}>
              <td>
                <Link to={group.id}>{reasonWords(group.reason)}</Link>
                {group.new_in_build && (
                  <>
                    {' '}
                    <span className="tag">new in this build</span>
                  </>
                )}
              </td>
              <td>
                {whereWords(group.frames)}
                {group.decoding !== 'decoded' && <span className="muted"> (not decoded)</span>}
              </td>
              <td>{group.build_number === null ? 'unknown' : `Build ${group.build_number}`}</td>
              <td>{group.count.toLocaleString()}</td>
              <td>{group.devices.toLocaleString()}</td>
              <td>
                <Timestamp at={group.last_seen} />
              </td>
            </tr>
          ))}
        </PlainTable>
      </LoadState>
    </>
  );
}

/** One group: its backtrace, and its newest crashes with what each device's dump said. */
export function CrashGroupPage() {
  const { projectId = '', groupId = '' } = useParams();
  const detail = useQuery({
    queryKey: queryKeys.crashGroup(projectId, groupId),
    queryFn: () => answer(api.GET('/api/v1/projects/{id}/crashes/{cgid}/', { params: { path: { id: projectId, cgid: groupId } } })),
  });
  const group: CrashGroup | undefined = detail.data?.group;
  const samples = detail.data?.samples ?? [];
  return (
    <LoadState loading={detail.isLoading} error={detail.error}>
      {group && (
        <>
          <p>
            <Link to="..">All crashes</Link>
          </p>
          <h1>{`${reasonWords(group.reason)} in ${whereWords(group.frames)}`}</h1>
          <p>
            {`${group.count.toLocaleString()} crashes on ${group.devices.toLocaleString()} devices of `}
            {group.build_number === null ? 'an unknown build' : `build ${group.build_number}`}, first <Timestamp at={group.first_seen} />, last <Timestamp at={group.last_seen} />.
          </p>
          {samples[0]?.decoding_note && <p className="muted">{samples[0].decoding_note}</p>}
          {samples[0]?.panic_details && (
            <p>
              Panic: <code>{samples[0].panic_details}</code>
            </p>
          )}
          <h2>Backtrace</h2>
          <PlainTable caption="Backtrace of the crashed task" headers={['#', 'Function', 'Source', 'Address']}>
            {group.frames.map((frame, i) => (
              <tr key={i}>
                <td>{i}</td>
                <td>
                  <code>{frame.function || '??'}</code>
                </td>
                <td>{frame.file ? `${frame.file}:${frame.line}` : ''}</td>
                <td>
                  <code>{frame.address}</code>
                </td>
              </tr>
            ))}
          </PlainTable>
          <h2>Newest crashes</h2>
          <PlainTable caption="Newest crashes of the group" headers={['Received', 'Device', 'Task', 'Chip', 'Dump']}>
            {samples.map((crash) => (
              <tr key={crash.id}>
                <td>
                  <Timestamp at={crash.received_at} />
                </td>
                <td>{crash.device_id}</td>
                <td>{crash.task || '—'}</td>
                <td>{crash.chip}</td>
                <td>
                  <code title={crash.sha256}>{`${crash.size.toLocaleString()} B, ${crash.sha256.slice(0, 12)}…`}</code>
                </td>
              </tr>
            ))}
          </PlainTable>
        </>
      )}
    </LoadState>
  );
}
