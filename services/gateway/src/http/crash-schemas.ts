// Answers about crashes (docs/api.md, "Core dumps"): named components of the document through
// response-schemas.ts, which exports them with the rest.
import { COUNT, object, TIME, UUID } from './schema-building';

const SHA256 = { type: 'string', pattern: '^[0-9a-f]{64}$' } as const;
const DECODING = {
  type: 'string',
  enum: ['queued', 'decoded', 'read'],
  description: "`queued`: waiting for a decode worker; `decoded`: frames unwound by gdb with the build's ELF; `read`: only what the service reads without one (reason, program counter), `decoding_note` says why.",
} as const;

export const ArtifactElf = object({ sha256: SHA256, size: COUNT, uploaded_at: TIME });

export const CoreDumpReceipt = object(
  {
    received: { ...COUNT, description: 'Bytes of the dump the service holds from its start: where the next piece starts.' },
    complete: { type: 'boolean', description: 'The dump is whole and stored: the device may erase it.' },
    crash_id: { ...UUID, description: 'Once complete.' },
  },
  ['crash_id'],
);

export const CrashFrame = object({
  function: { type: 'string', description: "'' where no symbol names the address." },
  file: { type: 'string' },
  line: { type: 'integer', minimum: 0 },
  address: { type: 'string', pattern: '^0x[0-9a-f]{8}$' },
});

const REASON = {
  type: 'string',
  description: 'What ended the program: `abort`, `assert`, `stack_overflow`, `watchdog`, `panic`, a RISC-V exception (`load_access_fault`, `illegal_instruction`, ...), `interrupt` or `unknown`.',
} as const;

export const CrashGroup = object({
  id: { type: 'string' },
  artifact_id: { ...UUID, type: ['string', 'null'], description: 'The build that crashed; null when no build could be found.' },
  build_number: { type: ['integer', 'null'] },
  signature: { type: 'string', description: 'The reason and the first frames below the panic machinery, hashed: one group per build and signature.' },
  reason: REASON,
  frames: { type: 'array', items: CrashFrame },
  count: { ...COUNT, description: 'Crashes of the group (within the filter).' },
  devices: { ...COUNT, description: 'Devices among them.' },
  first_seen: TIME,
  last_seen: TIME,
  decoding: DECODING,
  new_in_build: { type: 'boolean', description: 'No earlier build of the project (a lower build number) has crashed this way.' },
});

export const Crash = object({
  id: UUID,
  device_id: { type: 'string' },
  artifact_id: { ...UUID, type: ['string', 'null'] },
  attribution: { type: 'string', enum: ['elf_sha256', 'device_build', 'none'], description: 'How the build was found: by the ELF SHA-256 the dump names, or the build the device last reported.' },
  sha256: SHA256,
  size: COUNT,
  chip: { type: 'string' },
  format_version: { type: 'string' },
  elf_sha256_prefix: { type: 'string' },
  reason: REASON,
  panic_details: { type: 'string' },
  pc: { type: ['string', 'null'], pattern: '^0x[0-9a-f]{8}$' },
  task: { type: 'string', description: "The crashed FreeRTOS task's name, once decoded." },
  in_interrupt: { type: 'boolean' },
  frames: { type: 'array', items: CrashFrame },
  decoding: DECODING,
  decoding_note: { type: 'string' },
  received_at: TIME,
});

export const CrashGroupDetail = object({ group: CrashGroup, samples: { type: 'array', items: Crash, description: 'Its newest crashes.' } });

export const CrashGroupFilter = {
  type: 'object',
  additionalProperties: false,
  properties: {
    artifact_id: { ...UUID, description: "Only this build's crashes." },
    deployment_id: { ...UUID, description: "Only crashes of the deployment's build since it started." },
    since: { type: 'string', format: 'date-time', description: 'Only crashes received at or after this time.' },
  },
} as const;
