/** One frame of a crashed task's backtrace; `function` and `file` are '' where nothing names them. */
export interface CrashFrame {
  function: string;
  file: string;
  line: number;
  address: number;
}

/**
 * How far a dump was understood: `queued` waits for a decode worker; `decoded` has the frames gdb
 * unwound with the build's ELF; `read` has what the service reads without one (reason, program
 * counter), and `decodingNote` says why it went no further.
 */
export type Decoding = 'queued' | 'decoded' | 'read';

/** How a dump's build was found: by the ELF SHA-256 it names, by the build its device reported, or not at all. */
export type Attribution = 'elf_sha256' | 'device_build' | 'none';

/** One core dump a device sent, stored by its SHA-256 (docs/api.md, "Core dumps"). */
export interface Crash {
  id: string;
  projectId: string;
  deviceId: string;
  /** '' when no build could be found. */
  artifactId: string;
  attribution: Attribution;
  sha256: string;
  size: number;
  storageKey: string;
  chip: string;
  formatVersion: string;
  elfSha256Prefix: string;
  reason: string;
  panicDetails: string;
  pc: number | null;
  task: string;
  inInterrupt: boolean;
  frames: CrashFrame[];
  decoding: Decoding;
  decodingNote: string;
  /** Read only because its build had no ELF yet: decoded again once the ELF comes. */
  needsElf: boolean;
  groupId: string | null;
  receivedAt: Date;
  attempts: number;
  /** A decode whose worker stopped is taken again after this. */
  leaseUntil: Date | null;
}

/** Crashes of one build with one signature: the same reason, down the same frames. */
export interface CrashGroup {
  id: string;
  projectId: string;
  artifactId: string;
  signature: string;
  reason: string;
  frames: CrashFrame[];
  decoding: Decoding;
}

/** A group with what its crashes add up to (within the filter it was listed with). */
export interface CrashGroupSummary extends CrashGroup {
  count: number;
  devices: number;
  firstSeen: Date;
  lastSeen: Date;
}

/** A dump arriving in pieces: what the service holds of it so far. */
export interface CoreDumpUpload {
  id: string;
  projectId: string;
  deviceId: string;
  sha256: string;
  size: number;
  createdAt: Date;
}
