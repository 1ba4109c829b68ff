/**
 * What the service reads of a build's SBOM (docs/api.md, "SBOMs"): the format, recognised from the
 * content, and the components it lists (name, version, purl, CPEs, supplier, hashes), from the
 * documents esp-idf-sbom writes and those of the same specifications: SPDX 2.2 and 2.3 (tag-value
 * and JSON), SPDX 3.0.1 JSON-LD, CycloneDX 1.5 and 1.6 JSON. The document itself is kept as sent;
 * this is what is indexed of it. Everything read is bounded: a document past a bound is refused
 * whole, never read in part.
 */

export type SbomFormat = 'spdx-2.2-tag-value' | 'spdx-2.3-tag-value' | 'spdx-2.2-json' | 'spdx-2.3-json' | 'spdx-3.0.1-json-ld' | 'cyclonedx-1.5-json' | 'cyclonedx-1.6-json';

export interface SbomComponent {
  name: string;
  /** '' when the document gives none. */
  version: string;
  /** '' when the document gives none. */
  purl: string;
  cpes: string[];
  /** The supplier's name, without SPDX's `Organization:`/`Person:`; '' when unknown (NOASSERTION). */
  supplier: string;
  /** Lowercase algorithm names as the document spells them (`sha256`, `sha-256`: see `hashName`). */
  hashes: Array<{ algorithm: string; value: string }>;
}

export interface Sbom {
  format: SbomFormat;
  components: SbomComponent[];
}

/** The bounds of what is read (docs/api.md, "SBOMs"). */
export const SBOM_LIMITS = {
  /** Components (packages) in one document. */
  components: 20_000,
  /** Nesting of JSON arrays and objects. */
  depth: 64,
  /** Characters in one name, version, purl, CPE, supplier or hash. */
  field: 2_048,
  /** CPEs and hashes of one component. */
  perComponent: 64,
} as const;

export const ACCEPTED_FORMATS = 'SPDX 2.2 or 2.3 (tag-value or JSON), SPDX 3.0.1 JSON-LD, or CycloneDX 1.5 or 1.6 JSON';

export class InvalidSbom extends Error {}

/** Reads the document; throws InvalidSbom with a sentence a person can act on. */
export function readSbom(bytes: Buffer): Sbom {
  const text = bytes.toString('utf8').replace(/^\uFEFF/, '');
  if (text.includes('\u0000')) throw new InvalidSbom(`not an SBOM this service reads (binary content): send ${ACCEPTED_FORMATS}`);
  const start = text.trimStart();
  if (start.startsWith('{') || start.startsWith('[')) return readJson(text);
  if (/^(#[^\n]*\n\s*)*SPDXVersion:/.test(start)) return readTagValue(text);
  throw new InvalidSbom(`not an SBOM this service reads: send ${ACCEPTED_FORMATS}`);
}

function readJson(text: string): Sbom {
  requireDepthWithin(text, SBOM_LIMITS.depth);
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new InvalidSbom(`the document is not valid JSON: ${(error as Error).message}`);
  }
  if (!isObject(document)) throw new InvalidSbom(`not an SBOM this service reads: send ${ACCEPTED_FORMATS}`);
  const spdxVersion = document.spdxVersion;
  if (spdxVersion === 'SPDX-2.2' || spdxVersion === 'SPDX-2.3') return { format: spdxVersion === 'SPDX-2.2' ? 'spdx-2.2-json' : 'spdx-2.3-json', components: spdx2JsonComponents(document) };
  const context = document['@context'];
  if ((Array.isArray(context) ? context : [context]).some((entry) => typeof entry === 'string' && /^https:\/\/spdx\.org\/rdf\/3\.0\.1\/spdx-context\.jsonld$/.test(entry))) {
    return { format: 'spdx-3.0.1-json-ld', components: spdx3Components(document) };
  }
  if (document.bomFormat === 'CycloneDX' && (document.specVersion === '1.5' || document.specVersion === '1.6')) {
    return { format: document.specVersion === '1.5' ? 'cyclonedx-1.5-json' : 'cyclonedx-1.6-json', components: cycloneDxComponents(document) };
  }
  const named = typeof spdxVersion === 'string' ? `SPDX version ${text_(spdxVersion)}` : document.bomFormat === 'CycloneDX' ? `CycloneDX ${text_(document.specVersion)}` : 'this JSON';
  throw new InvalidSbom(`${named} is not an SBOM this service reads: send ${ACCEPTED_FORMATS}`);
}

/** JSON.parse recurses as deep as the document nests: the depth is counted first, outside strings. */
function requireDepthWithin(text: string, limit: number): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === 0x5c) i += 1;
      else if (char === 0x22) inString = false;
    } else if (char === 0x22) inString = true;
    else if (char === 0x7b || char === 0x5b) {
      depth += 1;
      if (depth > limit) throw new InvalidSbom(`the document nests deeper than ${limit} levels`);
    } else if (char === 0x7d || char === 0x5d) depth -= 1;
  }
}

function spdx2JsonComponents(document: Record<string, unknown>): SbomComponent[] {
  return listOf(document.packages, 'packages').map((entry) => {
    const pkg = objectOf(entry, 'a package');
    const refs = listOf(pkg.externalRefs, 'externalRefs').map((ref) => objectOf(ref, 'an external reference'));
    const locators = (type: RegExp) => refs.filter((ref) => typeof ref.referenceType === 'string' && type.test(ref.referenceType)).map((ref) => field(ref.referenceLocator, 'referenceLocator'));
    return component({
      name: field(pkg.name, 'a package name'),
      version: optionalField(pkg.versionInfo, 'versionInfo'),
      purl: locators(/^purl$/)[0] ?? '',
      cpes: locators(/^cpe2[23]Type$/),
      supplier: supplierName(optionalField(pkg.supplier, 'supplier')),
      hashes: listOf(pkg.checksums, 'checksums').map((checksum) => {
        const pair = objectOf(checksum, 'a checksum');
        return { algorithm: field(pair.algorithm, 'a checksum algorithm'), value: field(pair.checksumValue, 'a checksum value') };
      }),
    });
  });
}

function spdx3Components(document: Record<string, unknown>): SbomComponent[] {
  // The graph also holds relationships, agents and files: it may be larger than the packages.
  const graph = listOf(document['@graph'], '@graph', SBOM_LIMITS.components * 10).map((element) => objectOf(element, 'an element'));
  const agents = new Map<string, string>();
  for (const element of graph) {
    if (typeof element.spdxId === 'string' && ['Organization', 'Person', 'Agent', 'SoftwareAgent'].includes(String(element.type))) agents.set(element.spdxId, optionalField(element.name, 'an agent name'));
  }
  const packages = graph.filter((element) => element.type === 'software_Package');
  if (packages.length > SBOM_LIMITS.components) tooMany();
  return packages.map((pkg) => {
      const identifiers = listOf(pkg.externalIdentifier, 'externalIdentifier').map((entry) => objectOf(entry, 'an external identifier'));
      const ofType = (type: RegExp) => identifiers.filter((entry) => typeof entry.externalIdentifierType === 'string' && type.test(entry.externalIdentifierType)).map((entry) => field(entry.identifier, 'identifier'));
      const supplier = typeof pkg.suppliedBy === 'string' ? (agents.get(pkg.suppliedBy) ?? '') : '';
      return component({
        name: field(pkg.name, 'a package name'),
        version: optionalField(pkg.software_packageVersion, 'software_packageVersion'),
        purl: optionalField(pkg.software_packageUrl, 'software_packageUrl') || (ofType(/^packageUrl$/)[0] ?? ''),
        cpes: ofType(/^cpe2[23]$/),
        supplier,
        hashes: listOf(pkg.verifiedUsing, 'verifiedUsing')
          .map((entry) => objectOf(entry, 'an integrity method'))
          .filter((entry) => entry.type === 'Hash')
          .map((hash) => ({ algorithm: field(hash.algorithm, 'a hash algorithm'), value: field(hash.hashValue, 'a hash value') })),
      });
    });
}

function cycloneDxComponents(document: Record<string, unknown>): SbomComponent[] {
  const found: SbomComponent[] = [];
  const metadata = document.metadata === undefined ? {} : objectOf(document.metadata, 'metadata');
  // The product itself (metadata.component) is listed with its parts, as SPDX lists its package.
  const walk = (entry: unknown) => {
    if (found.length > SBOM_LIMITS.components) tooMany();
    const item = objectOf(entry, 'a component');
    const evidence = item.evidence === undefined ? {} : objectOf(item.evidence, 'evidence');
    const identity = listOf(Array.isArray(evidence.identity) || evidence.identity === undefined ? evidence.identity : [evidence.identity], 'evidence.identity').map((entry) => objectOf(entry, 'an identity'));
    const supplier = item.supplier === undefined ? {} : objectOf(item.supplier, 'a supplier');
    found.push(
      component({
        name: field(item.name, 'a component name'),
        version: optionalField(item.version, 'version'),
        purl: optionalField(item.purl, 'purl'),
        cpes: [optionalField(item.cpe, 'cpe'), ...identity.filter((entry) => entry.field === 'cpe').map((entry) => field(entry.concludedValue, 'concludedValue'))].filter(Boolean),
        supplier: optionalField(supplier.name, 'a supplier name'),
        hashes: listOf(item.hashes, 'hashes').map((entry) => {
          const hash = objectOf(entry, 'a hash');
          return { algorithm: field(hash.alg, 'a hash algorithm'), value: field(hash.content, 'a hash value') };
        }),
      }),
    );
    for (const child of listOf(item.components, 'components')) walk(child);
  };
  if (metadata.component !== undefined) walk(metadata.component);
  for (const entry of listOf(document.components, 'components')) walk(entry);
  return found;
}

/**
 * SPDX tag-value: `Tag: value` lines, a value in `<text>…</text>` spanning lines. A package's
 * fields follow its `PackageName` until the next package, file or snippet.
 */
function readTagValue(text: string): Sbom {
  let format: SbomFormat | undefined;
  const components: Array<Parameters<typeof component>[0]> = [];
  let current: Parameters<typeof component>[0] | undefined;
  const lines = text.split(/\r?\n/);
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index]!;
    if (line.trim() === '' || line.startsWith('#')) continue;
    const colon = line.indexOf(':');
    if (colon < 0) throw new InvalidSbom(`line ${index + 1} is no SPDX tag-value line ("Tag: value")`);
    const tag = line.slice(0, colon).trim();
    let value = line.slice(colon + 1).trim();
    if (value.startsWith('<text>')) {
      // A text value may span lines until </text>.
      while (!value.includes('</text>') && index + 1 < lines.length) value += `\n${lines[(index += 1)]}`;
      if (!value.includes('</text>')) throw new InvalidSbom(`a <text> value of ${tag} is never closed`);
      value = value.slice('<text>'.length, value.indexOf('</text>'));
    }
    if (tag === 'SPDXVersion') {
      if (value !== 'SPDX-2.2' && value !== 'SPDX-2.3') throw new InvalidSbom(`SPDX version ${text_(value)} is not an SBOM this service reads: send ${ACCEPTED_FORMATS}`);
      format ??= value === 'SPDX-2.2' ? 'spdx-2.2-tag-value' : 'spdx-2.3-tag-value';
    } else if (tag === 'PackageName') {
      if (components.length >= SBOM_LIMITS.components) tooMany();
      current = { name: bounded(value, 'a package name'), version: '', purl: '', cpes: [], supplier: '', hashes: [] };
      components.push(current);
    } else if (tag === 'FileName' || tag === 'SnippetSPDXID' || tag === 'LicenseID') {
      current = undefined;
    } else if (current) {
      if (tag === 'PackageVersion') current.version = bounded(value, 'PackageVersion');
      else if (tag === 'PackageSupplier') current.supplier = supplierName(bounded(value, 'PackageSupplier'));
      else if (tag === 'PackageChecksum') {
        const [algorithm, ...rest] = value.split(':');
        current.hashes.push({ algorithm: bounded(algorithm!.trim(), 'a checksum algorithm'), value: bounded(rest.join(':').trim(), 'a checksum value') });
      } else if (tag === 'ExternalRef') {
        const [category, type, locator] = value.split(/\s+/);
        if (locator && /^cpe2[23]Type$/.test(type ?? '')) current.cpes.push(bounded(locator, 'a CPE'));
        else if (locator && type === 'purl' && /^PACKAGE[-_]MANAGER$/.test(category ?? '')) current.purl ||= bounded(locator, 'a purl');
      }
    }
  }
  if (!format) throw new InvalidSbom(`not an SBOM this service reads: send ${ACCEPTED_FORMATS}`);
  return { format, components: components.map(component) };
}

function component(fields: SbomComponent): SbomComponent {
  if (fields.cpes.length > SBOM_LIMITS.perComponent || fields.hashes.length > SBOM_LIMITS.perComponent) {
    throw new InvalidSbom(`component ${fields.name} has more than ${SBOM_LIMITS.perComponent} CPEs or hashes`);
  }
  return { ...fields, cpes: [...new Set(fields.cpes)], hashes: fields.hashes.map((hash) => ({ algorithm: hash.algorithm.toLowerCase(), value: hash.value.toLowerCase() })) };
}

/** `Organization: Arm` is Arm; NOASSERTION is unknown. */
function supplierName(value: string): string {
  if (value === 'NOASSERTION') return '';
  return value.replace(/^(Organization|Person|Tool):\s*/, '');
}

function tooMany(): never {
  throw new InvalidSbom(`the document lists more than ${SBOM_LIMITS.components} components`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function objectOf(value: unknown, what: string): Record<string, unknown> {
  if (!isObject(value)) throw new InvalidSbom(`${what} is not a JSON object`);
  return value;
}

/** A list the document may leave out; bounded, as everything else. */
function listOf(value: unknown, what: string, limit: number = SBOM_LIMITS.components): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new InvalidSbom(`${what} is not a JSON array`);
  if (value.length > limit) throw new InvalidSbom(`${what} holds more than ${limit} entries`);
  return value;
}

function field(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new InvalidSbom(`${what} is not a string`);
  return bounded(value, what);
}

function optionalField(value: unknown, what: string): string {
  return value === undefined || value === null ? '' : field(value, what);
}

function bounded(value: string, what: string): string {
  if (value.length > SBOM_LIMITS.field) throw new InvalidSbom(`${what} is longer than ${SBOM_LIMITS.field} characters`);
  return value;
}

/** A value of the document quoted in a refusal, cut short. */
function text_(value: unknown): string {
  return JSON.stringify(String(value).slice(0, 40));
}
