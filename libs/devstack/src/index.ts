export { startStack, type RunningStack, type StackOptions } from './stack';
export { freePort, startProcess, waitForPort, type ManagedProcess } from './processes';
