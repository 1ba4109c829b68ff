import type { Principal } from '../src/auth/principal';
import type { Caller, UseCasePorts } from '../src/use-cases/ports';

export interface RecordedCall {
  /** `port.method`, for example `rollout.countDeployments`. */
  name: string;
  args: unknown[];
}

/** An answer for one `port.method`; a thrown error is the call's failure. */
type Answer = (...args: any[]) => unknown;

/**
 * Fake ports for use-case tests: every call is recorded in order, and answered by `answers` under
 * its `port.method` name, or with an empty message when none is given.
 */
export function recordingPorts(answers: Record<string, Answer> = {}) {
  const calls: RecordedCall[] = [];
  const port = (portName: string) =>
    new Proxy(
      {},
      {
        get: (_target, method) => {
          if (typeof method !== 'string' || method === 'then') return undefined;
          const name = `${portName}.${method}`;
          return async (...args: unknown[]) => {
            calls.push({ name, args });
            return answers[name] ? answers[name](...args) : {};
          };
        },
      },
    );
  const names = ['registry', 'rollout', 'artifacts', 'telemetry', 'tokens', 'users', 'audit'] as const;
  const ports = { ...Object.fromEntries(names.map((name) => [name, port(name)])), patchBasesPerBuild: 3 } as unknown as UseCasePorts;
  return {
    ports,
    calls,
    /** The names of the calls made, in order. */
    called: () => calls.map((call) => call.name),
    /** The first argument of the first call of `name`. */
    requestOf: (name: string) => calls.find((call) => call.name === name)?.args[0],
  };
}

export const caller: Caller = {
  principal: { userId: 'user-1', isStaff: false, token: { kind: 'personal', id: 'token-1', prefix: 'ota_abc' } } as unknown as Principal,
  call: { requestId: 'request-1' },
};
