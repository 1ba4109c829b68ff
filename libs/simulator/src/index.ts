export { assignBehaviours, type Behaviour, type InjectedShares } from './fleet';
export { simulate, simulateHours, type Progress, type SimulationOptions, type SimulationSummary } from './simulator';
export { FleetHealth, type FleetHealthOptions, type HealthReport } from './health';
