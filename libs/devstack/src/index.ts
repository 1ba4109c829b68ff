export { startStack, type RunningStack, type StackOptions } from './stack';
export { PortTaken, listensOn, lockDataDir } from './port-ownership';
export { freePort, startProcess, waitForPort, type ManagedProcess } from './processes';
export { localStackSettings } from './start-settings';
export { clusterHome } from './postgres';
export { throwawayStack, type ThrowawayStack } from './throwaway';
