import { registry as pb } from '@ota/proto';
import type { Device } from '../domain/model';
import { deviceMessage } from './registry-handlers';

const AT = new Date('2026-11-01T00:00:00Z');
const DEVICE: Device = {
  id: 'uuid-1',
  projectId: 'p1',
  deviceId: 'unit-1',
  framework: 'esp_idf',
  chipFamily: 'esp32c3',
  boardId: 'devkitm-1',
  hardwareRevision: '',
  partitionProfile: 'ota_4mb',
  nvsSchemaVersion: null,
  securityMode: '',
  chipRevision: null,
  secureVersion: null,
  currentBuildNumber: 3,
  currentVersionLabel: '1.0.3',
  currentHash: '',
  lastOtaStatus: '',
  lastOtaReason: '',
  active: true,
  lastSeen: AT,
  lastCheckAt: null,
  lastCheckStatus: 'up_to_date',
  channelId: 'stable',
  groupIds: [],
  metadata: {},
  createdAt: AT,
  tokenRequired: false,
  checkCount: 1,
};

test('a device message carries the hardware in its hardware field and again flat, where a reader of the previous release looks', () => {
  const decoded = pb.Device.decode(pb.Device.encode(deviceMessage(DEVICE)).finish());
  const hardware = { framework: 'esp_idf', chipFamily: 'esp32c3', boardId: 'devkitm-1', hardwareRevision: '', partitionProfile: 'ota_4mb', nvsSchemaVersion: undefined, securityMode: '' };
  expect(decoded.hardware).toEqual(hardware);
  expect(decoded).toMatchObject(hardware);
});
