// The API's JSON shapes the console reads. They are generated, when the console is built, from
// docs/openapi.json: the gateway's own document (a gateway test keeps the file current), so the
// console and the server cannot disagree about a field.
import type { components } from '../generated/api';

type Schemas = components['schemas'];

export type Session = Schemas['Session'];
export type Project = Schemas['Project'];
export type ProjectMember = Schemas['ProjectMember'];
export type Device = Schemas['Device'];
export type Channel = Schemas['Channel'];
export type Group = Schemas['Group'];
export type Artifact = Schemas['Artifact'];
export type CrashGroup = Schemas['CrashGroup'];
export type CrashFrame = Schemas['CrashFrame'];
export type Deployment = Schemas['Deployment'];
export type BuildHold = Schemas['BuildHold'];
export type DeploymentState = Deployment['state'];
export type Guardrails = Schemas['Guardrails'];
export type DeploymentSummary = Schemas['DeploymentSummary'];
export type DeploymentPreview = Schemas['DeploymentPreview'];
export type DeploymentHealth = Schemas['DeploymentHealth'];
export type DeviceState = Schemas['DeviceState'];
export type DeviceEvent = Schemas['DeviceEvent'];
export type Decision = Schemas['Decision'];
export type Token = Schemas['Token'];
export type TokenCreated = Schemas['TokenCreated'];
export type SigningKey = Schemas['SigningKey'];
export type Downloads = Schemas['Downloads'];
export type FleetBuilds = Schemas['FleetBuilds'];
export type VulnerabilityReport = Schemas['VulnerabilityReport'];
export type AuditEvent = Schemas['AuditEvent'];
export type Reach = Schemas['Reach'];
export type MembershipImpact = Schemas['MembershipImpact'];
export type MembershipChange = Schemas['MembershipChange'];
export type ChipFamilyCount = Schemas['ChipFamilyCount'];
export type Webhook = Schemas['Webhook'];
export type WebhookCreated = Schemas['WebhookCreated'];
export type WebhookDelivery = Schemas['WebhookDelivery'];

export type RolloutStatus = DeviceState['status'];
export type PreviewOutcome = keyof DeploymentPreview['outcomes'];

// Records, so that the compiler checks that each lists every value the API has, in the order the
// console draws them (the rollout bar stacks its segments this way).
const ROLLOUT_ORDER: Record<RolloutStatus, null> = {
  pending: null,
  offered: null,
  download_started: null,
  downloaded: null,
  flashed: null,
  validated: null,
  reboot: null,
  confirmed: null,
  failed: null,
  rolled_back: null,
};
export const ROLLOUT_STATUSES = Object.keys(ROLLOUT_ORDER) as RolloutStatus[];

const PREVIEW_ORDER: Record<PreviewOutcome, null> = {
  offered: null,
  up_to_date: null,
  not_in_rollout: null,
  no_compatible_build: null,
  chip_revision_unsupported: null,
  secure_version_too_low: null,
  device_inactive: null,
  not_targeted: null,
  unknown_hardware: null,
};
export const PREVIEW_OUTCOMES = Object.keys(PREVIEW_ORDER) as PreviewOutcome[];

/** A count of devices as the API gave it: exact, or extrapolated from a sample of a large project. */
export interface DeviceTotal {
  count: number;
  estimated: boolean;
}
