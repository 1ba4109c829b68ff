import { useQuery } from '@tanstack/react-query';
import { answer, api } from '../../api';
import { BusyButton, ErrorNote } from '../../components/feedback';
import { PreviewBar } from '../../components/rollout-bar';
import { PREVIEW_OUTCOMES, type Deployment } from '../../types';
import { PREVIEW_OUTCOME_WORDS } from '../../words';
import { queryKeys } from '../../query-keys';

/**
 * What a check of each device would answer now, on demand (it reads the whole fleet). It is a
 * snapshot of one moment: its query key holds the deployment's state, percentage and last change,
 * so a start, ramp, pause or automatic stage drops it rather than relabelling old answers.
 */
export function Preview({ deployment: d, reach }: { deployment: Deployment; reach: number | undefined }) {
  const preview = useQuery({
    queryKey: queryKeys.preview(d.id, [d.state, d.rollout_percentage, d.updated_at]),
    queryFn: () => answer(api.GET('/api/v1/projects/{id}/deployments/{did}/preview/', { params: { path: { id: d.project_id, did: d.id } } })),
    enabled: false,
  });
  const data = preview.data;
  return (
    <section aria-labelledby="preview">
      <h2 id="preview">Preview</h2>
      <div className="row">
        <BusyButton type="button" busy={preview.isFetching} onClick={() => void preview.refetch()}>
          {data ? 'Preview again' : 'Preview the next checks'}
        </BusyButton>
        <span className="muted">
          {preview.isFetching
            ? `Deciding for every device of the project${reach === undefined ? '' : ` (this deployment targets ${reach})`}…`
            : 'What a check of each device of the project would answer now, decided by the check’s own rules.'}
        </span>
      </div>
      <ErrorNote error={preview.error} />
      {data && !preview.isFetching && (
        <>
          <p data-testid="preview-caption">
            {data.device_count} devices, as of {new Date(preview.dataUpdatedAt).toLocaleTimeString()}
            {data.as_if_active && ` · as if ${d.state === 'draft' ? 'started' : 'resumed'} now, at ${data.rollout_percentage}%`}
            <span className="muted"> · devices report on: preview again for a newer picture</span>
          </p>
          <PreviewBar outcomes={data.outcomes} />
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
