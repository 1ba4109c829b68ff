import { Timestamp } from '../../components/time';
import { useArtifacts } from '../../queries';
import { OtaStatus } from '../../components/ota-status';
import type { Device } from '../../types';
import { CHECK_STATE_WORDS, checkStatusWords } from '../../words';

/** What the device is and how it last checked, reported and ran. */
export function DeviceFacts({ device: d, projectId }: { device: Device; projectId: string }) {
  const builds = useArtifacts(projectId);
  // The SHA-256 is what the device's last check reported; its build number moves when it confirms
  // an update: until its next check the two may belong to different builds, which the page says.
  const build = builds.data?.find((artifact) => artifact.build_number === d.current_build_number);
  const stale = Boolean(build && d.current_hash && build.checksum_sha256 !== d.current_hash);
  return (
    <dl className="facts">
      <dt>Hardware</dt>
      <dd>{[d.framework, d.chip_family, d.board_id, d.hardware_revision].filter(Boolean).join(' · ') || '—'}</dd>
      <dt>Partition, NVS, security</dt>
      <dd>{[d.partition_profile || 'any partition', d.nvs_schema_version === null ? 'NVS unknown' : `NVS ${d.nvs_schema_version}`, d.security_mode || 'security unknown'].join(' · ')}</dd>
      <dt>Build</dt>
      <dd>
        {d.current_build_number} <span className="muted">{d.current_version_label}</span>
      </dd>
      <dt>Binary SHA-256</dt>
      <dd data-testid="device-hash">
        <span className="hash">{d.current_hash || '—'}</span>
        {stale && (
          <span className="muted">
            {' '}
            · as its last check reported: not build {d.current_build_number}&apos;s (<span className="hash">{build!.checksum_sha256.slice(0, 12)}…</span>), which it has confirmed since
          </span>
        )}
      </dd>
      <dt>Last OTA status</dt>
      <dd>
        <OtaStatus status={d.last_ota_status} reason={d.last_ota_reason} />
      </dd>
      <dt>Last check</dt>
      <dd>
        {d.last_check_status ? checkStatusWords(d.last_check_status) : 'none'} · <Timestamp at={d.last_check_at} /> · {CHECK_STATE_WORDS[d.check_state]}
      </dd>
      <dt>Last seen</dt>
      <dd>
        <Timestamp at={d.last_seen} />
      </dd>
      <dt>Health</dt>
      <dd data-testid="device-health">{healthText(d.health)}</dd>
      <dt>Active</dt>
      <dd>{d.active ? 'yes' : 'no: refused updates (device_inactive)'}</dd>
    </dl>
  );
}

/** What the device's last check said of how it runs since it installed its build, in one line. */
function healthText(health: Device['health']): string {
  if (!health) return "not reported: the device's checks carry no health";
  const hours = Math.round((health.uptime_seconds / 3600) * 10) / 10;
  const heap = health.min_free_heap === null ? '' : ` · lowest free heap ${Math.round(health.min_free_heap / 1024)} KiB`;
  return `last reset: ${health.reset_reason} · ${health.boots} boot${health.boots === 1 ? '' : 's'} (${health.abnormal_boots} abnormal) and ${hours} h run on build ${health.build_number}${heap}`;
}
