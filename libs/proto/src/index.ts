// One namespace per domain, so that same-named messages (e.g. each service's Get...Request) never
// collide for the importer.
export * as registry from './gen/ota/registry/v1/registry';
export * as artifacts from './gen/ota/artifacts/v1/artifacts';
export * as rollout from './gen/ota/rollout/v1/rollout';
export * as telemetry from './gen/ota/telemetry/v1/telemetry';
export * as events from './gen/ota/events/v1/events';
export * as hardware from './gen/ota/hardware/v1/hardware';
