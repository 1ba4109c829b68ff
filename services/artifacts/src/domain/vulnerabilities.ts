import { conflict, invalidArgument, notFound } from '@ota/errors';
import type { Artifact } from './model';
import type { ArtifactStore } from './ports';
import { InvalidVersionRange, parseVersionRange } from './version-range';

/**
 * A vulnerability a project records (docs/api.md, "Vulnerabilities"): one per advisory (a CVE or a
 * GHSA id), the component and versions it affects, when it became known, its exposure when
 * recorded (kept as it was), and per-build VEX statements, stored apart from the SBOMs.
 */
export interface Vulnerability {
  projectId: string;
  advisoryId: string;
  component: { name: string; purl: string; cpe: string };
  versions: string;
  summary: string;
  knownAt: Date;
  recordedAt: Date;
  exposure: { builds: ExposedBuild[]; devices: number };
  statements: VexStatement[];
}

export interface ExposedBuild {
  artifactId: string;
  buildNumber: number;
  componentVersion: string;
  devices: number;
}

export const VEX_STATUSES = ['affected', 'not_affected', 'fixed', 'under_investigation'] as const;
export type VexStatus = (typeof VEX_STATUSES)[number];
/** CISA's justifications for `not_affected` (Minimum Requirements for VEX). */
export const VEX_JUSTIFICATIONS = ['component_not_present', 'vulnerable_code_not_present', 'vulnerable_code_not_in_execute_path', 'vulnerable_code_cannot_be_controlled_by_adversary', 'inline_mitigations_already_exist'] as const;

export interface VexStatement {
  artifactId: string;
  buildNumber: number;
  status: VexStatus;
  justification: string;
  note: string;
  statedAt: Date;
}

export interface VulnerabilityStore {
  /** False when the project has recorded the advisory already. */
  insert(vulnerability: Omit<Vulnerability, 'statements'>): Promise<boolean>;
  find(projectId: string, advisoryId: string): Promise<Vulnerability | null>;
  list(projectId: string): Promise<Vulnerability[]>;
  /** Sets the build's statement, replacing the one it had. */
  setStatement(projectId: string, advisoryId: string, statement: VexStatement): Promise<void>;
}

/** A CVE id, or a GitHub advisory id. */
const ADVISORY_ID = /^(CVE-\d{4}-\d{4,7}|GHSA(-[23456789cfghjmpqrvwx]{4}){3})$/;

export class Vulnerabilities {
  private readonly now: () => Date;

  constructor(private readonly deps: { store: VulnerabilityStore; artifacts: Pick<ArtifactStore, 'listArtifacts'>; now?: () => Date }) {
    this.now = deps.now ?? (() => new Date());
  }

  async record(input: Omit<Vulnerability, 'recordedAt' | 'statements'> & { statements: Array<Omit<VexStatement, 'buildNumber' | 'statedAt'>> }): Promise<Vulnerability> {
    if (!ADVISORY_ID.test(input.advisoryId)) throw invalidArgument('advisory_id is a CVE id (CVE-2025-12345) or a GitHub advisory id (GHSA-xxxx-xxxx-xxxx)');
    const named = [input.component.name, input.component.purl, input.component.cpe].filter(Boolean).length;
    if (named !== 1) throw invalidArgument('component names the component one way: name, purl or cpe');
    if (input.versions) {
      try {
        parseVersionRange(input.versions);
      } catch (error) {
        if (error instanceof InvalidVersionRange) throw invalidArgument(`versions: ${error.message}`);
        throw error;
      }
    }
    if (input.summary.length > 4_096) throw invalidArgument('summary is at most 4096 characters');
    if (input.knownAt.getTime() > this.now().getTime() + 60_000) throw invalidArgument('known_at is in the future');
    const statements = await this.statementsOf(input.projectId, input.statements);
    const recorded: Omit<Vulnerability, 'statements'> = { ...input, recordedAt: this.now() };
    if (!(await this.deps.store.insert(recorded))) throw conflict(`${input.advisoryId} is recorded in this project already`);
    for (const statement of statements) await this.deps.store.setStatement(input.projectId, input.advisoryId, statement);
    return (await this.deps.store.find(input.projectId, input.advisoryId))!;
  }

  async get(projectId: string, advisoryId: string): Promise<Vulnerability> {
    const found = await this.deps.store.find(projectId, advisoryId);
    if (!found) throw notFound(`${advisoryId} is not recorded in this project`);
    return found;
  }

  list(projectId: string): Promise<Vulnerability[]> {
    return this.deps.store.list(projectId);
  }

  async setStatement(projectId: string, advisoryId: string, statement: Omit<VexStatement, 'buildNumber' | 'statedAt'>): Promise<Vulnerability> {
    await this.get(projectId, advisoryId);
    const [checked] = await this.statementsOf(projectId, [statement]);
    await this.deps.store.setStatement(projectId, advisoryId, checked!);
    return this.get(projectId, advisoryId);
  }

  /** Statements of builds of the project, each build once, `not_affected` with one of the justifications. */
  private async statementsOf(projectId: string, statements: Array<Omit<VexStatement, 'buildNumber' | 'statedAt'>>): Promise<VexStatement[]> {
    if (statements.length === 0) return [];
    if (statements.length > 1_000) throw invalidArgument('at most 1000 statements at once');
    const builds = new Map<string, Artifact>((await this.deps.artifacts.listArtifacts(projectId)).map((build) => [build.id, build]));
    const seen = new Set<string>();
    return statements.map((statement) => {
      const build = builds.get(statement.artifactId);
      if (!build) throw invalidArgument(`artifact_id ${statement.artifactId} names no build of this project`);
      if (seen.has(statement.artifactId)) throw invalidArgument(`build ${build.buildNumber} has two statements`);
      seen.add(statement.artifactId);
      if (!(VEX_STATUSES as readonly string[]).includes(statement.status)) throw invalidArgument(`status is one of ${VEX_STATUSES.join(', ')}`);
      if (statement.status === 'not_affected' && !(VEX_JUSTIFICATIONS as readonly string[]).includes(statement.justification)) {
        throw invalidArgument(`not_affected needs a justification: one of ${VEX_JUSTIFICATIONS.join(', ')}`);
      }
      if (statement.status !== 'not_affected' && statement.justification) throw invalidArgument('a justification goes only with not_affected');
      if (statement.note.length > 4_096) throw invalidArgument('note is at most 4096 characters');
      return { ...statement, buildNumber: build.buildNumber, statedAt: this.now() };
    });
  }
}
