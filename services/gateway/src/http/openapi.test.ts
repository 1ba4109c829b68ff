import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeApi } from '../app';

const COMMITTED = join(__dirname, '..', '..', '..', '..', 'docs', 'openapi.json');

interface Document {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: object }> }> }>>;
  components: { schemas: Record<string, object> };
}

test('docs/openapi.json is the document the gateway serves (npm run openapi rewrites it)', () => {
  const committed = JSON.parse(readFileSync(COMMITTED, 'utf8')) as object;
  const served = JSON.parse(JSON.stringify(describeApi())) as object;
  if (JSON.stringify(committed) !== JSON.stringify(served)) {
    throw new Error('docs/openapi.json differs from the document the gateway serves: run `npm run openapi` and commit the result');
  }
});

test('an answer that holds a named schema refers to its component instead of copying it', () => {
  const document = describeApi() as Document;
  const listDevices = document.paths['/api/v1/projects/{id}/devices/']!.get!.responses['200']!.content!['application/json']!.schema;
  expect(listDevices).toEqual({ type: 'array', items: { $ref: '#/components/schemas/Device' } });
  const deployment = document.components.schemas.Deployment as { properties: Record<string, object> };
  expect(deployment.properties.guardrails).toEqual({ $ref: '#/components/schemas/Guardrails' });
  // A component is defined in full where it is declared.
  expect(Object.keys((document.components.schemas.Device as { properties: object }).properties)).toContain('chip_family');
});
