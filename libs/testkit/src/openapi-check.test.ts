import { OpenApiCheck } from './openapi-check';

const document = {
  paths: {
    '/api/v1/projects/{id}/': {
      get: {
        responses: {
          '200': { content: { 'application/json': { schema: { $ref: '#/components/schemas/Project' } } } },
          '404': { content: { 'application/json': { schema: { type: 'object', required: ['detail'] } } } },
        },
      },
    },
  },
  components: { schemas: { Project: { type: 'object', required: ['id'], properties: { id: { type: 'string', format: 'uuid' } } } } },
};

describe('OpenApiCheck', () => {
  const check = new OpenApiCheck(document);
  const path = '/api/v1/projects/7d1c3c52-3f5b-4c1e-9a3f-0a0c5c8e8c1e/';

  it('accepts a documented status with a matching body', () => {
    expect(() => check.check('GET', path, 200, 'application/json', { id: '7d1c3c52-3f5b-4c1e-9a3f-0a0c5c8e8c1e' })).not.toThrow();
  });

  it('refuses a body that breaks the schema', () => {
    // The schema is a reference: the check follows it into the document's components.
    expect(() => check.check('GET', path, 200, 'application/json', { id: 'not-a-uuid' })).toThrow(/breaks the OpenAPI schema/);
  });

  it('refuses a status the operation does not document', () => {
    expect(() => check.check('GET', path, 500, 'application/json', { detail: 'x' })).toThrow(/does not list/);
  });
});
