import { Bar, BarChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { ROLLOUT_STATUSES, type RolloutStatus } from '../types';

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

/**
 * The deployment's devices per rollout status as one stacked bar (recharts). The counts below it,
 * in rollout order with their colours, are the legend, and the text for whoever cannot see colours.
 */
export function RolloutBar({ counts }: { counts: Record<RolloutStatus, number> }) {
  const total = ROLLOUT_STATUSES.reduce((sum, status) => sum + counts[status], 0);
  const row = { name: 'devices', ...counts };
  return (
    <figure className="rollout-bar" aria-label="Devices per rollout status">
      <ResponsiveContainer width="100%" height={80}>
        <BarChart data={[row]} layout="vertical" margin={{ top: 0, right: 16, bottom: 0, left: 0 }}>
          <XAxis type="number" domain={[0, Math.max(total, 1)]} allowDecimals={false} />
          <YAxis type="category" dataKey="name" hide />
          <Tooltip />
          {ROLLOUT_STATUSES.map((status) => (
            <Bar key={status} dataKey={status} stackId="devices" fill={STATUS_COLOURS[status]} isAnimationActive={false} />
          ))}
        </BarChart>
      </ResponsiveContainer>
      <figcaption>
        <ul className="counts" data-testid="status-counts">
          {ROLLOUT_STATUSES.map((status) => (
            <li key={status} data-status={status}>
              <span className="swatch" style={{ background: STATUS_COLOURS[status] }} aria-hidden="true" />
              {status.replace('_', ' ')}: <strong>{counts[status]}</strong>
            </li>
          ))}
        </ul>
      </figcaption>
    </figure>
  );
}
