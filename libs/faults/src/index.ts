export { SERVICES, startFaultStack, type FaultStack } from './fault-stack';
export { call, type Answer } from './http';
export { Ledger, type AcknowledgedMutation, type Outcome, type RequestRecord, type StatusReport } from './ledger';
export { MixedLoad, type LoadSettings } from './load';
export { brokenAnswers, checkStoredStatuses, summarize, wrongBuilds, type Outage } from './verify';
