// The check's decision (docs/api.md, "The check decision"), in one place for registry, which
// answers checks, and rollout, whose previews and offers use the same rules. Pure: no NATS, no
// store; @ota/decision-views keeps the views in step with NATS.
export * from './model';
export * from './decide';
export * from './targeting';
export * from './compatibility';
export * from './cohort';
export * from './views';
export * from './maintenance-windows';
export { HEALTH_PERIOD_MS, healthPeriodStart } from './health-periods';
