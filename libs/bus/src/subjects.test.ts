import { EVENTS } from './subjects';

// Events are the JSON of proto messages with the proto field names as keys: the form the release
// before them published, so that old and new replicas understand each other during an upgrade.
describe('bus events on the wire', () => {
  it('writes an audit event with the snake_case keys and ISO time telemetry has always read', () => {
    const json = EVENTS.auditRecorded.message.toJSON({
      id: 'a1',
      projectId: 'p1',
      action: 'device.updated',
      actorType: 'user',
      actorId: 'u1',
      tokenPrefix: 'ota_abc',
      targetType: 'device',
      targetId: 'd1',
      createdAt: new Date('2026-11-23T10:00:00.000Z'),
      details: { active: false },
    });
    expect(json).toEqual({
      id: 'a1',
      project_id: 'p1',
      action: 'device.updated',
      actor_type: 'user',
      actor_id: 'u1',
      token_prefix: 'ota_abc',
      target_type: 'device',
      target_id: 'd1',
      created_at: '2026-11-23T10:00:00.000Z',
      details: { active: false },
    });
  });

  it('relays an automatic audit event the previous release kept in the outbox as it was written', () => {
    const kept = {
      id: 'a2',
      project_id: 'p1',
      action: 'deployment.paused_by_guardrail',
      actor_type: 'system',
      actor_id: 'rollout',
      token_prefix: '',
      target_type: 'deployment',
      target_id: 'dep1',
      created_at: '2026-11-23T10:00:00.000Z',
      details: { failure_rate: 0.25, threshold: 0.1 },
    };
    const { message } = EVENTS.auditRecorded;
    const { token_prefix: _blank, ...rest } = kept;
    // An empty prefix is the proto default, which the JSON leaves out and telemetry reads back as ''.
    expect(message.toJSON(message.fromJSON(kept))).toEqual(rest);
    expect(message.fromJSON(rest).tokenPrefix).toBe('');
  });

  it('reads an artifact event as the previous release wrote it, with a null NVS minimum', () => {
    const previous = {
      id: 'art1',
      project_id: 'p1',
      build_number: 7,
      version_label: '1.2.0',
      framework: 'esp_idf',
      chip_family: 'esp32s3',
      board_id: '',
      hardware_revision: 'rev2',
      partition_profile: '',
      min_nvs_schema_version: null,
      security_mode: '',
      checksum_sha256: 'ab'.repeat(32),
      file_size: 1024,
      archived: true,
      signature: '',
      signing_key_id: '',
      created_at: '2026-11-23T10:00:00.000Z',
    };
    expect(EVENTS.artifactChanged.message.fromJSON(previous)).toMatchObject({
      id: 'art1',
      projectId: 'p1',
      buildNumber: 7,
      chipFamily: 'esp32s3',
      hardwareRevision: 'rev2',
      minNvsSchemaVersion: undefined,
      fileSize: 1024,
      archived: true,
      createdAt: new Date('2026-11-23T10:00:00.000Z'),
    });
  });

  it('gives back a device status whose rank is 0 and that was not rolled back', () => {
    const { message } = EVENTS.deviceStatusChanged;
    const status = { deploymentId: 'dep1', deviceId: 'd1', status: 'offered', rank: 0, rolledBack: false };
    const wire = JSON.parse(JSON.stringify(message.toJSON(status))) as unknown;
    expect(wire).toEqual({ deployment_id: 'dep1', device_id: 'd1', status: 'offered' });
    expect(message.fromJSON(wire)).toEqual(status);
  });
});
