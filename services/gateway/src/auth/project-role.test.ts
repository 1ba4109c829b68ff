import { isDomainError } from '@ota/errors';
import type { RoleGrant, Token, User } from './model';
import { projectRoleOf } from './project-role';
import type { Role } from './roles';

const project = { id: 'p1', ownerId: 'owner' };
const apiToken = (role: Role, createdBy: string): Token =>
  ({ kind: 'project', scope: 'api', role, projectId: 'p1', createdBy, userId: 'owner', signIn: null, expiresAt: null }) as Token;
const grant = (subject: RoleGrant['subject'], role: Role): RoleGrant => ({ projectId: 'p1', subject, role, grantedAt: new Date(0), grantedBy: 'owner' });

function storeOf(users: Array<Pick<User, 'id' | 'signInGroups'>>, grants: RoleGrant[]) {
  return {
    findUser: async (id: string) => (users.find((user) => user.id === id) as User | undefined) ?? null,
    grantsTo: async (userId: string, groups: readonly string[]) =>
      grants.filter((g) => (g.subject.kind === 'user' ? g.subject.userId === userId : groups.includes(g.subject.group))),
  };
}

describe("an api token's role is never more than its maker's now (docs/security.md)", () => {
  it('acts with the lower of its own role and what its maker holds, through a grant or a group of their last sign-in', async () => {
    const store = storeOf([{ id: 'maker', signInGroups: ['ops'] }], [grant({ kind: 'user', userId: 'maker' }, 'viewer'), grant({ kind: 'group', group: 'ops' }, 'operator')]);
    expect(await projectRoleOf(store, { token: apiToken('admin', 'maker'), userId: 'owner', isStaff: false }, project)).toEqual({ role: 'operator', source: 'token' });
    expect(await projectRoleOf(store, { token: apiToken('viewer', 'maker'), userId: 'owner', isStaff: false }, project)).toEqual({ role: 'viewer', source: 'token' });
  });

  it("counts a token of the owner, or one made before makers were recorded, as the owner's: an admin", async () => {
    const store = storeOf([], []);
    for (const maker of ['owner', '']) expect((await projectRoleOf(store, { token: apiToken('approver', maker), userId: 'owner', isStaff: false }, project))?.role).toBe('approver');
  });

  it('refuses, as a credential, a token whose maker holds nothing in the project any more', async () => {
    const store = storeOf([{ id: 'gone', signInGroups: [] }], []);
    const refusal = await projectRoleOf(store, { token: apiToken('admin', 'gone'), userId: 'owner', isStaff: false }, project).catch((error: unknown) => error);
    expect(isDomainError(refusal) && refusal.kind).toBe('Unauthenticated');
  });
});
