import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';
import { useState } from 'react';
import { useParams } from 'react-router-dom';
import { answer, api, uploadArtifact } from '../api';
import { DataTable } from '../components/data-table';
import { BusyButton, ErrorNote, LoadState } from '../components/feedback';
import { Timestamp, formatBytes } from '../components/time';
import type { Artifact, ChipFamilyCount } from '../types';
import { roleReason, RoleControls, useProject, useProjectRole, useProjectWrite } from '../project-access';
import { useArtifacts } from '../queries';
import { queryKeys } from '../query-keys';
import { totalWords } from '../words';

const column = createColumnHelper<Artifact>();

/** The manifest keys (docs/api.md, "Artifact and manifest"), as form fields; blank optional fields are left out. */
const OPTIONAL_TEXT_FIELDS = ['board_id', 'hardware_revision', 'partition_profile', 'security_mode', 'release_notes', 'signature'] as const;

export function ArtifactsPage() {
  const { projectId = '' } = useParams();
  const writable = useProjectWrite(projectId);
  const role = useProjectRole(projectId);
  const queryClient = useQueryClient();
  const artifacts = useArtifacts(projectId);
  const archive = useMutation({
    mutationFn: (artifact: Artifact) =>
      answer(api.PATCH('/api/v1/projects/{id}/artifacts/{aid}/', { params: { path: { id: projectId, aid: artifact.id } }, body: { archived: !artifact.archived } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.artifacts(projectId) }),
  });
  const columns = [
    column.accessor('build_number', { header: 'Build' }),
    column.accessor('version_label', { header: 'Version' }),
    column.accessor((artifact) => [artifact.framework, artifact.chip_family, artifact.board_id, artifact.hardware_revision].filter(Boolean).join(' · '), { id: 'hardware', header: 'Hardware' }),
    column.display({ id: 'image', header: 'Image', cell: (info) => <ImageCell artifact={info.row.original} /> }),
    column.accessor('file_size', { header: 'Size', cell: (info) => formatBytes(info.getValue()) }),
    column.accessor('checksum_sha256', { header: 'SHA-256', cell: (info) => <span className="hash" title={info.getValue()}>{info.getValue().slice(0, 16)}…</span> }),
    column.accessor('security_mode', { header: 'Security', cell: (info) => info.getValue() || <span className="muted">any</span> }),
    column.accessor('created_at', { header: 'Uploaded', cell: (info) => <Timestamp at={info.getValue()} /> }),
    column.display({ id: 'sbom', header: 'SBOM', cell: (info) => <SbomCell projectId={projectId} artifact={info.row.original} /> }),
    column.display({ id: 'patches', header: 'Delta patches', cell: (info) => <PatchesCell projectId={projectId} artifact={info.row.original} builds={artifacts.data ?? []} /> }),
    column.display({
      id: 'archived',
      header: 'Archived',
      cell: (info) => (
        <BusyButton
          type="button"
          className="small"
          busy={archive.isPending}
          disabled={!writable}
          title={writable ? undefined : roleReason(role, 'operator')}
          onClick={() => archive.mutate(info.row.original)}
        >
          {info.row.original.archived ? 'Archived: unarchive' : 'Archive'}
        </BusyButton>
      ),
    }),
  ];
  return (
    <>
      <h1>Artifacts</h1>
      <ErrorNote error={archive.error} />
      <LoadState loading={artifacts.isLoading} error={artifacts.error} empty={artifacts.data?.length === 0 && 'No builds yet: upload the first one below.'}>
        <DataTable rows={artifacts.data ?? []} columns={columns} caption="Artifacts" initialSort={[{ id: 'build_number', desc: true }]} />
      </LoadState>
      <ImagesOnlySetting projectId={projectId} />
      <RoleControls projectId={projectId} what="Uploading a build">
        <UploadForm projectId={projectId} onUploaded={() => queryClient.invalidateQueries({ queryKey: queryKeys.artifacts(projectId) })} />
      </RoleControls>
    </>
  );
}

/** Words for the formats an SBOM is read as (docs/api.md, "SBOMs"). */
const SBOM_FORMAT_WORDS: Record<string, string> = {
  'spdx-2.2-tag-value': 'SPDX 2.2',
  'spdx-2.3-tag-value': 'SPDX 2.3',
  'spdx-2.2-json': 'SPDX 2.2 JSON',
  'spdx-2.3-json': 'SPDX 2.3 JSON',
  'spdx-3.0.1-json-ld': 'SPDX 3.0.1',
  'cyclonedx-1.5-json': 'CycloneDX 1.5',
  'cyclonedx-1.6-json': 'CycloneDX 1.6',
};

/** The build's SBOM: its format and components, to download as it was sent; or how to give one. */
function SbomCell({ projectId, artifact }: { projectId: string; artifact: Artifact }) {
  const { sbom } = artifact;
  if (!sbom) return <span className="muted" title="otactl release --sbom, or PUT .../sbom/">none</span>;
  return (
    <span data-testid={`sbom-${artifact.build_number}`}>
      <a href={`/api/v1/projects/${projectId}/artifacts/${artifact.id}/sbom/`} download={`build-${artifact.build_number}-sbom`}>
        {SBOM_FORMAT_WORDS[sbom.format] ?? sbom.format}
      </a>{' '}
      <span className="muted">
        {sbom.components} component{sbom.components === 1 ? '' : 's'}
      </span>
    </span>
  );
}

/** The project's require_esp_image setting: an admin turns it on or off; everyone else reads it. */
function ImagesOnlySetting({ projectId }: { projectId: string }) {
  const queryClient = useQueryClient();
  const project = useProject(projectId);
  const admin = useProjectWrite(projectId, 'admin');
  // What the person asked, shown at once (a controlled box would otherwise snap back until the
  // answer comes); the project as answered takes over once the change lands or is refused.
  const [asked, setAsked] = useState<boolean | null>(null);
  const change = useMutation({
    mutationFn: (on: boolean) => answer(api.PATCH('/api/v1/projects/{id}/', { params: { path: { id: projectId } }, body: { require_esp_image: on } })),
    onSuccess: (updated) => queryClient.setQueryData(queryKeys.project(projectId), updated),
    onSettled: () => setAsked(null),
  });
  if (!project.data) return null;
  const on = asked ?? project.data.require_esp_image;
  return (
    <p data-testid="images-only">
      <label className="check">
        <input type="checkbox" checked={on} disabled={!admin || change.isPending} title={admin ? undefined : 'needs the admin role'} onChange={(event) => {
            setAsked(event.target.checked);
            change.mutate(event.target.checked);
          }}
        />{' '}
        Take ESP-IDF application images only
      </label>{' '}
      <span className="muted">
        {on ? 'Any other binary is refused at upload.' : 'Other binaries are stored as they are.'}
        {admin ? '' : ' Changing it needs the admin role.'}
      </span>
      <ErrorNote error={change.error} />
    </p>
  );
}

/**
 * What the build's ESP-IDF image says of itself (docs/api.md, "The image"): its chip, the chip
 * revisions it boots on, its anti-rollback version, and whether it raises that for good.
 */
function ImageCell({ artifact }: { artifact: Artifact }) {
  const image = artifact.image;
  if (!image) return <span className="muted">not an ESP-IDF image</span>;
  const unbounded = image.max_chip_revision === 0 || image.max_chip_revision === 65535;
  const revisions = `${revisionText(image.min_chip_revision)}${unbounded ? ' and up' : `–${revisionText(image.max_chip_revision)}`}`;
  const raise = artifact.secure_version_raise;
  return (
    <span className="image-facts" data-testid={`image-${artifact.build_number}`} title={`${image.project_name} ${image.version}, ESP-IDF ${image.idf_version}, ELF SHA-256 ${image.elf_sha256}`}>
      <span>
        {image.chip} {revisions}
      </span>
      <span className="muted">secure version {image.secure_version}</span>
      {raise && (
        <strong className="danger-text">
          raises it from {raise.from}: {raise.efuse_bits_left} eFuse raise{raise.efuse_bits_left === 1 ? '' : 's'} left
        </strong>
      )}
    </span>
  );
}

/** A chip revision as ESP-IDF prints it: v0.3. */
function revisionText(revision: number): string {
  return `v${Math.floor(revision / 100)}.${revision % 100}`;
}

/**
 * The delta patches to a build (docs/api.md, "Delta patches"): each from its base build, with its
 * size against the build's, or its state; followed while one is still being made.
 */
function PatchesCell({ projectId, artifact, builds }: { projectId: string; artifact: Artifact; builds: Artifact[] }) {
  const queryClient = useQueryClient();
  const writable = useProjectWrite(projectId);
  const role = useProjectRole(projectId);
  const patches = useQuery({
    queryKey: queryKeys.patches(artifact.id),
    queryFn: () => answer(api.GET('/api/v1/projects/{id}/artifacts/{aid}/patches/', { params: { path: { id: projectId, aid: artifact.id } } })),
    refetchInterval: (query) => ((query.state.data ?? []).some((patch) => patch.state === 'queued' || patch.state === 'building') ? 3_000 : false),
  });
  // A patch asked for ahead of the devices' checks: the first offers then carry it.
  const prepare = useMutation({
    mutationFn: (baseArtifactId: string) =>
      answer(api.POST('/api/v1/projects/{id}/artifacts/{aid}/patches/', { params: { path: { id: projectId, aid: artifact.id } }, body: { base_artifact_id: baseArtifactId } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.patches(artifact.id) }),
  });
  const downloads = useQuery({
    queryKey: queryKeys.buildDownloads(artifact.id),
    queryFn: () => answer(api.GET('/api/v1/projects/{id}/artifacts/{aid}/downloads/', { params: { path: { id: projectId, aid: artifact.id } } })),
    enabled: (patches.data ?? []).some((patch) => patch.state === 'ready'),
  });
  const [base, setBase] = useState('');
  if (patches.error) return <span className="muted">unavailable</span>;
  if (!patches.data) return <span className="muted">…</span>;
  const buildOf = (id: string) => builds.find((build) => build.id === id)?.build_number;
  const asked = new Set(patches.data.map((patch) => patch.base_artifact_id));
  const bases = builds.filter((build) => build.build_number < artifact.build_number && build.checksum_sha256 !== artifact.checksum_sha256 && !asked.has(build.id));
  return (
    <>
      {patches.data.length === 0 ? (
        <span className="muted">none</span>
      ) : (
        <ul className="plain" data-testid={`patches-${artifact.build_number}`}>
          {patches.data.map((patch) => (
            <li key={patch.id}>
              from build {buildOf(patch.base_artifact_id) ?? '(unknown)'}:{' '}
              {patch.state === 'ready' ? (
                <>
                  {formatBytes(patch.size)}{' '}
                  <span className="muted">
                    ({((100 * patch.size) / artifact.file_size).toFixed(1)}% of the build; {formatBytes(artifact.file_size - patch.size)} saved per device)
                  </span>
                </>
              ) : patch.state === 'failed' ? (
                <span className="danger-text" title={patch.reason}>
                  failed: {patch.reason}
                </span>
              ) : (
                <span className="muted">{patch.state}…</span>
              )}
            </li>
          ))}
        </ul>
      )}
      {downloads.data && downloads.data.patched > 0 && (
        <p className="small-text" data-testid={`build-saved-${artifact.build_number}`}>
          saved {formatBytes(downloads.data.bytes_saved)} over {downloads.data.patched} patched device{downloads.data.patched === 1 ? '' : 's'}
        </p>
      )}
      {bases.length > 0 && (
        <form
          className="row"
          aria-label={`Prepare a patch to build ${artifact.build_number}`}
          onSubmit={(event) => {
            event.preventDefault();
            if (base && !prepare.isPending) prepare.mutate(base, { onSuccess: () => setBase('') });
          }}
        >
          <select aria-label={`Base build for a patch to build ${artifact.build_number}`} value={base} disabled={!writable} onChange={(event) => setBase(event.target.value)}>
            <option value="">from build…</option>
            {bases.map((build) => (
              <option key={build.id} value={build.id}>
                {`build ${build.build_number} (${build.version_label})`}
              </option>
            ))}
          </select>
          <BusyButton type="submit" className="small" busy={prepare.isPending} disabled={!writable || !base} title={writable ? undefined : roleReason(role, 'operator')}>
            Prepare patch
          </BusyButton>
          {prepare.error && <ErrorNote error={prepare.error} />}
        </form>
      )}
    </>
  );
}

/**
 * A warning for a chip family no device of the project reports: the API takes any (the contract
 * keeps chip_family free text), but such a build is offered to no device until one reports it.
 */
function ChipFamilyNote({ typed, families }: { typed: string; families: ChipFamilyCount[] | undefined }) {
  const reported = (families ?? []).filter((family) => family.chip_family);
  if (!typed || !families || reported.some((family) => family.chip_family === typed)) return null;
  const near = reported.find((family) => family.chip_family.toLowerCase().replace(/[^a-z0-9]/g, '') === typed.toLowerCase().replace(/[^a-z0-9]/g, ''));
  return (
    <p className="stale wide" role="status" data-testid="chip-family-note">
      No device of this project reports the chip family “{typed}”: a build for it is offered to no device until one does.
      {near ? ` Did you mean “${near.chip_family}”?` : ''}
      {reported.length > 0 ? ` The devices report: ${reported.map((family) => `${family.chip_family} (${totalWords({ count: family.devices, estimated: family.estimated })})`).join(', ')}.` : ' No device has reported one yet.'}
    </p>
  );
}

function UploadForm({ projectId, onUploaded }: { projectId: string; onUploaded: () => void }) {
  const families = useQuery({ queryKey: queryKeys.chipFamilies(projectId), queryFn: () => answer(api.GET('/api/v1/projects/{id}/chip-families/', { params: { path: { id: projectId } } })) });
  const [chipFamily, setChipFamily] = useState('');
  const [progress, setProgress] = useState<number | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<Artifact | null>(null);
  return (
    <section aria-labelledby="upload">
      <h2 id="upload">Upload a build</h2>
      <form
        className="grid"
        onSubmit={async (event) => {
          event.preventDefault();
          const data = new FormData(event.currentTarget);
          const manifest: Record<string, unknown> = {
            version_label: data.get('version_label'),
            framework: data.get('framework'),
            chip_family: data.get('chip_family'),
          };
          for (const key of OPTIONAL_TEXT_FIELDS) if (String(data.get(key) ?? '').trim()) manifest[key] = String(data.get(key)).trim();
          const nvs = String(data.get('min_nvs_schema_version') ?? '').trim();
          if (nvs) manifest.min_nvs_schema_version = Number(nvs);
          const form = new FormData();
          // The manifest must come before the binary (the gateway streams the binary through).
          form.append('manifest', JSON.stringify(manifest));
          form.append('binary', data.get('binary') as File);
          setError(null);
          setDone(null);
          setProgress(0);
          try {
            const artifact = await uploadArtifact(projectId, form, setProgress);
            setDone(artifact);
            (event.target as HTMLFormElement).reset();
            setChipFamily('');
            onUploaded();
          } catch (failure) {
            setError(failure);
          } finally {
            setProgress(null);
          }
        }}
      >
        <label>
          Version label <input name="version_label" required maxLength={128} placeholder="1.4.0" />
        </label>
        <label>
          Framework
          <select name="framework" required defaultValue="esp_idf">
            <option value="esp_idf">esp_idf</option>
            <option value="arduino">arduino</option>
          </select>
        </label>
        <label>
          Chip family <input name="chip_family" required placeholder="esp32s3" list="reported-chip-families" value={chipFamily} onChange={(event) => setChipFamily(event.target.value.trim())} />
          <datalist id="reported-chip-families">
            {families.data?.filter((family) => family.chip_family).map((family) => <option key={family.chip_family} value={family.chip_family} />)}
          </datalist>
        </label>
        <ChipFamilyNote typed={chipFamily} families={families.data} />
        <label>
          Board id <input name="board_id" placeholder="optional" />
        </label>
        <label>
          Hardware revision <input name="hardware_revision" placeholder="optional" />
        </label>
        <label>
          Partition profile <input name="partition_profile" placeholder="optional" />
        </label>
        <label>
          Minimum NVS schema version <input name="min_nvs_schema_version" type="number" min={0} step={1} placeholder="optional" />
        </label>
        <label>
          Security mode <input name="security_mode" placeholder="optional, e.g. signed" />
        </label>
        <label className="wide">
          Release notes <textarea name="release_notes" rows={2} />
        </label>
        <label className="wide">
          Signature (base64 Ed25519 of the binary) <input name="signature" placeholder="optional" />
        </label>
        <label className="wide">
          Binary <input name="binary" type="file" required />
        </label>
        <div className="wide">
          <BusyButton type="submit" className="primary" busy={progress !== null} busyText="Uploading…">
            Upload
          </BusyButton>
          {progress !== null && (
            <progress max={1} value={progress} aria-label="Upload progress">
              {Math.round(progress * 100)}%
            </progress>
          )}
          {progress !== null && <span role="status"> {Math.round(progress * 100)}% sent{progress >= 1 ? ', storing and hashing…' : ''}</span>}
        </div>
      </form>
      <ErrorNote error={error} />
      {done && (
        <p role="status" className="ok">
          Uploaded build {done.build_number} ({done.version_label}), SHA-256 <span className="hash">{done.checksum_sha256}</span>.
          {done.image ? ` Its image is for ${done.image.chip}, secure version ${done.image.secure_version}.` : ' It is not an ESP-IDF image.'}
          {done.secure_version_raise && <strong className="danger-text"> It raises secure_version to {done.secure_version_raise.to}: deploying it needs an acknowledgment.</strong>}
        </p>
      )}
    </section>
  );
}
