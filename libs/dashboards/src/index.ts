import type { Dashboard } from '@grafana/schema';
import { fleetDashboard } from './fleet-dashboard';
import { servicesDashboard } from './services-dashboard';

export { familyOf, metricNamesOf } from './metric-names';

/** The chart's dashboards; each is written to helm/ota/monitoring/dashboards/<uid>.json. */
export function chartDashboards(): Dashboard[] {
  return [fleetDashboard(), servicesDashboard()];
}

/** A dashboard as the chart carries it: stable JSON, two-space indented, with a final newline. */
export function dashboardJson(board: Dashboard): string {
  return `${JSON.stringify(board, null, 2)}\n`;
}
