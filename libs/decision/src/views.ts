import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '@ota/logging';
import type { ArtifactSummary, DecisionDeployment } from './model';
import type { OutboundCall } from '@ota/logging';

export interface ViewSources<D extends DecisionDeployment> {
  loadActiveDeployments(): Promise<D[]>;
  /** `call` when a request asks (its deadline and trace); none for the views' own loads. */
  loadDeployment(id: string, projectId: string, call?: OutboundCall): Promise<D | null>;
  loadArtifacts(): Promise<ArtifactSummary[]>;
}

/** What a decision reads: a project's active deployments, and a build's summary. */
export interface DecisionViews<D extends DecisionDeployment> {
  activeDeployments(projectId: string): readonly D[];
  artifact(artifactId: string): ArtifactSummary | undefined;
}

/**
 * The decision's in-memory read models: active deployments by project, and artifact metadata.
 * NATS events keep them fresh within milliseconds; a periodic full reload is the safety net for
 * events missed while NATS was unreachable.
 */
export class InMemoryDecisionViews<D extends DecisionDeployment> implements DecisionViews<D> {
  private activeByProject = new Map<string, D[]>();
  private artifacts = new Map<string, ArtifactSummary>();
  private timer: NodeJS.Timeout | undefined;
  // Changes applied while a reload is reading; replayed on top of its snapshot, which may be older.
  private changedDuringReload: { deployments: D[]; artifacts: ArtifactSummary[] } | null = null;

  constructor(
    private readonly sources: ViewSources<D>,
    private readonly logger: Logger,
  ) {}

  activeDeployments(projectId: string): readonly D[] {
    return this.activeByProject.get(projectId) ?? [];
  }

  artifact(artifactId: string): ArtifactSummary | undefined {
    return this.artifacts.get(artifactId);
  }

  deploymentWritten(deployment: D): void {
    this.changedDuringReload?.deployments.push(deployment);
    const others = (this.activeByProject.get(deployment.projectId) ?? []).filter((d) => d.id !== deployment.id);
    if (deployment.state === 'active') others.push(deployment);
    if (others.length > 0) this.activeByProject.set(deployment.projectId, others);
    else this.activeByProject.delete(deployment.projectId);
  }

  artifactSeen(artifact: ArtifactSummary): void {
    this.changedDuringReload?.artifacts.push(artifact);
    this.artifacts.set(artifact.id, artifact);
  }

  /** A deployment changed on some rollout replica: read it from its source, which holds the truth. */
  async deploymentChanged(id: string, projectId: string): Promise<void> {
    const deployment = await this.sources.loadDeployment(id, projectId);
    if (deployment) this.deploymentWritten(deployment);
  }

  /**
   * The first load, before the service answers: the store or the artifacts service may still be
   * starting, so it is retried with a growing pause until it succeeds or `limitMs` has passed.
   */
  async load(limitMs: number): Promise<void> {
    const giveUpAt = Date.now() + limitMs;
    for (let pauseMs = 200; ; pauseMs = Math.min(pauseMs * 2, 5_000)) {
      try {
        return await this.reload();
      } catch (error) {
        if (Date.now() + pauseMs > giveUpAt) throw error;
        this.logger.warn({ err: error }, 'views not loaded yet; retrying');
        await sleep(pauseMs);
      }
    }
  }

  async reload(): Promise<void> {
    const changed = { deployments: [] as D[], artifacts: [] as ArtifactSummary[] };
    this.changedDuringReload = changed;
    try {
      const [deployments, artifacts] = await Promise.all([this.sources.loadActiveDeployments(), this.sources.loadArtifacts()]);
      const activeByProject = new Map<string, D[]>();
      for (const deployment of deployments) {
        activeByProject.set(deployment.projectId, [...(activeByProject.get(deployment.projectId) ?? []), deployment]);
      }
      this.activeByProject = activeByProject;
      this.artifacts = new Map(artifacts.map((artifact) => [artifact.id, artifact]));
    } finally {
      this.changedDuringReload = null;
    }
    for (const deployment of changed.deployments) this.deploymentWritten(deployment);
    for (const artifact of changed.artifacts) this.artifactSeen(artifact);
  }

  startPeriodicReload(intervalMs: number): void {
    this.timer = setInterval(() => {
      this.reload().catch((error: unknown) => this.logger.warn({ err: error }, 'view reload failed; keeping the last view'));
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
