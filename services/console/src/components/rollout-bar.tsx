import { Bar, BarChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { PREVIEW_OUTCOMES, ROLLOUT_STATUSES, type DeploymentPreview, type PreviewOutcome, type RolloutStatus } from '../types';
import { PREVIEW_OUTCOME_WORDS, ROLLOUT_STATUS_WORDS } from '../words';

/** One colour per status: greys for waiting, blues for in progress, green for done, reds for failures. */
export const STATUS_COLOURS: Record<RolloutStatus, string> = {
  pending: '#c9ced6',
  offered: '#9db4d8',
  download_started: '#7ea3dc',
  downloaded: '#5b8ad6',
  flashed: '#3f72c9',
  validated: '#2f5fb0',
  reboot: '#244d94',
  confirmed: '#2e9d5b',
  failed: '#d64545',
  rolled_back: '#e08a2c',
};

/** Blue for what the check would offer, green for done, greys for the rest, orange and red for what needs a look. */
export const OUTCOME_COLOURS: Record<PreviewOutcome, string> = {
  offered: '#3f72c9',
  up_to_date: '#2e9d5b',
  not_in_rollout: '#9db4d8',
  no_compatible_build: '#d64545',
  chip_revision_unsupported: '#b83280',
  secure_version_too_low: '#7b3fb0',
  device_inactive: '#8a8f98',
  not_targeted: '#c9ced6',
  unknown_hardware: '#e08a2c',
};

/**
 * Counts as one stacked bar (recharts). The counts below it, in order with their colours, are the
 * legend, and the text for whoever cannot see colours.
 */
function StackedCounts<K extends string>({ label, order, colours, words, counts, testId }: { label: string; order: readonly K[]; colours: Record<K, string>; words: Record<K, string>; counts: Record<K, number>; testId: string }) {
  const total = order.reduce((sum, key) => sum + counts[key], 0);
  // The bar's segments are named in words too (its tooltip shows them).
  const row = { name: 'devices', ...counts };
  return (
    <figure className="rollout-bar" aria-label={label}>
      {total === 0 ? (
        // An empty bar with an axis to 1 says nothing: say it in words.
        <p className="muted">No devices counted yet.</p>
      ) : (
        <ResponsiveContainer width="100%" height={80}>
          <BarChart data={[row]} layout="vertical" margin={{ top: 0, right: 16, bottom: 0, left: 0 }}>
            <XAxis type="number" domain={[0, total]} allowDecimals={false} />
            <YAxis type="category" dataKey="name" hide />
            <Tooltip />
            {order.map((key) => (
              <Bar key={key} dataKey={key} name={words[key]} stackId="devices" fill={colours[key]} isAnimationActive={false} />
            ))}
          </BarChart>
        </ResponsiveContainer>
      )}
      <figcaption>
        <ul className="counts" data-testid={testId}>
          {order.map((key) => (
            <li key={key} data-status={key}>
              <span className="swatch" style={{ background: colours[key] }} aria-hidden="true" />
              {words[key]}: <strong>{counts[key]}</strong>
            </li>
          ))}
        </ul>
      </figcaption>
    </figure>
  );
}

/** The deployment's devices per rollout status. */
export function RolloutBar({ counts }: { counts: Record<RolloutStatus, number> }) {
  return <StackedCounts label="Devices per rollout status" order={ROLLOUT_STATUSES} colours={STATUS_COLOURS} words={ROLLOUT_STATUS_WORDS} counts={counts} testId="status-counts" />;
}

/** The project's devices per answer the next check would give. */
export function PreviewBar({ outcomes }: { outcomes: DeploymentPreview['outcomes'] }) {
  const counts = Object.fromEntries(PREVIEW_OUTCOMES.map((outcome) => [outcome, outcomes[outcome].count])) as Record<PreviewOutcome, number>;
  return <StackedCounts label="Devices per answer of the next check" order={PREVIEW_OUTCOMES} colours={OUTCOME_COLOURS} words={PREVIEW_OUTCOME_WORDS} counts={counts} testId="preview-counts" />;
}
