// Pages of a project's devices as the API serves them (`limit`/`after_id`, with the total), for
// the device list and a group's members.
import type { operations } from '../generated/api';
import { answerWithHeaders, api } from './api';
import type { Device, DeviceTotal } from './types';

type DeviceQuery = NonNullable<operations['listDevices']['parameters']['query']>;

export const DEVICE_PAGE_SIZE = 50;

/**
 * The device list's filters, as the URL holds them (so a reload or a shared link keeps them). The
 * fields show the URL's values, so leaving the filters by a link clears the fields too.
 */
export const FILTERS = ['q', 'active', 'group_id', 'channel_id', 'chip_family'] as const;

export interface DevicePage {
  devices: Device[];
  total: DeviceTotal;
  /** Where the next page starts; none on the last page. */
  nextAfterId?: string;
}

/** One page of devices as the server answered it, with its count and where the next page starts. */
export async function devicePage(projectId: string, filters: URLSearchParams, afterId: string, limit = DEVICE_PAGE_SIZE): Promise<DevicePage> {
  const query: Record<string, string> = { limit: String(limit) };
  if (afterId) query.after_id = afterId;
  for (const key of FILTERS) if (filters.get(key)) query[key] = filters.get(key)!;
  // The filters come from the URL as typed; the API answers a value it does not take with its own detail.
  const page = await answerWithHeaders(api.GET('/api/v1/projects/{id}/devices/', { params: { path: { id: projectId }, query: query as DeviceQuery } }));
  const estimate = page.headers.get('x-total-count-estimate');
  return {
    devices: page.body,
    total: estimate === null ? { count: Number(page.headers.get('x-total-count') ?? 0), estimated: false } : { count: Number(estimate), estimated: true },
    nextAfterId: page.headers.get('x-next-after-id') ?? undefined,
  };
}
