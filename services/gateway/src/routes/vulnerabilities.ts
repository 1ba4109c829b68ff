import { notFound } from '@ota/errors';
import type { artifacts } from '@ota/proto';
import type { Context } from 'koa';
import type { GatewayDeps } from '../deps';
import type { OperationTable } from '../http/operations';
import * as R from '../http/response-schemas';
import { exposureOf } from '../use-cases/exposure';
import { reportCsv, vulnerabilityReport } from '../use-cases/vulnerability-report';
import { pathId, rpc } from './context';

const VEX_STATUSES = ['affected', 'not_affected', 'fixed', 'under_investigation'] as const;
const STATEMENT_FIELDS = {
  status: { type: 'string', enum: VEX_STATUSES },
  justification: {
    type: 'string',
    enum: ['component_not_present', 'vulnerable_code_not_present', 'vulnerable_code_not_in_execute_path', 'vulnerable_code_cannot_be_controlled_by_adversary', 'inline_mitigations_already_exist'],
    description: 'With `not_affected` only, and then required.',
  },
  note: { type: 'string', maxLength: 4096 },
} as const;

const recordBody = {
  type: 'object',
  additionalProperties: false,
  required: ['advisory_id', 'component'],
  properties: {
    advisory_id: { type: 'string', maxLength: 64, description: 'A CVE id (`CVE-2025-12345`) or a GitHub advisory id (`GHSA-xxxx-xxxx-xxxx`): one record per advisory and project.' },
    component: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      maxProperties: 1,
      description: 'The affected component, named one way, as `GET .../exposure/` names it.',
      properties: { name: { type: 'string', minLength: 1, maxLength: 2048 }, purl: { type: 'string', minLength: 1, maxLength: 2048 }, cpe: { type: 'string', minLength: 1, maxLength: 2048 } },
    },
    versions: { type: 'string', minLength: 1, maxLength: 256, description: 'The affected versions (docs/api.md, "Exposure"); without it, every version.' },
    summary: { type: 'string', maxLength: 4096 },
    known_at: { type: 'string', format: 'date-time', description: 'When it became known to the manufacturer: the clock of the CRA\'s reports. Default: now.' },
    statements: {
      type: 'array',
      maxItems: 1000,
      description: "Per-build VEX statements, kept apart from the SBOMs: a build `not_affected` or `fixed` is not counted as affected, one `affected` is, listed in an SBOM or not.",
      items: { type: 'object', additionalProperties: false, required: ['artifact_id', 'status'], properties: { artifact_id: { type: 'string', format: 'uuid' }, ...STATEMENT_FIELDS } },
    },
  },
} as const;

const statementBody = { type: 'object', additionalProperties: false, required: ['status'], properties: STATEMENT_FIELDS } as const;

/** An advisory id in the path: anything else names nothing (404). */
function advisoryOf(ctx: Context): string {
  const id = String(ctx.params.vid);
  if (!/^(CVE-\d{4}-\d{4,7}|GHSA(-[23456789cfghjmpqrvwx]{4}){3})$/.test(id)) throw notFound('no such vulnerability in this project');
  return id;
}

/** Vulnerabilities a project records, with their exposure then and their VEX statements (docs/api.md, "Vulnerabilities"). */
export function vulnerabilityRoutes(table: OperationTable, deps: GatewayDeps): void {
  const section = table.section({ tag: 'Vulnerabilities', access: 'developer' });
  const { clients, audit } = deps;

  section.add(
    {
      route: 'POST /projects/:id/vulnerabilities/',
      operationId: 'recordVulnerability',
      summary: 'Record a vulnerability, with its exposure now',
      description:
        'Records an advisory against a component and versions: its exposure now (as `GET .../exposure/` answers it) is kept with it, and its VEX statements are kept apart from the SBOMs. The same advisory twice in a project is 409; a malformed advisory id, component, range or statement is 400.',
      project: 'operator',
      body: recordBody,
      responses: { 201: R.Vulnerability },
      errors: [409],
    },
    async (ctx, { project, principal, body }) => {
      const component = { name: body.component.name ?? '', purl: body.component.purl ?? '', cpe: body.component.cpe ?? '', versions: body.versions ?? '' };
      const exposure = await exposureOf(clients, project.id, component, rpc(ctx));
      const { vulnerability } = await clients.artifacts.recordVulnerability(
        {
          vulnerability: {
            id: body.advisory_id,
            projectId: project.id,
            advisoryId: body.advisory_id,
            componentName: component.name,
            componentPurl: component.purl,
            componentCpe: component.cpe,
            versions: component.versions,
            summary: body.summary ?? '',
            knownAt: body.known_at ? new Date(body.known_at) : new Date(),
            recordedAt: undefined,
            statements: (body.statements ?? []).map((statement) => ({ artifactId: statement.artifact_id, buildNumber: 0, status: statement.status, justification: statement.justification ?? '', note: statement.note ?? '', statedAt: undefined })),
            exposedBuilds: exposure.builds.map((build) => ({ artifactId: build.artifact_id, buildNumber: build.build_number, componentVersion: build.component.version, devices: build.devices })),
            exposedDevices: exposure.devices,
          },
        },
        rpc(ctx),
      );
      await audit.record(principal, { projectId: project.id, action: 'vulnerability.recorded', targetType: 'vulnerability', targetId: body.advisory_id, details: { versions: component.versions, exposed_devices: exposure.devices } });
      ctx.status = 201;
      ctx.body = vulnerabilityJson(vulnerability!);
    },
  );

  section.add(
    { route: 'GET /projects/:id/vulnerabilities/', operationId: 'listVulnerabilities', summary: "The project's vulnerabilities, the latest known first", project: 'viewer', responses: { 200: R.arrayOf(R.Vulnerability) } },
    async (ctx, { project }) => {
      const { vulnerabilities } = await clients.artifacts.listVulnerabilities({ projectId: project.id }, rpc(ctx));
      ctx.body = vulnerabilities.map(vulnerabilityJson);
    },
  );

  section.add(
    { route: 'GET /projects/:id/vulnerabilities/:vid/', operationId: 'getVulnerability', summary: 'A vulnerability: its exposure when recorded and its statements', project: 'viewer', responses: { 200: R.Vulnerability }, errors: [404] },
    async (ctx, { project }) => {
      const { vulnerability } = await clients.artifacts.getVulnerability({ projectId: project.id, id: advisoryOf(ctx) }, rpc(ctx));
      ctx.body = vulnerabilityJson(vulnerability!);
    },
  );

  section.add(
    {
      route: 'GET /projects/:id/vulnerabilities/:vid/report/',
      operationId: 'getVulnerabilityReport',
      summary: "What the Cyber Resilience Act's reports of a vulnerability need",
      description:
        'When it became known; the builds it affects as the SBOMs and the VEX statements say; the devices on them when it was recorded and now; what cannot be said; the fix (the first active or paused deployment of a later build that does not list the component) and its progress; and the devices still affected each day since it became known (UTC days, from the fleet\'s hourly snapshots, the last of each day, and today now). `.../report/days/` gives the days as CSV.',
      project: 'viewer',
      responses: { 200: R.VulnerabilityReport },
      errors: [404],
    },
    async (ctx, { project }) => {
      ctx.body = await vulnerabilityReport(clients, project.id, advisoryOf(ctx), rpc(ctx));
    },
  );

  section.add(
    {
      route: 'GET /projects/:id/vulnerabilities/:vid/report/days/',
      operationId: 'getVulnerabilityReportDays',
      summary: 'The devices still affected each day, as CSV',
      description: '`day,devices_affected`, one line per UTC day since the vulnerability became known, as the report counts them.',
      project: 'viewer',
      rawResponse: { mediaTypes: ['text/csv'], description: 'One line per day.' },
      responses: { 200: { type: 'string' } },
      errors: [404],
    },
    async (ctx, { project }) => {
      const report = await vulnerabilityReport(clients, project.id, advisoryOf(ctx), rpc(ctx));
      ctx.type = 'text/csv; charset=utf-8';
      ctx.set('Content-Disposition', `attachment; filename="${report.id}-devices-per-day.csv"`);
      ctx.body = reportCsv(report);
    },
  );

  section.add(
    {
      route: 'PUT /projects/:id/vulnerabilities/:vid/statements/:aid/',
      operationId: 'setVexStatement',
      summary: "Say whether a build is affected (VEX)",
      description: "Sets the build's VEX statement on the vulnerability, replacing the one it had.",
      project: 'operator',
      body: statementBody,
      responses: { 200: R.Vulnerability },
      errors: [404],
    },
    async (ctx, { project, principal, body }) => {
      const advisoryId = advisoryOf(ctx);
      const artifactId = pathId(ctx, 'aid', 'artifact');
      const { vulnerability } = await clients.artifacts.setVexStatement(
        { projectId: project.id, vulnerabilityId: advisoryId, statement: { artifactId, buildNumber: 0, status: body.status, justification: body.justification ?? '', note: body.note ?? '', statedAt: undefined } },
        rpc(ctx),
      );
      await audit.record(principal, { projectId: project.id, action: 'vulnerability.statement_set', targetType: 'vulnerability', targetId: advisoryId, details: { artifact_id: artifactId, status: body.status } });
      ctx.body = vulnerabilityJson(vulnerability!);
    },
  );
}

function vulnerabilityJson(vulnerability: artifacts.Vulnerability) {
  const iso = (at: Date | undefined) => (at ?? new Date(0)).toISOString();
  return {
    id: vulnerability.advisoryId,
    component: { name: vulnerability.componentName || null, purl: vulnerability.componentPurl || null, cpe: vulnerability.componentCpe || null },
    versions: vulnerability.versions || null,
    summary: vulnerability.summary,
    known_at: iso(vulnerability.knownAt),
    recorded_at: iso(vulnerability.recordedAt),
    exposure_when_recorded: {
      builds: vulnerability.exposedBuilds.map((build) => ({ artifact_id: build.artifactId, build_number: Number(build.buildNumber), component_version: build.componentVersion, devices: Number(build.devices) })),
      devices: Number(vulnerability.exposedDevices),
    },
    statements: vulnerability.statements.map((statement) => ({
      artifact_id: statement.artifactId,
      build_number: Number(statement.buildNumber),
      status: statement.status as (typeof VEX_STATUSES)[number],
      justification: statement.justification || null,
      note: statement.note,
      stated_at: iso(statement.statedAt),
    })),
  };
}
