export { uuidV5In } from './uuid-v5';
export { deviceUuid, devicePageKey, devicePageKeys, DEVICE_PAGE_LEVELS } from './device-ids';
export { byUuid, pageOfSorted } from './sorted-page';
export { PROBE_ENOUGH, READ_WHOLE_UP_TO, SAMPLE_DEVICES, countFromSample, readDevicePage, sampleBuckets, sampleDevices, type DevicePageQuery, type DevicePageResult, type DeviceSample, type PagedDoc } from './page-buckets';
