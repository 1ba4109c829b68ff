export { startStack, type RunningStack, type StackOptions } from './stack';
export { PortTaken, listensOn, lockDataDir } from './port-ownership';
export { freePort, startProcess, waitForPort, type ManagedProcess } from './processes';
export { localStackSettings } from './start-settings';
export { heapArgsOf, serviceArgsOf, SERVICE_HEAPS, type NodeHeap } from './service-heaps';
export { clusterHome } from './postgres';
export { throwawayStack, type ThrowawayStack } from './throwaway';
