export { uuidV5In } from './uuid-v5';
export { deviceUuid, devicePageKey, devicePageKeys, DEVICE_PAGE_LEVELS } from './device-ids';
