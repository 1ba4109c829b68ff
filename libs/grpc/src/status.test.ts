import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { DomainError } from '@ota/errors';
import { errorOfStatus } from './status';

const failed = (code: status, details: string): ServiceError => Object.assign(new Error(details), { code, details, metadata: new Metadata() });

test('a deadline and a transport failure say what happened, and no address of the cluster', () => {
  const deadline = errorOfStatus('ChangeGroupMembers', failed(status.DEADLINE_EXCEEDED, 'Deadline exceeded after 5.602s,LB pick: 0.000s,remote_addr=127.0.0.1:40123'));
  expect(deadline).toBeInstanceOf(DomainError);
  expect(deadline.message).toBe('a service did not answer in time; retry later');
  const refused = errorOfStatus('GetDevice', failed(status.UNAVAILABLE, 'No connection established. Last error: connect ECONNREFUSED 10.0.3.7:50051'));
  expect(refused.message).toBe('a service is unavailable; retry later');
});

test("a service's own refusal keeps its words", () => {
  expect(errorOfStatus('GetDevice', failed(status.UNAVAILABLE, 'a backing store is unavailable; retry later')).message).toBe('a backing store is unavailable; retry later');
  expect(errorOfStatus('GetDevice', failed(status.NOT_FOUND, 'device not found')).message).toBe('device not found');
});
