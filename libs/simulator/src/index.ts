export { assignBehaviours, type Behaviour, type InjectedShares } from './fleet';
export { simulate, type Progress, type SimulationOptions, type SimulationSummary } from './simulator';
