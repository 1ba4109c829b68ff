import type { ServiceClient } from '@ota/grpc';
import type { OutboundCall } from '@ota/logging';
import { rollout } from '@ota/proto';
import type { OfferOutcome } from '@ota/decision';
import type { OfferLedger } from '../../domain/device-check';

type RolloutClient = ServiceClient<typeof rollout.RolloutServiceService>;

const OUTCOMES: Partial<Record<rollout.OfferOutcome, OfferOutcome>> = {
  [rollout.OfferOutcome.OFFER_OUTCOME_RECORDED]: 'recorded',
  [rollout.OfferOutcome.OFFER_OUTCOME_NOT_ACTIVE]: 'not_active',
  [rollout.OfferOutcome.OFFER_OUTCOME_ROLLED_BACK]: 'rolled_back',
  [rollout.OfferOutcome.OFFER_OUTCOME_CAPPED]: 'capped',
};

/** Rollout's RecordOffer, under the deadline and trace of the check that asks (its `call`). */
export class GrpcOfferLedger implements OfferLedger {
  constructor(private readonly client: RolloutClient) {}

  async recordOffer(offer: { projectId: string; deploymentId: string; deviceUuid: string }, call: OutboundCall): Promise<OfferOutcome> {
    const { outcome } = await this.client.recordOffer(offer, call);
    const known = OUTCOMES[outcome];
    if (!known) throw new Error(`rollout answered RecordOffer with an unknown outcome ${outcome}`);
    return known;
  }
}
