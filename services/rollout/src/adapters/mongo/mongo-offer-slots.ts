import { PLACE_PROBES, collectionOf, probePlaces, takePlace } from '@ota/mongo';
import type { OfferSlotStore } from '../../domain/ports';
import type { RolloutModels } from './models';

/**
 * A deployment's new offers of one clock minute as numbered places 1 to N, each taken by one
 * unique insert (`scope` is `${deployment}:${minute ms}`): the one write FerretDB v1 makes atomic,
 * so that replicas racing for the last place take it once (@ota/mongo's takePlace). A minute this
 * replica found full is not asked again; the places of past minutes are deleted as a new one
 * begins.
 */
export class MongoOfferSlots implements OfferSlotStore {
  private readonly full = new Map<string, number>();
  private readonly swept = new Map<string, number>();

  constructor(private readonly models: Pick<RolloutModels, 'OfferSlot'>) {}

  async take(deploymentId: string, minute: Date, perMinute: number): Promise<boolean> {
    const minuteMs = minute.getTime();
    if (this.full.get(deploymentId) === minuteMs) return false;
    this.sweepBefore(deploymentId, minuteMs);
    const scope = `${deploymentId}:${minuteMs}`;
    const places = collectionOf(this.models.OfferSlot);
    // Random places first, without takePlace's read of the caps recorded: a minute's places are
    // taken under one rate unless the deployment is edited within it, and an offer more in that
    // minute harms nobody.
    if ((await probePlaces(places, scope, perMinute, PLACE_PROBES)) !== null) return true;
    if ((await takePlace(places, scope, perMinute)) !== null) return true;
    this.full.set(deploymentId, minuteMs);
    return false;
  }

  taken(deploymentId: string, minute: Date): Promise<number> {
    return collectionOf(this.models.OfferSlot).countDocuments({ scope: `${deploymentId}:${minute.getTime()}` });
  }

  /** Deletes the places of the deployment's minutes before `minuteMs`, once per minute, beside the offer. */
  private sweepBefore(deploymentId: string, minuteMs: number): void {
    if (this.swept.get(deploymentId) === minuteMs) return;
    this.swept.set(deploymentId, minuteMs);
    // Minutes are 13 digits until the year 2286, so the scopes of earlier minutes sort before.
    void collectionOf(this.models.OfferSlot).deleteMany({ scope: { $gte: `${deploymentId}:`, $lt: `${deploymentId}:${minuteMs}` } }).catch(() => undefined);
  }
}
