import { ESP_SBOM_FORMATS, makeEspSbom } from '@ota/testkit';
import { InvalidSbom, readSbom, SBOM_LIMITS, type SbomComponent } from '../src/domain/sbom';

// What the service reads of an SBOM (docs/api.md, "SBOMs"): the documents Espressif's esp-idf-sbom
// writes (run here, pinned, in each format it writes) read to the same components; documents
// shaped like the SPDX and CycloneDX specifications' examples read; hostile ones are refused whole.

const COMPONENTS = [
  { name: 'mbedtls', version: '3.6.2', cpe: 'cpe:2.3:a:arm:mbed_tls:{}:*:*:*:*:*:*:*', supplier: 'Organization: Arm' },
  { name: 'lwip', version: '2.1.3', cpe: 'cpe:2.3:a:lwip_project:lwip:{}:*:*:*:*:*:*:*', supplier: 'Organization: lwIP project' },
  { name: 'sensor-driver', version: '0.4.0' },
];

/** A component as compared across formats: what every format carries. */
const comparable = (components: SbomComponent[]) =>
  components.map((component) => ({ name: component.name, version: component.version, cpes: [...component.cpes].sort(), supplier: component.supplier })).sort((a, b) => a.name.localeCompare(b.name));

test("esp-idf-sbom's four formats read to the same components", () => {
  const read = ESP_SBOM_FORMATS.map((format) => ({ format, sbom: readSbom(makeEspSbom({ version: '2.4.0', components: COMPONENTS, format })) }));
  expect(read.map(({ sbom }) => sbom.format)).toEqual(['spdx-2.2-tag-value', 'spdx-2.2-json', 'spdx-3.0.1-json-ld', 'cyclonedx-1.6-json']);
  const first = comparable(read[0]!.sbom.components);
  for (const { format, sbom } of read) expect({ format, components: comparable(sbom.components) }).toEqual({ format, components: first });
  const byName = new Map(read[0]!.sbom.components.map((component) => [component.name, component]));
  expect(byName.get('mbedtls')).toMatchObject({ version: '3.6.2', supplier: 'Arm', cpes: expect.arrayContaining(['cpe:2.3:a:arm:mbed_tls:3.6.2:*:*:*:*:*:*:*']) });
  expect(byName.get('lwip')).toMatchObject({ version: '2.1.3', supplier: 'lwIP project', cpes: ['cpe:2.3:a:lwip_project:lwip:2.1.3:*:*:*:*:*:*:*'] });
  expect(byName.get('sensor-driver')).toMatchObject({ version: '0.4.0', cpes: [] });
  // The framework the tool adds, with its version.
  expect(byName.get('esp-idf')).toMatchObject({ version: '5.5.5', supplier: 'Espressif Systems (Shanghai) CO LTD' });
}, 120_000);

test('documents shaped like the specifications read: purls and hashes too', () => {
  const spdx23Json = {
    spdxVersion: 'SPDX-2.3',
    dataLicense: 'CC0-1.0',
    SPDXID: 'SPDXRef-DOCUMENT',
    name: 'example',
    documentNamespace: 'https://example.invalid/spdx/example',
    creationInfo: { created: '2026-01-01T00:00:00Z', creators: ['Tool: example'] },
    packages: [
      {
        SPDXID: 'SPDXRef-Package-zlib',
        name: 'zlib',
        versionInfo: '1.3.1',
        supplier: 'Organization: zlib',
        downloadLocation: 'NOASSERTION',
        checksums: [{ algorithm: 'SHA256', checksumValue: 'AB'.repeat(32) }],
        externalRefs: [
          { referenceCategory: 'PACKAGE-MANAGER', referenceType: 'purl', referenceLocator: 'pkg:generic/zlib@1.3.1' },
          { referenceCategory: 'SECURITY', referenceType: 'cpe23Type', referenceLocator: 'cpe:2.3:a:zlib:zlib:1.3.1:*:*:*:*:*:*:*' },
        ],
      },
    ],
  };
  expect(readSbom(Buffer.from(JSON.stringify(spdx23Json)))).toEqual({
    format: 'spdx-2.3-json',
    components: [{ name: 'zlib', version: '1.3.1', purl: 'pkg:generic/zlib@1.3.1', cpes: ['cpe:2.3:a:zlib:zlib:1.3.1:*:*:*:*:*:*:*'], supplier: 'zlib', hashes: [{ algorithm: 'sha256', value: 'ab'.repeat(32) }] }],
  });

  const tagValue = [
    'SPDXVersion: SPDX-2.3',
    'DataLicense: CC0-1.0',
    'PackageName: zlib',
    'PackageVersion: 1.3.1',
    'PackageSupplier: Organization: zlib',
    'PackageChecksum: SHA256: ' + 'ab'.repeat(32),
    'PackageComment: <text>spans',
    'two lines</text>',
    'ExternalRef: PACKAGE-MANAGER purl pkg:generic/zlib@1.3.1',
    'FileName: ./src/zlib.c',
    'FileChecksum: SHA1: ' + 'cd'.repeat(20),
    'PackageName: crc32',
    'PackageVersion: NOASSERTION',
    'PackageSupplier: NOASSERTION',
  ].join('\n');
  expect(readSbom(Buffer.from(tagValue))).toEqual({
    format: 'spdx-2.3-tag-value',
    components: [
      { name: 'zlib', version: '1.3.1', purl: 'pkg:generic/zlib@1.3.1', cpes: [], supplier: 'zlib', hashes: [{ algorithm: 'sha256', value: 'ab'.repeat(32) }] },
      { name: 'crc32', version: 'NOASSERTION', purl: '', cpes: [], supplier: '', hashes: [] },
    ],
  });

  const cycloneDx15 = {
    bomFormat: 'CycloneDX',
    specVersion: '1.5',
    version: 1,
    metadata: { component: { type: 'firmware', name: 'thermostat', version: '7.0.0' } },
    components: [
      {
        type: 'library',
        name: 'tinycbor',
        version: '0.6.0',
        purl: 'pkg:github/intel/tinycbor@0.6.0',
        supplier: { name: 'Intel' },
        hashes: [{ alg: 'SHA-256', content: 'ef'.repeat(32) }],
        components: [{ type: 'library', name: 'tinycbor-json', version: '0.6.0' }],
      },
    ],
  };
  expect(readSbom(Buffer.from(JSON.stringify(cycloneDx15))).components.map((component) => [component.name, component.version, component.purl, component.hashes])).toEqual([
    ['thermostat', '7.0.0', '', []],
    ['tinycbor', '0.6.0', 'pkg:github/intel/tinycbor@0.6.0', [{ algorithm: 'sha-256', value: 'ef'.repeat(32) }]],
    ['tinycbor-json', '0.6.0', '', []],
  ]);

  const spdx3 = {
    '@context': 'https://spdx.org/rdf/3.0.1/spdx-context.jsonld',
    '@graph': [
      { type: 'Organization', spdxId: 'urn:example:org', name: 'Example Org' },
      {
        type: 'software_Package',
        spdxId: 'urn:example:pkg',
        name: 'coreMQTT',
        software_packageVersion: '2.3.1',
        software_packageUrl: 'pkg:github/freertos/coremqtt@2.3.1',
        suppliedBy: 'urn:example:org',
        verifiedUsing: [{ type: 'Hash', algorithm: 'sha256', hashValue: '01'.repeat(32) }],
      },
      { type: 'Relationship', spdxId: 'urn:example:rel', from: 'urn:example:doc', to: ['urn:example:pkg'], relationshipType: 'describes' },
    ],
  };
  expect(readSbom(Buffer.from(JSON.stringify(spdx3)))).toEqual({
    format: 'spdx-3.0.1-json-ld',
    components: [{ name: 'coreMQTT', version: '2.3.1', purl: 'pkg:github/freertos/coremqtt@2.3.1', cpes: [], supplier: 'Example Org', hashes: [{ algorithm: 'sha256', value: '01'.repeat(32) }] }],
  });
});

test('hostile and foreign documents are refused whole, with a sentence that says why', () => {
  const refusal = (document: string | Buffer) => {
    try {
      readSbom(Buffer.isBuffer(document) ? document : Buffer.from(document));
    } catch (error) {
      if (error instanceof InvalidSbom) return error.message;
      throw error;
    }
    throw new Error('read, not refused');
  };
  const cdx = (components: unknown) => JSON.stringify({ bomFormat: 'CycloneDX', specVersion: '1.6', components });
  expect(refusal('[' .repeat(100_000))).toMatch(/nests deeper than 64/);
  expect(refusal(cdx(Array.from({ length: SBOM_LIMITS.components + 1 }, (_, i) => ({ type: 'library', name: `c${i}` }))))).toMatch(/more than 20000/);
  // Nested components count as well.
  let nested: object = { type: 'library', name: 'leaf' };
  for (let level = 0; level < 15; level += 1) nested = { type: 'library', name: `n${level}`, components: Array.from({ length: 2 }, () => nested) };
  expect(refusal(cdx([nested]))).toMatch(/more than 20000 components/);
  expect(refusal(cdx([{ type: 'library', name: 'x'.repeat(SBOM_LIMITS.field + 1) }]))).toMatch(/longer than 2048/);
  expect(refusal(cdx({ not: 'a list' }))).toMatch(/components is not a JSON array/);
  expect(refusal(cdx([{ type: 'library', name: 7 }]))).toMatch(/a component name is not a string/);
  expect(refusal(JSON.stringify({ bomFormat: 'CycloneDX', specVersion: '1.4', components: [] }))).toMatch(/CycloneDX "1.4" is not an SBOM this service reads: send SPDX 2.2 or 2.3/);
  expect(refusal(JSON.stringify({ spdxVersion: 'SPDX-2.1', packages: [] }))).toMatch(/SPDX version "SPDX-2.1"/);
  expect(refusal('<?xml version="1.0"?><bom xmlns="http://cyclonedx.org/schema/bom/1.6"/>')).toMatch(/not an SBOM this service reads: send SPDX 2.2 or 2.3 \(tag-value or JSON\), SPDX 3.0.1 JSON-LD, or CycloneDX 1.5 or 1.6 JSON/);
  expect(refusal(Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 1]))).toMatch(/binary content/);
  expect(refusal('{"spdxVersion": "SPDX-2.3", "packages": [')).toMatch(/not valid JSON/);
  expect(refusal('SPDXVersion: SPDX-2.3\nPackageName: a\nPackageComment: <text>never closed')).toMatch(/never closed/);
  expect(refusal('SPDXVersion: SPDX-2.3\nthis line has no tag')).toMatch(/line 2 is no SPDX tag-value line/);
  expect(refusal(`SPDXVersion: SPDX-2.3\n${'PackageName: p\n'.repeat(SBOM_LIMITS.components + 1)}`)).toMatch(/more than 20000 components/);
});
