import type { OutboundCall } from '@ota/logging';
import { profileOfMessage } from '@ota/manifest';
import type { ServiceClient } from '@ota/grpc';
import type { registry as pb } from '@ota/proto';
import type { Fleet } from '../../domain/ports';
import type { FleetDevice } from '../../domain/preview';

type RegistryClient = ServiceClient<typeof pb.RegistryServiceService>;

export class GrpcFleet implements Fleet {
  constructor(private readonly client: RegistryClient) {}

  async *devices(projectId: string, idPrefix: string, groupIds: readonly string[], call: OutboundCall & { deadline: Date | number }): AsyncIterable<FleetDevice[]> {
    for await (const page of this.client.streamDevices({ projectId, idPrefix, groupIds: [...groupIds], onlyTheseGroups: true }, call)) yield page.devices.map(fleetDeviceOf);
  }
}

function fleetDeviceOf(device: pb.Device): FleetDevice {
  return {
    id: device.id,
    deviceId: device.deviceId,
    active: device.active,
    channelId: device.channelId,
    groupIds: device.groupIds,
    ...profileOfMessage(device),
    currentBuildNumber: device.currentBuildNumber,
  };
}
