import { connectMongo } from '@ota/mongo';
import { api, checkBody, makeEspSbom, MANIFEST, randomBinary, setupProject, takeOfferedBuild, testStack, uploadForm, type ProjectFixture } from '@ota/testkit';

// A build's SBOM through the API (docs/api.md, "SBOMs"), on the real stack: documents esp-idf-sbom
// writes are taken, read and indexed, answered back byte for byte; a build keeps its first one, also
// when two arrive at once; hostile or foreign documents are refused with nothing stored.

const artifactsDatabase = () => String(testStack().gatewayEnv.MONGODB_DATABASE).replace(/gateway$/, 'artifacts');
const COMPONENTS = [
  { name: 'mbedtls', version: '3.6.2', cpe: 'cpe:2.3:a:arm:mbed_tls:{}:*:*:*:*:*:*:*', supplier: 'Organization: Arm' },
  { name: 'lwip', version: '2.1.3' },
];

async function uploadBuild(f: ProjectFixture, version: string): Promise<{ id: string; build_number: number }> {
  const uploaded = await api('POST', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.user.token, body: uploadForm({ ...MANIFEST, version_label: version }, randomBinary(256)) });
  expect(uploaded.status).toBe(201);
  return uploaded.body;
}

async function indexedComponents(artifactId: string): Promise<string[]> {
  const mongo = await connectMongo({ uri: testStack().mongodbUri, database: artifactsDatabase() });
  try {
    const docs = await mongo.collection('sbom_components').find({ artifact_id: artifactId }).toArray();
    return docs.map((doc) => `${doc.name}@${doc.version}`).sort();
  } finally {
    await mongo.close();
  }
}

test('an SBOM is taken once, indexed, audited and answered as sent', async () => {
  const f = await setupProject();
  const build = await uploadBuild(f, '3.0.0');
  const path = `/api/v1/projects/${f.project.id}/artifacts/${build.id}/sbom/`;
  expect((await api('GET', path, { token: f.apiToken })).status).toBe(404);
  const document = makeEspSbom({ version: '3.0.0', components: COMPONENTS, format: 'cyclonedx-json' });
  const put = await api('PUT', path, { token: f.user.token, body: document });
  expect(put.status).toBe(200);
  expect(put.body.sbom).toMatchObject({ format: 'cyclonedx-1.6-json', size: document.length, components: 5 });
  expect(await indexedComponents(build.id)).toEqual(['component-main@3.0.0', 'esp-idf@5.5.5', 'lwip@2.1.3', 'mbedtls@3.6.2', 'project-app@3.0.0']);

  const got = await fetch(`${testStack().gatewayUrl}${path}`, { headers: { authorization: `Bearer ${f.apiToken}` } });
  expect([got.status, got.headers.get('content-type'), got.headers.get('etag')]).toEqual([200, 'application/vnd.cyclonedx+json', `"${put.body.sbom.sha256}"`]);
  expect(Buffer.from(await got.arrayBuffer()).equals(document)).toBe(true);

  // Again: nothing changes. Another document: the build keeps its first.
  expect((await api('PUT', path, { token: f.user.token, body: document })).status).toBe(200);
  const other = await api('PUT', path, { token: f.user.token, body: makeEspSbom({ version: '3.0.0', components: COMPONENTS, format: 'spdx-tag-value' }) });
  expect([other.status, other.body.detail]).toEqual([409, expect.stringContaining("a build's SBOM is not replaced")]);
  const listed = (await api('GET', `/api/v1/projects/${f.project.id}/artifacts/`, { token: f.apiToken })).body as Array<{ id: string; sbom: unknown }>;
  expect(listed.find((artifact) => artifact.id === build.id)!.sbom).toEqual(put.body.sbom);
  const audit = await api('GET', `/api/v1/projects/${f.project.id}/audit/?action=artifact.sbom_uploaded`, { token: f.user.token });
  expect(audit.body.map((event: { details: { format: string } }) => event.details.format)).toEqual(['cyclonedx-1.6-json']);
}, 120_000);

test('two different SBOMs sent at once: one is kept, the other refused, and only its components are indexed', async () => {
  const f = await setupProject();
  for (let trial = 0; trial < 3; trial += 1) {
    const build = await uploadBuild(f, `4.0.${trial}`);
    const path = `/api/v1/projects/${f.project.id}/artifacts/${build.id}/sbom/`;
    const documents = [
      makeEspSbom({ version: `4.0.${trial}`, components: COMPONENTS, format: 'spdx-json' }),
      makeEspSbom({ version: `4.0.${trial}`, components: COMPONENTS.slice(0, 1), format: 'spdx-json-ld' }),
    ];
    const answers = await Promise.all(documents.map((body) => api('PUT', path, { token: f.user.token, body })));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
    const kept = answers.findIndex((answer) => answer.status === 200);
    const got = await fetch(`${testStack().gatewayUrl}${path}`, { headers: { authorization: `Bearer ${f.apiToken}` } });
    expect(Buffer.from(await got.arrayBuffer()).equals(documents[kept]!)).toBe(true);
    expect((await indexedComponents(build.id)).length).toBe(answers[kept]!.body.sbom.components);
  }
}, 180_000);

test('foreign, hostile and oversized documents are refused with a detail, and nothing is stored', async () => {
  const f = await setupProject();
  const build = await uploadBuild(f, '5.0.0');
  const path = `/api/v1/projects/${f.project.id}/artifacts/${build.id}/sbom/`;
  const refusals: Array<[string, Buffer | string, number, RegExp]> = [
    ['xml', '<?xml version="1.0"?><bom xmlns="http://cyclonedx.org/schema/bom/1.6"/>', 400, /send SPDX 2.2 or 2.3 \(tag-value or JSON\), SPDX 3.0.1 JSON-LD, or CycloneDX 1.5 or 1.6 JSON/],
    ['deep', '['.repeat(200_000), 400, /nests deeper than 64 levels/],
    ['wrong types', JSON.stringify({ bomFormat: 'CycloneDX', specVersion: '1.6', components: [{ name: { not: 'a string' } }] }), 400, /a component name is not a string/],
    ['too many', JSON.stringify({ bomFormat: 'CycloneDX', specVersion: '1.6', components: Array.from({ length: 20_001 }, (_, i) => ({ type: 'library', name: `c${i}` })) }), 400, /more than 20000/],
    ['too large', Buffer.alloc(4 * 1024 * 1024 + 1, 0x20), 413, /at most 4194304 bytes \(SBOM_MAX_BYTES\)/],
  ];
  for (const [what, body, status, detail] of refusals) {
    const answer = await api('PUT', path, { token: f.user.token, body: Buffer.isBuffer(body) ? body : Buffer.from(body) });
    expect([what, answer.status, answer.body.detail]).toEqual([what, status, expect.stringMatching(detail)]);
  }
  expect((await api('GET', path, { token: f.apiToken })).status).toBe(404);
  expect(await indexedComponents(build.id)).toEqual([]);
  // Another project's build is no build here.
  const other = await setupProject();
  const document = makeEspSbom({ version: '5.0.0', components: COMPONENTS, format: 'spdx-tag-value' });
  expect((await api('PUT', `/api/v1/projects/${other.project.id}/artifacts/${build.id}/sbom/`, { token: other.user.token, body: document })).status).toBe(404);
}, 120_000);

test('exposure: which builds list a component within the versions, how many devices run them, and which deployments move them off it', async () => {
  const f = await setupProject();
  const base = `/api/v1/projects/${f.project.id}`;
  const release = async (version: string, mbedtls?: string) => {
    const released = await api('POST', `${base}/release/`, { token: f.user.token, body: uploadForm({ ...MANIFEST, version_label: version }, randomBinary(128)) });
    expect(released.status).toBe(201);
    if (mbedtls) {
      const sbom = makeEspSbom({ version, components: [{ name: 'mbedtls', version: mbedtls, cpe: 'cpe:2.3:a:arm:mbed_tls:{}:*:*:*:*:*:*:*' }], format: 'spdx-json' });
      expect((await api('PUT', `${base}/artifacts/${released.body.artifact_id}/sbom/`, { token: f.user.token, body: sbom })).status).toBe(200);
    }
    return released.body as { artifact_id: string; deployment_id: string; build_number: number };
  };
  // Build 1 holds mbedtls 3.6.2, build 2 the fixed 3.6.3, build 3 has no SBOM; a fourth device never updated.
  const first = await release('1.0.0', '3.6.2');
  for (const unit of ['d1', 'd2', 'd3']) await takeOfferedBuild(f, unit, 0);
  const fixed = await release('1.0.1', '3.6.3');
  await takeOfferedBuild(f, 'd3', first.build_number);
  const sbomless = await release('1.0.2');
  await takeOfferedBuild(f, 'd2', first.build_number);
  expect((await api('POST', '/api/v1/ota/check/', { token: f.deviceScopeToken, json: checkBody('d4', { current_build_number: 99 }) })).status).toBe(200);

  const vulnerable = await api('GET', `${base}/exposure/?name=MbedTLS&versions=${encodeURIComponent('<3.6.3')}`, { token: f.apiToken });
  expect(vulnerable.status).toBe(200);
  expect(vulnerable.body).toEqual({
    builds: [{ artifact_id: first.artifact_id, build_number: first.build_number, version_label: '1.0.0', component: { name: 'mbedtls', version: '3.6.2', purl: '' }, devices: 1 }],
    devices: 1,
    unknown: { builds: [{ artifact_id: sbomless.artifact_id, build_number: sbomless.build_number, devices: 1 }], devices: 1, never_updated: 1 },
    deployments: [
      { deployment_id: fixed.deployment_id, build_number: fixed.build_number, state: 'active', rollout_percentage: 100, target: 'without_component' },
      { deployment_id: sbomless.deployment_id, build_number: sbomless.build_number, state: 'active', rollout_percentage: 100, target: 'without_sbom' },
    ],
  });
  // By CPE, vendor and product: the fixed build holds a later version.
  const byCpe = await api('GET', `${base}/exposure/?cpe=cpe:2.3:a:arm:mbed_tls&versions=${encodeURIComponent('>=3.6.3')}`, { token: f.apiToken });
  expect(byCpe.body.builds.map((build: { build_number: number; devices: number }) => [build.build_number, build.devices])).toEqual([[fixed.build_number, 1]]);
  // Every version, and a component no SBOM lists.
  expect((await api('GET', `${base}/exposure/?name=mbedtls`, { token: f.apiToken })).body.devices).toBe(2);
  expect((await api('GET', `${base}/exposure/?name=zlib`, { token: f.apiToken })).body).toMatchObject({ builds: [], devices: 0 });
  // Recorded as a vulnerability: its exposure then is kept, its VEX statements apart.
  const vulnerabilities = `${base}/vulnerabilities/`;
  const recorded = await api('POST', vulnerabilities, {
    token: f.user.token,
    json: { advisory_id: 'CVE-2026-31337', component: { name: 'mbedtls' }, versions: '<3.6.3', known_at: '2026-12-01T08:00:00Z', statements: [{ artifact_id: sbomless.artifact_id, status: 'affected' }] },
  });
  expect([recorded.status, recorded.body.detail]).toEqual([201, undefined]);
  expect(recorded.body).toMatchObject({
    id: 'CVE-2026-31337',
    component: { name: 'mbedtls', purl: null, cpe: null },
    versions: '<3.6.3',
    known_at: '2026-12-01T08:00:00.000Z',
    exposure_when_recorded: { builds: [{ artifact_id: first.artifact_id, build_number: first.build_number, component_version: '3.6.2', devices: 1 }], devices: 1 },
    statements: [{ artifact_id: sbomless.artifact_id, build_number: sbomless.build_number, status: 'affected', justification: null }],
  });
  const again = await api('POST', vulnerabilities, { token: f.user.token, json: { advisory_id: 'CVE-2026-31337', component: { name: 'lwip' } } });
  expect([again.status, again.body.detail]).toEqual([409, expect.stringContaining('recorded in this project already')]);
  const statement = `${vulnerabilities}CVE-2026-31337/statements/${first.artifact_id}/`;
  const unjustified = await api('PUT', statement, { token: f.user.token, json: { status: 'not_affected' } });
  expect([unjustified.status, unjustified.body.detail]).toEqual([400, expect.stringContaining('not_affected needs a justification')]);
  const justified = await api('PUT', statement, { token: f.user.token, json: { status: 'not_affected', justification: 'vulnerable_code_not_in_execute_path', note: 'TLS 1.3 is off' } });
  expect(justified.body.statements.map((entry: { build_number: number; status: string }) => [entry.build_number, entry.status])).toEqual([
    [first.build_number, 'not_affected'],
    [sbomless.build_number, 'affected'],
  ]);
  // The exposure kept is what it was; the list and the read agree.
  expect((await api('GET', `${vulnerabilities}CVE-2026-31337/`, { token: f.apiToken })).body).toEqual(justified.body);
  expect((await api('GET', vulnerabilities, { token: f.apiToken })).body).toEqual([justified.body]);
  for (const [body, detail] of [
    [{ advisory_id: 'CVE-26-1', component: { name: 'x' } }, /a CVE id/],
    [{ advisory_id: 'CVE-2026-10001', component: { name: 'x' }, statements: [{ artifact_id: '00000000-0000-4000-8000-000000000000', status: 'fixed' }] }, /names no build of this project/],
    [{ advisory_id: 'CVE-2026-10002', component: { name: 'x' }, versions: 'latest' }, /not a comparison/],
  ] as const) {
    const refused = await api('POST', vulnerabilities, { token: f.user.token, json: body });
    expect([refused.status, refused.body.detail]).toEqual([400, expect.stringMatching(detail)]);
  }
  expect((await api('GET', `${vulnerabilities}CVE-2026-99999/`, { token: f.apiToken })).status).toBe(404);
  // The report: build 1 is stated not affected, the SBOM-less build 3 affected; a later build without it is the fix.
  const fix = await release('1.0.3', '3.6.3');
  const report = await api('GET', `${vulnerabilities}CVE-2026-31337/report/`, { token: f.apiToken });
  const today = new Date().toISOString().slice(0, 10);
  expect(report.body).toMatchObject({
    id: 'CVE-2026-31337',
    known_at: '2026-12-01T08:00:00.000Z',
    affected_builds: [{ artifact_id: sbomless.artifact_id, build_number: sbomless.build_number }],
    devices_when_recorded: 1,
    devices_now: 1,
    fix: { build_number: fix.build_number, deployment_id: fix.deployment_id, state: 'active', rollout_percentage: 100 },
  });
  expect(report.body.devices_per_day.at(-1)).toEqual({ day: today, devices: 1 });
  const days = await fetch(`${testStack().gatewayUrl}${vulnerabilities}CVE-2026-31337/report/days/`, { headers: { authorization: `Bearer ${f.apiToken}` } });
  expect([days.status, days.headers.get('content-type')]).toEqual([200, 'text/csv; charset=utf-8']);
  expect((await days.text()).trim().split('\n')).toEqual(['day,devices_affected', ...report.body.devices_per_day.map((entry: { day: string; devices: number }) => `${entry.day},${entry.devices}`)]);
  const audit = await api('GET', `${base}/audit/?action=vulnerability`, { token: f.user.token });
  expect(audit.body.map((event: { action: string }) => event.action).sort()).toEqual(['vulnerability.recorded', 'vulnerability.statement_set']);

  // Refusals say what to send.
  for (const [query, detail] of [
    ['?name=mbedtls&cpe=cpe:2.3:a:arm:mbed_tls', /one way: name, purl or cpe/],
    ['', /one way: name, purl or cpe/],
    ['?name=mbedtls&versions=latest', /versions: "latest" is not a comparison/],
    ['?purl=pkg:github/mbed-tls/mbedtls@3.6.2', /without its version/],
    ['?cpe=mbed_tls', /cpe names at least a part, vendor and product/],
  ] as const) {
    const refused = await api('GET', `${base}/exposure/${query}`, { token: f.apiToken });
    expect([query, refused.status, refused.body.detail]).toEqual([query, 400, expect.stringMatching(detail)]);
  }
}, 180_000);
