import type { ServiceClient } from '@ota/grpc';
import type { OutboundCall } from '@ota/logging';
import type { rollout } from '@ota/proto';
import type { DeviceEventLedger } from '../../domain/device-report';

type RolloutClient = ServiceClient<typeof rollout.RolloutServiceService>;

/** Rollout's RecordDeviceEvent, under the deadline and trace of the status report that asks (its `call`). */
export class GrpcDeviceEventLedger implements DeviceEventLedger {
  constructor(private readonly client: RolloutClient) {}

  recordDeviceEvent(event: Parameters<DeviceEventLedger['recordDeviceEvent']>[0], call: OutboundCall): Promise<{ accepted: boolean; finalStatus: string }> {
    return this.client.recordDeviceEvent(event, call);
  }
}
