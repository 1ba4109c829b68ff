import type { GatewayDeps } from '../deps';
import type { OperationTable } from '../http/operations';
import * as R from '../http/response-schemas';
import { rpc } from './context';
import { exposureOf } from '../use-cases/exposure';

const exposureQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 2048, description: 'The component\'s name, as its SBOMs write it (case is ignored): `mbedtls`.' },
    purl: { type: 'string', minLength: 1, maxLength: 2048, description: 'Its package URL without a version: `pkg:github/mbed-tls/mbedtls`.' },
    cpe: { type: 'string', minLength: 1, maxLength: 2048, description: 'Its CPE 2.3, at least part, vendor and product: `cpe:2.3:a:arm:mbed_tls`.' },
    versions: { type: 'string', minLength: 1, maxLength: 256, description: 'The affected versions: `<3.6.3`, `>=2.0,<2.1.4`, `=1.2.3 || >=2.0,<2.0.7`. Without it, every version.' },
  },
} as const;

/** Which devices run a component (docs/api.md, "Exposure"). */
export function exposureRoutes(table: OperationTable, deps: GatewayDeps): void {
  const exposure = table.section({ tag: 'Artifacts', access: 'developer' });
  const { clients } = deps;

  exposure.add(
    {
      route: 'GET /projects/:id/exposure/',
      operationId: 'getExposure',
      summary: 'Which devices run a component, and which deployments move them off it',
      description:
        "The project's builds whose SBOM lists the component (by `name`, `purl` or `cpe`: one of them) within `versions`, with how many active devices run each now; the builds without an SBOM that devices run, of which it cannot be said; and the active or paused deployments of builds that do not list it. Exact: counted from the SBOMs' indexed components and every active device's `current_build_number`.",
      project: 'viewer',
      query: exposureQuery,
      responses: { 200: R.Exposure },
    },
    async (ctx, { project, query }) => {
      ctx.body = await exposureOf(clients, project.id, { name: query.name ?? '', purl: query.purl ?? '', cpe: query.cpe ?? '', versions: query.versions ?? '' }, rpc(ctx));
    },
  );
}
