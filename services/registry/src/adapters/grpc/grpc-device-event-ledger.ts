import type { CallOptions, ServiceClient } from '@ota/grpc';
import type { rollout } from '@ota/proto';
import type { DeviceEventLedger } from '../../domain/device-report';

type RolloutClient = ServiceClient<typeof rollout.RolloutServiceService>;

/** Rollout's RecordDeviceEvent, under the deadline and trace of the status report that asks. */
export class GrpcDeviceEventLedger implements DeviceEventLedger {
  constructor(
    private readonly client: RolloutClient,
    private readonly call: CallOptions,
  ) {}

  recordDeviceEvent(event: Parameters<DeviceEventLedger['recordDeviceEvent']>[0]): Promise<{ accepted: boolean; finalStatus: string }> {
    return this.client.recordDeviceEvent(event, this.call);
  }
}
