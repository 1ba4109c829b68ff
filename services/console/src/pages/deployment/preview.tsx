import { useEffect, useRef, useState } from 'react';
import { ApiError, answer, answerWithHeaders, api } from '../../api';
import { BusyButton, ErrorNote } from '../../components/feedback';
import { PreviewBar } from '../../components/rollout-bar';
import { PREVIEW_OUTCOMES, type Deployment, type DeploymentPreview, type PreviewOutcome } from '../../types';
import { partsOf } from '../../id-space';
import { PREVIEW_OUTCOME_WORDS } from '../../words';
import { heldWords } from './held-words';

/** Up to this many devices the fleet is previewed in 16 parts; past it, in 256, so that the first part answers within a few seconds. */
const SIXTEEN_PARTS_UP_TO = 50_000;
/** Device ids a preview shows per outcome, as the API answers them. */
const SAMPLES = 20;

/** The whole fleet's count, estimated from the parts read so far, in two significant digits. */
function estimated(count: number, walk: Walk): string {
  const whole = (count * walk.parts) / walk.partsDone;
  return Number(whole.toPrecision(2)).toLocaleString();
}

/** Two parts' previews as one: counts added, samples kept up to SAMPLES. */
function merged(sum: DeploymentPreview, part: DeploymentPreview): DeploymentPreview {
  const outcomes = Object.fromEntries(
    PREVIEW_OUTCOMES.map((outcome) => {
      const [a, b] = [sum.outcomes[outcome], part.outcomes[outcome]];
      return [outcome, { count: a.count + b.count, device_ids: [...a.device_ids, ...b.device_ids].slice(0, SAMPLES) }];
    }),
  ) as Record<PreviewOutcome, { count: number; device_ids: string[] }>;
  return { ...part, id_prefix: '', device_count: sum.device_count + part.device_count, outcomes };
}

interface Walk {
  preview: DeploymentPreview;
  partsDone: number;
  parts: number;
  at: Date;
}

/**
 * What a check of each device would answer now, on demand. It reads the whole fleet, one part of
 * the id space at a time (docs/api.md, "Before a deployment"), and draws what the parts read so far
 * say while the rest are read, so that a large fleet shows its first numbers within seconds; it can
 * be stopped. It is a snapshot of one moment: a start, ramp, pause or automatic stage (the
 * deployment's state, percentage or last change) drops it rather than relabelling old answers.
 */
export function Preview({ deployment: d, reach }: { deployment: Deployment; reach: number | undefined }) {
  const [walk, setWalk] = useState<Walk | null>(null);
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<unknown>(null);
  // The walk under way: a newer one, a change of the deployment or leaving the page ends it.
  const current = useRef(0);
  const version = `${d.state}|${d.rollout_percentage}|${d.updated_at}`;
  useEffect(() => {
    current.current += 1;
    setWalk(null);
    setRunning(false);
    setError(null);
  }, [version]);
  useEffect(() => () => void (current.current += 1), []);

  const start = async () => {
    const mine = ++current.current;
    setRunning(true);
    setError(null);
    setWalk(null);
    try {
      const path = { id: d.project_id, did: d.id };
      const fleet = await answerWithHeaders(api.GET('/api/v1/projects/{id}/devices/', { params: { path: { id: d.project_id }, query: { limit: 1 } } }));
      const size = Number(fleet.headers.get('x-total-count') ?? fleet.headers.get('x-total-count-estimate') ?? 0);
      const parts = partsOf(size > SIXTEEN_PARTS_UP_TO ? 256 : 16);
      let sum: DeploymentPreview | null = null;
      for (const [index, prefix] of parts.entries()) {
        const part = await answer(api.GET('/api/v1/projects/{id}/deployments/{did}/preview/', { params: { path, query: { id_prefix: prefix } } }));
        if (current.current !== mine) return;
        sum = sum ? merged(sum, part) : { ...part, id_prefix: '' };
        setWalk({ preview: sum, partsDone: index + 1, parts: parts.length, at: new Date() });
      }
    } catch (failure) {
      if (current.current === mine) setError(failure instanceof ApiError ? failure : new ApiError(0, String(failure)));
    } finally {
      if (current.current === mine) setRunning(false);
    }
  };

  const data = walk?.preview;
  const partial = walk !== null && walk.partsDone < walk.parts;
  return (
    <section aria-labelledby="preview">
      <h2 id="preview">Preview</h2>
      <div className="row">
        <BusyButton type="button" busy={running} onClick={() => void start()}>
          {data ? 'Preview again' : 'Preview the next checks'}
        </BusyButton>
        {running && (
          <button
            type="button"
            onClick={() => {
              current.current += 1;
              setRunning(false);
            }}
          >
            Stop
          </button>
        )}
        <span className="muted" role="status">
          {running
            ? `Deciding for every device of the project${reach === undefined ? '' : ` (this deployment targets ${reach})`}: ${walk ? `${Math.round((walk.partsDone / walk.parts) * 100)}% of the fleet read` : 'starting'}…`
            : `What a check of each device of the project would answer now, decided by the check’s own rules${d.maintenance_windows ? ', as if its maintenance windows were open' : ''}.`}
        </span>
        {running && walk && <progress aria-label="Share of the fleet previewed" value={walk.partsDone} max={walk.parts} />}
      </div>
      <ErrorNote error={error} />
      {data && walk && (
        <>
          <p data-testid="preview-caption">
            {data.device_count} devices{partial ? ` in the ${Math.round((walk.partsDone / walk.parts) * 100)}% of the fleet read so far` : ''}, as of {walk.at.toLocaleTimeString()}
            {data.as_if_active && ` · as if ${d.state === 'draft' ? 'started' : 'resumed'} now, at ${data.rollout_percentage}%`}
            <span className="muted"> · devices report on: preview again for a newer picture</span>
          </p>
          {partial && (
            <p className="muted" data-testid="preview-estimate">
              Estimated for the whole fleet (the parts read so far are spread over it):{' '}
              {PREVIEW_OUTCOMES.filter((outcome) => data.outcomes[outcome].count > 0)
                .map((outcome) => `${PREVIEW_OUTCOME_WORDS[outcome]}, about ${estimated(data.outcomes[outcome].count, walk)}`)
                .join('; ')}
              .
            </p>
          )}
          <PreviewBar outcomes={data.outcomes} />
          <HeldNow held={data.held_now} offered={data.outcomes.offered.count} windowZone={d.maintenance_windows?.time_zone ?? null} />
          <dl className="facts" data-testid="preview-samples">
            {PREVIEW_OUTCOMES.filter((outcome) => data.outcomes[outcome].count > 0).map((outcome) => (
              <div key={outcome}>
                <dt>{PREVIEW_OUTCOME_WORDS[outcome]}</dt>
                <dd>
                  {[...data.outcomes[outcome].device_ids].sort().join(', ')}
                  {data.outcomes[outcome].count > data.outcomes[outcome].device_ids.length && (
                    <span className="muted"> and {data.outcomes[outcome].count - data.outcomes[outcome].device_ids.length} more</span>
                  )}
                </dd>
              </div>
            ))}
          </dl>
        </>
      )}
    </section>
  );
}

/** What holds the offered devices back now: the deployment's closed window, then the room its caps leave. */
function HeldNow({ held, offered, windowZone }: { held: DeploymentPreview['held_now']; offered: number; windowZone: string | null }) {
  const words = heldWords(held, windowZone);
  const room = !held.window_opens_at && held.caps_room !== null && held.caps_room > 0 ? `The caps let ${held.caps_room} new offer${held.caps_room === 1 ? '' : 's'} start now; the rest wait for room.` : null;
  if (offered === 0 || (!words && !room)) return null;
  return <p data-testid="preview-held">{words ? `The ${offered} offered are ${words}.` : room}</p>;
}
