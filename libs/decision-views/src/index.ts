// What keeps the check's decision views (@ota/decision, which does no I/O) in step with NATS.
export * from './follow-view-events';
