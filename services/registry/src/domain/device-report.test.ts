import { isDomainError, notFound } from '@ota/errors';
import type { Device, StatusReportWrite } from './model';
import { reportDeviceStatus, type StatusReportDeps, type StatusReportInput } from './device-report';

/** The report's own call: rollout stores its event under it. */
const CALL = { requestId: 'report-1' };

interface Fake {
  deps: StatusReportDeps;
  /** Every store operation, in order. */
  calls: string[];
  writes: StatusReportWrite[];
}

/** `writes` says whether the conditional update writes; `device` is what a read finds (undefined: none). */
function fake(options: { activeDeploymentIds: string[]; writes: boolean; device?: Partial<Device>; finalStatus?: string }): Fake {
  const calls: string[] = [];
  const writes: StatusReportWrite[] = [];
  const deps: StatusReportDeps = {
    registry: {
      getDevice: async () => {
        calls.push('read device');
        if (!options.device) throw notFound('device not found');
        return { id: 'uuid-1', tokenRequired: false, ...options.device } as Device;
      },
      applyStatusReport: async (write) => {
        calls.push(`write ${write.change.lastOtaStatus}`);
        writes.push(write);
        return options.writes ? { id: 'uuid-1' } : null;
      },
    },
    views: { activeDeployments: () => options.activeDeploymentIds.map((id) => ({ id }) as never) },
    events: {
      recordDeviceEvent: async (event, call) => {
        calls.push(`rollout stores ${event.event} of ${event.deviceUuid} under ${call.requestId}`);
        return { accepted: true, finalStatus: options.finalStatus ?? event.event };
      },
    },
  };
  return { deps, calls, writes };
}

const input = (overrides: Partial<StatusReportInput> = {}): StatusReportInput => ({
  projectId: 'p1',
  deviceId: 'unit-1',
  viaProjectToken: true,
  deploymentId: 'dep-1',
  event: 'downloaded',
  reason: '',
  detailJson: '',
  ...overrides,
});

async function refusal(promise: Promise<unknown>): Promise<string | undefined> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  return isDomainError(error) ? error.kind : String(error);
}

describe('a report on an active deployment', () => {
  test('is one update of the device, then rollout stores it: nothing is read', async () => {
    const { deps, calls, writes } = fake({ activeDeploymentIds: ['dep-1'], writes: true });
    expect(await reportDeviceStatus(deps, input(), CALL)).toEqual({ accepted: true, finalStatus: 'downloaded' });
    expect(calls).toEqual(['write downloaded', 'rollout stores downloaded of uuid-1 under report-1']);
    expect(writes[0]).toMatchObject({ deviceId: 'unit-1', viaProjectToken: true, deploymentId: 'dep-1', rank: 3 });
  });

  test('a device with its own token, reporting with the project token, is refused before rollout stores anything', async () => {
    const { deps, calls } = fake({ activeDeploymentIds: ['dep-1'], writes: false, device: { tokenRequired: true } });
    expect(await refusal(reportDeviceStatus(deps, input(), CALL))).toBe('PermissionDenied');
    expect(calls).toEqual(['write downloaded', 'read device']);
  });

  test('with its own token the same device reports', async () => {
    const { deps, calls } = fake({ activeDeploymentIds: ['dep-1'], writes: true, device: { tokenRequired: true } });
    await reportDeviceStatus(deps, input({ viaProjectToken: false }), CALL);
    expect(calls).toEqual(['write downloaded', 'rollout stores downloaded of uuid-1 under report-1']);
  });

  test('an unknown device is 404, and nothing is stored', async () => {
    const { deps, calls } = fake({ activeDeploymentIds: ['dep-1'], writes: false });
    expect(await refusal(reportDeviceStatus(deps, input(), CALL))).toBe('NotFound');
    expect(calls).toEqual(['write downloaded', 'read device']);
  });

  test('a status below the stored one leaves the device as it is, and rollout still stores the report for the timeline', async () => {
    const { deps, calls } = fake({ activeDeploymentIds: ['dep-1'], writes: false, device: {}, finalStatus: 'flashed' });
    expect(await reportDeviceStatus(deps, input(), CALL)).toEqual({ accepted: true, finalStatus: 'flashed' });
    expect(calls).toEqual(['write downloaded', 'read device', 'rollout stores downloaded of uuid-1 under report-1']);
  });

  test('confirmed carries its build number to the device; other events do not', async () => {
    const { deps, writes } = fake({ activeDeploymentIds: ['dep-1'], writes: true });
    await reportDeviceStatus(deps, input({ event: 'confirmed', buildNumber: 7 }), CALL);
    await reportDeviceStatus(deps, input({ event: 'flashed', buildNumber: 7 }), CALL);
    expect(writes.map((write) => write.change.currentBuildNumber)).toEqual([7, undefined]);
  });
});

describe('a report on a deployment this replica does not hold as active', () => {
  test('reads the device for the token rule, has rollout store the event (rollout knows the deployment), then writes the status rollout answered', async () => {
    const { deps, calls, writes } = fake({ activeDeploymentIds: [], writes: true, device: {}, finalStatus: 'validated' });
    expect(await reportDeviceStatus(deps, input(), CALL)).toEqual({ accepted: true, finalStatus: 'validated' });
    expect(calls).toEqual(['read device', 'rollout stores downloaded of uuid-1 under report-1', 'write validated']);
    expect(writes[0]!.rank).toBe(5);
  });

  test('a device with its own token is refused before anything is stored', async () => {
    const { deps, calls } = fake({ activeDeploymentIds: ['dep-2'], writes: true, device: { tokenRequired: true } });
    expect(await refusal(reportDeviceStatus(deps, input(), CALL))).toBe('PermissionDenied');
    expect(calls).toEqual(['read device']);
  });
});

test('a word that is no event is refused before anything is written', async () => {
  const { deps, calls } = fake({ activeDeploymentIds: ['dep-1'], writes: true });
  expect(await refusal(reportDeviceStatus(deps, input({ event: 'exploded' }), CALL))).toBe('InvalidArgument');
  expect(calls).toEqual([]);
});
