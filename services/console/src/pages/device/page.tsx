import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router-dom';
import { answer, api } from '../../api';
import { LoadState } from '../../components/feedback';
import { RoleControls } from '../../project-access';
import { queryKeys } from '../../query-keys';
import { DeviceFacts } from './facts';
import { DeviceManagement } from './manage';
import { DeviceTimeline } from './timeline';

/** One device: what it is, what may be done to it, and what it reported and was answered. */
export function DevicePage() {
  const { projectId = '', deviceId = '' } = useParams();
  const params = { path: { id: projectId, did: deviceId } };
  const device = useQuery({ queryKey: queryKeys.device(deviceId), queryFn: () => answer(api.GET('/api/v1/projects/{id}/devices/{did}/', { params })), refetchInterval: 5_000 });

  if (device.error || !device.data) return <LoadState loading={device.isLoading} error={device.error}>{null}</LoadState>;
  return (
    <>
      <p className="crumbs">
        <Link to={`/projects/${projectId}/devices`}>Devices</Link> /
      </p>
      <h1>{device.data.device_id}</h1>
      <DeviceFacts device={device.data} projectId={projectId} />
      <RoleControls projectId={projectId} what="Managing this device">
        <DeviceManagement projectId={projectId} device={device.data} />
      </RoleControls>
      <DeviceTimeline projectId={projectId} deviceId={deviceId} />
    </>
  );
}
