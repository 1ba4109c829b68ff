import Router from '@koa/router';
import { notFound } from '@ota/errors';
import { createLogger } from '@ota/logging';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import type { ProjectAccess } from './operations';
import { OperationTable } from './operations';
import { errorMiddleware } from './errors';

const nameBody = { type: 'object', additionalProperties: false, required: ['name'], properties: { name: { type: 'string', minLength: 1 } } } as const;

const noStore = undefined as never;

describe('OperationTable', () => {
  it('refuses to serve an operation in a project that does not say how it acts there', () => {
    const table = new OperationTable(new Router(), noStore, () => Promise.reject(new Error('unused')));
    const things = table.section({ tag: 'Things', access: 'public' });
    expect(() => things.add({ route: 'GET /projects/:id/things/', operationId: 'listThings', summary: 'List things', responses: { 200: null } }, async () => undefined)).toThrow(/listThings is in a project/);
  });

  it('validates the declared body and query before the handler, and hands it what they hold', async () => {
    const table = new OperationTable(new Router(), noStore, () => Promise.reject(new Error('unused')));
    const received: unknown[] = [];
    table.section({ tag: 'Things', access: 'public' }).add(
      {
        route: 'POST /things/',
        operationId: 'createThing',
        summary: 'Create a thing',
        body: nameBody,
        query: { type: 'object', additionalProperties: false, properties: { dry_run: { type: 'string', enum: ['true'] } } },
        responses: { 201: null },
      },
      async (ctx, { body, query }) => {
        received.push({ name: body.name, dryRun: query.dry_run });
        ctx.status = 201;
      },
    );
    const post = await serve(table, async (url) => [
      await fetch(`${url}/things/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"a"}' }),
      await fetch(`${url}/things/?dry_run=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"b"}' }),
      await fetch(`${url}/things/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":""}' }),
      await fetch(`${url}/things/?dry_run=no`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"c"}' }),
    ]);
    expect(post.map((answer) => answer.status)).toEqual([201, 201, 422, 422]);
    expect(((await post[2]!.json()) as { detail: Array<{ loc: string[] }> }).detail[0]!.loc).toEqual(['body', 'name']);
    expect(((await post[3]!.json()) as { detail: Array<{ loc: string[] }> }).detail[0]!.loc).toEqual(['query', 'dry_run']);
    expect(received).toEqual([
      { name: 'a', dryRun: undefined },
      { name: 'b', dryRun: 'true' },
    ]);
  });

  it('keeps the device API on a router of its own, with the same prefix, and nothing else there', () => {
    const table = new OperationTable(new Router({ prefix: '/api/v1' }), noStore, () => Promise.reject(new Error('unused')));
    table.section({ tag: 'Device API', access: 'device' }).add({ route: 'POST /ota/check/', operationId: 'check', summary: 'Check', responses: { 200: null } }, async () => undefined);
    table.section({ tag: 'Things', access: 'public' }).add({ route: 'GET /things/', operationId: 'listThings', summary: 'List things', responses: { 200: null } }, async () => undefined);
    const routesOf = (router: Router) => router.stack.map((layer) => `${layer.methods.join(',')} ${String(layer.path)}`);
    expect(routesOf(table.deviceRouter)).toEqual(['POST /api/v1/ota/check/']);
    expect(routesOf(table.router)).toEqual(['HEAD,GET /api/v1/things/']);
  });

  it('finds the project before it reads the body, so that a stranger learns nothing from a 422', async () => {
    const asked: string[] = [];
    const projectFor = (_ctx: unknown, needed: string, what: string): Promise<ProjectAccess> => {
      asked.push(`${needed}: ${what}`);
      return Promise.reject(notFound('project not found'));
    };
    const table = new OperationTable(new Router(), noStore, projectFor);
    let handled = false;
    table.section({ tag: 'Things', access: 'public' }).add(
      { route: 'POST /projects/:id/things/', operationId: 'createThing', summary: 'Create a thing', project: 'operator', body: nameBody, responses: { 201: null } },
      async () => {
        handled = true;
      },
    );
    const [answer] = await serve(table, async (url) => [await fetch(`${url}/projects/x/things/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })]);
    expect(answer!.status).toBe(404);
    expect(asked).toEqual(['operator: Create a thing']);
    expect(handled).toBe(false);
  });
});

/** Serves the table's routes on a free port for the duration of `use`. */
async function serve(table: OperationTable, use: (url: string) => Promise<Response[]>): Promise<Response[]> {
  const logger = createLogger('test');
  logger.level = 'silent';
  const app = new Koa();
  app.use(errorMiddleware(logger));
  app.use(koaBody({ json: true, multipart: false, urlencoded: false, text: false }));
  app.use(table.router.routes());
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    return await use(`http://127.0.0.1:${(server.address() as { port: number }).port}`);
  } finally {
    server.close();
  }
}
