import { isNonPublicAddress, urlProblem } from './webhook-destination';

test('loopback, link-local, private and mapped private addresses are non-public; others are public', () => {
  for (const address of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd00::1', '::ffff:10.0.0.1']) {
    expect([address, isNonPublicAddress(address)]).toEqual([address, true]);
  }
  for (const address of ['8.8.8.8', '172.32.0.1', '193.168.1.1', '2001:4860:4860::8888', '::ffff:8.8.8.8']) {
    expect([address, isNonPublicAddress(address)]).toEqual([address, false]);
  }
});

test('a webhook URL must be http(s) without credentials, and public unless the operator allows otherwise', () => {
  expect(urlProblem('https://hooks.example.com/ota', false)).toBeNull();
  expect(urlProblem('ftp://hooks.example.com/', false)).toMatch(/http or https/);
  expect(urlProblem('not a url', false)).toMatch(/http or https/);
  expect(urlProblem('https://user:pw@hooks.example.com/', false)).toMatch(/credentials/);
  for (const url of ['http://127.0.0.1:8080/', 'http://localhost/', 'http://[::1]/', 'http://169.254.169.254/latest', 'http://10.0.0.5/']) {
    expect([url, urlProblem(url, false)]).toEqual([url, expect.stringMatching(/WEBHOOK_ALLOW_PRIVATE_DESTINATIONS/)]);
    expect(urlProblem(url, true)).toBeNull();
  }
});
