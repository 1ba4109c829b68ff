// Every cache key the console's queries use, in one place: a page that changes something
// invalidates the same key the page that shows it reads, so neither can drift from the other.
// A key's first element names what it holds; the rest narrow it (project, device, page, filter).

/** Whose projects a list shows: a staff member names the owner, anyone else sees their own. */
export interface ProjectOwner {
  owner_id?: string;
  email?: string;
}

export const queryKeys = {
  session: () => ['session'] as const,
  projects: (owner?: ProjectOwner) => (owner === undefined ? (['projects'] as const) : (['projects', owner] as const)),
  project: (projectId: string) => ['project', projectId] as const,
  personalTokens: () => ['personal-tokens'] as const,
  projectTokens: (projectId: string) => ['project-tokens', projectId] as const,
  members: (projectId: string) => ['members', projectId] as const,
  invitations: () => ['invitations'] as const,
  groups: (projectId: string) => ['groups', projectId] as const,
  channels: (projectId: string) => ['channels', projectId] as const,
  /** Every device query of a project: its pages, searches and group members. */
  devices: (projectId: string) => ['devices', projectId] as const,
  devicePage: (projectId: string, filterKey: string, after: string) => ['devices', projectId, 'page', filterKey, after] as const,
  deviceSearch: (projectId: string, search: string) => ['devices', projectId, 'search', search] as const,
  groupMembers: (projectId: string, groupId: string, after: string | undefined) => ['devices', projectId, 'members', groupId, after] as const,
  deviceNames: (ids: readonly string[]) => ['device-names', ids.join(',')] as const,
  device: (deviceId: string) => ['device', deviceId] as const,
  deviceEvents: (deviceId: string) => ['device-events', deviceId] as const,
  deviceChecks: (deviceId: string) => ['device-checks', deviceId] as const,
  chipFamilies: (projectId: string) => ['chip-families', projectId] as const,
  reach: (projectId: string, targets: { group_ids?: string; channel_ids?: string }) => ['reach', projectId, targets] as const,
  artifacts: (projectId: string) => ['artifacts', projectId] as const,
  signingKeys: (projectId: string) => ['signing-keys', projectId] as const,
  deployments: (projectId: string) => ['deployments', projectId] as const,
  deployment: (deploymentId: string) => ['deployment', deploymentId] as const,
  summary: (deploymentId: string) => ['summary', deploymentId] as const,
  health: (deploymentId: string) => ['health', deploymentId] as const,
  patches: (artifactId: string) => ['patches', artifactId] as const,
  holds: (artifactId: string) => ['holds', artifactId] as const,
  /** Every page of a deployment's device states. */
  states: (deploymentId: string) => ['states', deploymentId] as const,
  statesPage: (deploymentId: string, status: string, afterId: string) => ['states', deploymentId, status, afterId] as const,
  webhooks: (projectId: string) => ['webhooks', projectId] as const,
  deliveries: (webhookId: string) => ['deliveries', webhookId] as const,
  audit: (projectId: string, action: string, before: string | undefined) => ['audit', projectId, action, before] as const,
  crashes: (projectId: string, artifactId: string) => ['crashes', projectId, artifactId] as const,
  crashGroup: (projectId: string, groupId: string) => ['crash-group', projectId, groupId] as const,
  deploymentCrashes: (deploymentId: string) => ['deployment-crashes', deploymentId] as const,
  deploymentDownloads: (deploymentId: string) => ['deployment-downloads', deploymentId] as const,
  buildDownloads: (artifactId: string) => ['build-downloads', artifactId] as const,
  fleetBuilds: (projectId: string, scope: string, days: number) => ['fleet-builds', projectId, scope, days] as const,
  vulnerabilities: (projectId: string) => ['vulnerabilities', projectId] as const,
  vulnerabilityReport: (projectId: string, advisoryId: string) => ['vulnerability-report', projectId, advisoryId] as const,
};
