import { status } from '@grpc/grpc-js';
import { grpcCodeLabel } from './metrics';

// go-grpc-prometheus labels codes with Go's codes.Code.String(); alerts written for Go services
// match those spellings.
it('spells each status code as Go does', () => {
  expect(grpcCodeLabel(status.OK)).toBe('OK');
  expect(grpcCodeLabel(status.UNAVAILABLE)).toBe('Unavailable');
  expect(grpcCodeLabel(status.DEADLINE_EXCEEDED)).toBe('DeadlineExceeded');
  expect(grpcCodeLabel(status.NOT_FOUND)).toBe('NotFound');
  expect(grpcCodeLabel(status.FAILED_PRECONDITION)).toBe('FailedPrecondition');
  expect(grpcCodeLabel(status.UNAUTHENTICATED)).toBe('Unauthenticated');
});
