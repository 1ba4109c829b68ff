import { isNonPublicAddress, urlProblem } from './webhook-destination';

test('every special-purpose range, and every IPv6 form that carries a non-public IPv4 address, is non-public', () => {
  const nonPublic = [
    '127.0.0.1', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '192.0.0.170',
    '192.0.2.1', '198.51.100.7', '203.0.113.9', '198.18.0.1', '192.88.99.1', '224.0.0.1', '240.0.0.1', '255.255.255.255',
    '::', '::1', 'fe80::1', 'fd00::1', 'fec0::1', 'ff02::1', '2001:db8::1', '100::1', '2001::1', '3fff::1', '64:ff9b:1::1',
    // IPv4-mapped, IPv4-compatible, NAT64 and 6to4 forms of loopback and private addresses
    '::ffff:10.0.0.1', '::ffff:127.0.0.1', '::127.0.0.1', '64:ff9b::127.0.0.1', '64:ff9b::a9fe:a9fe', '2002:7f00:1::', '2002:a00:1::1',
  ];
  for (const address of nonPublic) expect([address, isNonPublicAddress(address)]).toEqual([address, true]);
  for (const address of ['8.8.8.8', '172.32.0.1', '193.168.1.1', '2001:4860:4860::8888', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1', '2606:4700::1111']) {
    expect([address, isNonPublicAddress(address)]).toEqual([address, false]);
  }
});

test('a webhook URL must be http(s) without credentials, and public unless the operator allows otherwise', () => {
  expect(urlProblem('https://hooks.example.com/ota', false)).toBeNull();
  expect(urlProblem('ftp://hooks.example.com/', false)).toMatch(/http or https/);
  expect(urlProblem('not a url', false)).toMatch(/http or https/);
  expect(urlProblem('https://user:pw@hooks.example.com/', false)).toMatch(/credentials/);
  const refused = [
    'http://127.0.0.1:8080/', 'http://localhost/', 'http://localhost./', 'http://LOCALHOST/', 'http://localhost.localdomain/', 'http://app.localhost/',
    'http://metadata.google.internal/computeMetadata/v1/', 'http://printer.local/', 'http://[::1]/', 'http://169.254.169.254/latest', 'http://10.0.0.5/',
    'http://[::127.0.0.1]/', 'http://[64:ff9b::127.0.0.1]/', 'http://[2002:7f00:1::]/', 'http://[::ffff:127.0.0.1]/', 'http://0x7f000001/', 'http://2130706433/',
  ];
  for (const url of refused) {
    expect([url, urlProblem(url, false)]).toEqual([url, expect.stringMatching(/WEBHOOK_ALLOW_PRIVATE_DESTINATIONS/)]);
    expect(urlProblem(url, true)).toBeNull();
  }
});
