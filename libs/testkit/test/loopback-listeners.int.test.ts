import { isLoopback, startKeycloak, testRunListeners, type Keycloak } from '@ota/testkit';

// Test traffic stays on this machine: every process a test run starts (the stack, Keycloak, extra
// gateways, the device clients) listens on loopback alone. Keycloak is started here too, as the
// sign-in tests start it: its clustered cache once listened on the machine's address (JGroups).

let keycloak: Keycloak | undefined;

afterAll(async () => {
  await keycloak?.stop();
});

test('no process the test run started listens off loopback', async () => {
  keycloak = await startKeycloak();
  const listeners = testRunListeners();
  // The stack's servers are found at all: the check reads what it should.
  expect(listeners.length).toBeGreaterThan(5);
  expect(listeners.some((listener) => listener.command.includes('kc.sh') || listener.command.includes('keycloak'))).toBe(true);
  expect(listeners.filter((listener) => !isLoopback(listener.address))).toEqual([]);
});
