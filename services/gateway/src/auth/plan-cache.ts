import type { Plan } from './model';
import type { AccountStore } from './ports';

/**
 * Owner plans for the device check, which needs the device cap only to register a new device but
 * must not read the user on every check. The admin command's `set-plan` asks every gateway replica
 * over NATS to forget the owner's entry (`forget`), so a change counts from the next check; the
 * whole cache is dropped when this replica's NATS connection comes back (it may have missed such a
 * request), and the TTL bounds what any other gap could leave. Developer endpoints always read the
 * plan fresh.
 */
export class PlanCache {
  private readonly entries = new Map<string, { plan: Plan; expiresAt: number }>();

  constructor(
    private readonly store: Pick<AccountStore, 'findUser'>,
    private readonly ttlMs: number,
  ) {}

  async planOf(userId: string): Promise<Plan> {
    const cached = this.entries.get(userId);
    if (cached && cached.expiresAt > Date.now()) return cached.plan;
    const user = await this.store.findUser(userId);
    const plan = user?.plan ?? { maxDevices: 0, maxUploadsPerMonth: 0 };
    this.entries.set(userId, { plan, expiresAt: Date.now() + this.ttlMs });
    return plan;
  }

  forget(userId: string): void {
    this.entries.delete(userId);
  }

  clear(): void {
    this.entries.clear();
  }
}
