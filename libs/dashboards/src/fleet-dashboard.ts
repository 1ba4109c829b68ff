import type { Dashboard } from '@grafana/schema';
import { IN_NAMESPACE as NS, barGauge, dashboard, stat, table, timeseries } from './panels';

/**
 * The fleet and its rollouts: what devices ask and are answered, how each deployment in progress
 * stands, what fails and why, and what the guardrails stopped. The deployment gauges come from
 * every rollout replica alike, so they are read with `max`.
 */
export function fleetDashboard(): Dashboard {
  return dashboard('ota-fleet', 'OTA: fleet and rollouts', 'Device checks and reports, the deployments in progress, failures by reason and guardrail pauses.', [
    { row: 'Now' },
    stat({ title: 'Checks per second', description: 'Device checks answered by the gateways.', queries: [{ expr: `sum(rate(ota_device_checks_total{${NS}}[$__rate_interval]))` }], unit: 'reqps' }),
    stat({ title: 'Updates offered per second', description: 'Checks answered with an offer.', queries: [{ expr: `sum(rate(ota_device_checks_total{${NS}, status="offered"}[$__rate_interval]))` }], unit: 'reqps' }),
    stat({ title: 'Deployments in progress', description: 'Active and paused deployments.', queries: [{ expr: `count(max by (deployment_id) (ota_deployment_state{${NS}}))` }] }),
    stat({ title: 'Paused by a guardrail', description: 'Deployments a guardrail paused, waiting for a person.', queries: [{ expr: `count(max by (deployment_id) (ota_deployment_state{${NS}, state="paused", paused_by=~"failure_threshold|reason_limit|health_regression"})) or vector(0)` }] }),

    { row: 'Device checks' },
    timeseries({
      title: 'Checks by outcome',
      description: 'What checks were answered: offered, up_to_date, not_in_rollout, no_compatible_build, device_inactive, over_limit, token_required.',
      queries: [{ expr: `sum by (status) (rate(ota_device_checks_total{${NS}}[$__rate_interval]))`, legend: '{{status}}' }],
      unit: 'reqps',
      stacked: true,
    }),
    timeseries({
      title: 'Status reports by event',
      description: 'Lifecycle events devices reported and the service stored.',
      queries: [{ expr: `sum by (event) (rate(ota_device_status_reports_total{${NS}}[$__rate_interval]))`, legend: '{{event}}' }],
      unit: 'reqps',
      stacked: true,
    }),

    { row: 'Deployments in progress' },
    table({
      title: 'Deployments',
      description: 'Each active or paused deployment: its state, who paused it, and its rollout percentage.',
      queries: [
        { expr: `max by (project_id, deployment_id, state, paused_by) (ota_deployment_state{${NS}})` },
        { expr: `max by (project_id, deployment_id) (ota_deployment_rollout_percentage{${NS}})` },
      ],
      width: 24,
    }),
    barGauge({
      title: 'Devices by status',
      description: 'Where the devices of each deployment in progress stand.',
      queries: [{ expr: `max by (deployment_id, status) (ota_deployment_devices{${NS}})`, legend: '{{deployment_id}} {{status}}' }],
      width: 12,
      height: 10,
    }),
    timeseries({
      title: 'Confirmed devices',
      description: 'Devices that confirmed the new build, per deployment: the rollout moving.',
      queries: [{ expr: `max by (deployment_id) (ota_deployment_devices{${NS}, status="confirmed"})`, legend: '{{deployment_id}}' }],
      height: 10,
    }),

    { row: 'Failures and guardrails' },
    timeseries({
      title: 'Failures by reason',
      description: 'failed and rolled_back reports per second, by reason. A burst of signature_invalid is a security signal.',
      queries: [{ expr: `sum by (reason) (rate(ota_device_status_reports_total{${NS}, event=~"failed|rolled_back"}[$__rate_interval]))`, legend: '{{reason}}' }],
      unit: 'reqps',
      stacked: true,
    }),
    barGauge({
      title: 'Failures per deployment and reason',
      description: 'The failures each deployment in progress has counted, by reason.',
      queries: [{ expr: `max by (deployment_id, reason) (ota_deployment_failures{${NS}})`, legend: '{{deployment_id}} {{reason}}' }],
    }),
    timeseries({
      title: 'Guardrail pauses',
      description: 'Deployments paused by a guardrail, by guardrail.',
      queries: [{ expr: `sum by (guardrail) (increase(ota_guardrail_trips_total{${NS}}[$__rate_interval]))`, legend: '{{guardrail}}' }],
      width: 24,
    }),
  ]);
}
