import { Link } from 'react-router-dom';
import type { BuildHold } from '../types';

/** The holds on a build (docs/api.md, "Holds on a build"), each linking to the deployment that holds it. */
export function BuildHolds({ projectId, buildNumber, holds, testId }: { projectId: string; buildNumber: number | undefined; holds: readonly BuildHold[]; testId?: string }) {
  return (
    <div role="note" data-testid={testId}>
      <p>
        <strong>Build {buildNumber ?? ''} is held</strong> by another deployment of it. Starting, resuming or ramping up a deployment of it goes around that, which needs
        the approver role and is named in the audit:
      </p>
      <ul>
        {holds.map((hold) => (
          <li key={hold.deployment_id}>
            <Link to={`/projects/${projectId}/deployments/${hold.deployment_id}`}>{hold.kind === 'guardrail_pause' ? 'Paused by a guardrail' : 'Waiting at an approval gate'}</Link>: {hold.detail}
          </li>
        ))}
      </ul>
    </div>
  );
}
