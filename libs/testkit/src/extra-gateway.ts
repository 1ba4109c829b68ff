import { join } from 'node:path';
import { freePort, serviceArgsOf, startProcess, waitForPort } from '@ota/devstack';
import { testStack } from './stack-env';

export interface ExtraGateway {
  url: string;
  metricsUrl: string;
  stop(): Promise<void>;
}

/**
 * One more gateway process on the test stack's services and stores, with settings of its own
 * (a low rate limit, say), so that a test can observe a setting without changing the shared one.
 */
export async function startExtraGateway(settings: NodeJS.ProcessEnv): Promise<ExtraGateway> {
  const stack = testStack();
  const port = await freePort();
  const metricsPort = await freePort();
  const gateway = startProcess(
    'gateway-extra',
    process.execPath,
    serviceArgsOf(join(__dirname, '..', '..', '..'), 'gateway'),
    { ...stack.gatewayEnv, ...settings, GATEWAY_PORT: String(port), METRICS_PORT: String(metricsPort) },
    { kind: 'file', path: join(stack.logDir, `gateway-extra-${port}.log`) },
  );
  await waitForPort('127.0.0.1', port, gateway, 60_000);
  return { url: `http://127.0.0.1:${port}`, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`, stop: () => gateway.stop() };
}
