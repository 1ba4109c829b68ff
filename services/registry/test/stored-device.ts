import { deviceUuid } from '@ota/ids';
import type { Device } from '../src/domain/model';

/** A device as registry makes one: its UUID derived from the project and its device_id. */
export function storedDevice(projectId: string, deviceId: string, channelId: string, createdAt: Date, overrides: Partial<Device> = {}): Device {
  return {
    id: deviceUuid(projectId, deviceId),
    projectId,
    deviceId,
    framework: 'esp_idf',
    chipFamily: 'esp32',
    boardId: '',
    hardwareRevision: '',
    partitionProfile: '',
    nvsSchemaVersion: null,
    securityMode: '',
    chipRevision: null,
    secureVersion: null,
    currentBuildNumber: 0,
    currentVersionLabel: '',
    currentHash: '',
    lastOtaStatus: '',
    lastOtaReason: '',
    active: true,
    lastSeen: null,
    lastCheckAt: null,
    lastCheckStatus: '',
    channelId,
    groupIds: [],
    metadata: {},
    createdAt,
    tokenRequired: false,
    checkCount: 0,
    ...overrides,
  };
}
