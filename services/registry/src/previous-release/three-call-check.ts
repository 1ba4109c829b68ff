// PREVIOUS RELEASE: deleted by the next release (docs/architecture.md, "What the next release
// deletes"). The check in three calls (registry CheckInDevice, rollout DecideOffer, registry
// RecordCheck), served for gateways of the release before during an upgrade.
import { notFound } from '@ota/errors';
import { DECISION_RECORDS_KEPT_PER_DEVICE, type CheckInInput, type CheckInResult, type Device, type WholeCheckWrite } from '../domain/model';
import { heartbeatRefusal } from '../domain/heartbeat-rule';
import { newDevice } from '../domain/new-device';
import type { RegistryStore } from '../domain/ports';

type ThreeCallStore = Pick<RegistryStore, 'findDevice' | 'findDefaultChannel' | 'registerDevice' | 'recordWholeCheck' | 'trimDecisionRecords'>;

/**
 * The first call (CheckInDevice): the device as stored, or an unknown one registered; nothing is
 * written for a known device, whose RecordCheck writes it whole.
 */
export async function lookUpForCheck(store: ThreeCallStore, input: CheckInInput, now: Date): Promise<CheckInResult> {
  const existing = await store.findDevice(input.projectId, { deviceId: input.deviceId });
  if (existing) return outcomeOf(existing, input.viaProjectToken);
  if (!input.viaProjectToken) throw notFound('device not found');
  const defaultChannel = await store.findDefaultChannel(input.projectId);
  if (!defaultChannel) throw notFound('project not found');
  const registered = await store.registerDevice(newDevice(input.projectId, input.deviceId, input.reported, defaultChannel.id, now), input.ownerId, input.maxDevices, 'check');
  if (registered === 'over_limit') return { outcome: 'over_limit' };
  return registered.created ? { outcome: 'registered', device: registered.device } : outcomeOf(registered.device, input.viaProjectToken);
}

/** The third call (RecordCheck): the device in one update and the record in one insert; every 20th check trims. */
export async function recordWholeCheck(store: ThreeCallStore, record: WholeCheckWrite, warn: (error: unknown) => void): Promise<void> {
  await store.recordWholeCheck(record);
  const seq = record.checkCount + 1;
  if (seq % DECISION_RECORDS_KEPT_PER_DEVICE === 0) void store.trimDecisionRecords(record.id, seq - DECISION_RECORDS_KEPT_PER_DEVICE).catch(warn);
}

function outcomeOf(device: Device, viaProjectToken: boolean): CheckInResult {
  return { outcome: heartbeatRefusal(device, viaProjectToken) ?? 'known', device };
}
