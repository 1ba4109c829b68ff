import { isDomainError } from '@ota/errors';
import { ROLES, isRole, requireRole, roleAllows } from './roles';

test('each role may do what the roles before it may, and nothing of the roles after it', () => {
  for (const [heldRank, held] of ROLES.entries()) {
    for (const [neededRank, needed] of ROLES.entries()) expect(roleAllows(held, needed)).toBe(heldRank >= neededRank);
  }
});

test('a refusal is 403 and names the role needed and the role held', () => {
  expect(() => requireRole('admin', 'approver', 'pausing a deployment')).not.toThrow();
  let refusal: unknown;
  try {
    requireRole('operator', 'approver', 'pausing a deployment');
  } catch (error) {
    refusal = error;
  }
  expect(isDomainError(refusal, 'PermissionDenied')).toBe(true);
  expect((refusal as Error).message).toBe("pausing a deployment needs the approver role in this project; the caller's role is operator");
});

test('only the four roles are roles', () => {
  expect(ROLES.every(isRole)).toBe(true);
  expect([undefined, '', 'owner', 'Admin', 3].some(isRole)).toBe(false);
});
