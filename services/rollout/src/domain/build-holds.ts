import type { Deployment } from './model';

/** What holds a build back (docs/api.md, "Holds on a build"). */
export interface BuildHold {
  deploymentId: string;
  kind: 'guardrail_pause' | 'approval_gate';
  detail: string;
}

/**
 * The holds on a build: each deployment of it that a guardrail paused, and each active or paused
 * one whose plan still has an approval gate ahead. A hold is on the build, not on its deployment's
 * targets: a new deployment of a crashing build, or one past a gate, is the same build on more
 * devices, wherever they are. `exceptId`, the deployment being moved, is held by its own state.
 */
export function holdsOnBuild(deployments: readonly Deployment[], artifactId: string, exceptId: string): BuildHold[] {
  const holds: BuildHold[] = [];
  for (const deployment of deployments) {
    if (deployment.artifactId !== artifactId || deployment.id === exceptId) continue;
    if (deployment.state === 'paused' && deployment.guardrailPause) {
      const { guardrail, detail } = deployment.guardrailPause;
      holds.push({ deploymentId: deployment.id, kind: 'guardrail_pause', detail: `deployment ${deployment.id} was paused by its ${guardrail} guardrail: ${detail}` });
      continue;
    }
    if (deployment.state !== 'active' && deployment.state !== 'paused') continue;
    const gate = deployment.stages.find((stage, index) => index > deployment.stage.index && stage.approvalRequired);
    if (gate) {
      holds.push({ deploymentId: deployment.id, kind: 'approval_gate', detail: `deployment ${deployment.id} waits for approval before ${gate.percentage}% (it is at ${deployment.rolloutPercentage}%)` });
    }
  }
  return holds;
}
