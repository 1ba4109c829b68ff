import { profileIn } from '@ota/manifest';
import { deviceUuid } from '@ota/ids';
import type { Device, ReportedProfile } from './model';

/** A device as first stored: seen `at`, active, in `channelId`, in no group, never checked nor updated. */
export function newDevice(projectId: string, deviceId: string, reported: ReportedProfile, channelId: string, at: Date): Device {
  return {
    id: deviceUuid(projectId, deviceId),
    projectId,
    deviceId,
    ...profileIn(reported),
    currentBuildNumber: 0,
    currentVersionLabel: reported.versionLabel ?? '',
    currentHash: reported.currentHash ?? '',
    lastOtaStatus: '',
    lastOtaReason: '',
    active: true,
    lastSeen: at,
    lastCheckAt: null,
    lastCheckStatus: '',
    channelId,
    groupIds: [],
    metadata: {},
    createdAt: at,
    tokenRequired: false,
    checkCount: 0,
  };
}
