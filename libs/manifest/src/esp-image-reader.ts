import { createHash, type Hash } from 'node:crypto';
import { invalidArgument } from '@ota/errors';
import { espChipById } from './esp-chips';
import type { EspImage } from './esp-image';

/**
 * Reads an ESP-IDF application image as its bytes stream past, with no buffer beyond the 256
 * bytes of its app descriptor: the layout ESP-IDF's bootloader checks and esptool writes.
 *
 *   header (24 bytes) | segment count × (load address, length, data) | 0..15 bytes to the next
 *   16-byte boundary, the last of them the checksum | the SHA-256 of all before, when appended
 *
 * The checksum is 0xEF XOR every byte of segment data. The app descriptor (`esp_app_desc_t`,
 * 256 bytes, magic 0xABCD5432) starts the first segment's data. Bytes after the image (a secure
 * boot signature block, padding) are not read.
 *
 * A binary whose first byte is not 0xE9 is not an image: `finish()` answers null. One that starts
 * with it is read as one, and anything the bootloader would refuse is an InvalidArgument naming it.
 */
export class EspImageReader {
  private phase: Phase = 'header';
  /** Bytes of the current fixed-size part (header, segment header, hash) gathered so far. */
  private readonly part = Buffer.alloc(HASH_BYTES);
  private partFilled = 0;
  private offset = 0;
  private segmentCount = 0;
  private segmentIndex = 0;
  private segmentLeft = 0;
  private padLeft = 0;
  private xor = CHECKSUM_SEED;
  private chipId = 0;
  private minChipRevision = 0;
  private maxChipRevision = 0;
  private hashAppended = false;
  private readonly descriptor = Buffer.alloc(APP_DESC_BYTES);
  private descriptorFilled = 0;
  private readonly imageHash: Hash = createHash('sha256');
  private hashHex = '';

  /** Reads the next bytes of the binary; throws InvalidArgument as soon as they cannot be an image. */
  update(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length && this.phase !== 'trailer' && this.phase !== 'not_an_image') {
      at += this.step(chunk, at);
    }
  }

  /** The image, null for a binary that is not one; throws InvalidArgument for an image cut short. */
  finish(): EspImage | null {
    switch (this.phase) {
      case 'not_an_image':
        return null;
      case 'trailer':
        return this.image();
      case 'header':
        if (this.partFilled === 0) return null;
        throw refused(`the image header is cut short: ${this.partFilled} of its ${HEADER_BYTES} bytes`);
      case 'segment_header':
      case 'segment_data':
        throw refused(`the image ends inside segment ${this.segmentIndex} of ${this.segmentCount} (at byte ${this.offset})`);
      case 'checksum':
        throw refused(`the image ends before its checksum (at byte ${this.offset})`);
      case 'hash':
        throw refused(`the image header says a SHA-256 is appended, but the file ends ${HASH_BYTES - this.partFilled} bytes short of it`);
    }
  }

  /** Consumes bytes of `chunk` from `at` in the current phase; answers how many. */
  private step(chunk: Buffer, at: number): number {
    switch (this.phase) {
      case 'header': {
        if (this.offset === 0 && chunk[at] !== IMAGE_MAGIC) {
          this.phase = 'not_an_image';
          return chunk.length - at;
        }
        const taken = this.gather(chunk, at, HEADER_BYTES);
        if (this.partFilled === HEADER_BYTES) this.readHeader();
        return taken;
      }
      case 'segment_header': {
        const taken = this.gather(chunk, at, SEGMENT_HEADER_BYTES);
        if (this.partFilled === SEGMENT_HEADER_BYTES) this.readSegmentHeader();
        return taken;
      }
      case 'segment_data': {
        const taken = Math.min(this.segmentLeft, chunk.length - at);
        const data = chunk.subarray(at, at + taken);
        if (this.segmentIndex === 0 && this.descriptorFilled < APP_DESC_BYTES) {
          this.descriptorFilled += data.copy(this.descriptor, this.descriptorFilled, 0, APP_DESC_BYTES - this.descriptorFilled);
        }
        for (let i = 0; i < data.length; i++) this.xor ^= data[i]!;
        this.consume(data);
        this.segmentLeft -= taken;
        if (this.segmentLeft === 0) this.endSegment();
        return taken;
      }
      case 'checksum': {
        const taken = Math.min(this.padLeft + 1, chunk.length - at);
        const bytes = chunk.subarray(at, at + taken);
        this.consume(bytes);
        this.padLeft -= taken;
        if (this.padLeft === -1) {
          const checksum = bytes[bytes.length - 1]!;
          if (checksum !== this.xor) {
            throw refused(`the image checksum does not match: it says 0x${hex2(checksum)}, its segments give 0x${hex2(this.xor)}`);
          }
          if (this.hashAppended) this.startPart('hash');
          else this.phase = 'trailer';
        }
        return taken;
      }
      case 'hash': {
        const taken = this.gather(chunk, at, HASH_BYTES, false);
        if (this.partFilled === HASH_BYTES) {
          const appended = this.part.subarray(0, HASH_BYTES).toString('hex');
          const computed = this.imageHash.digest('hex');
          if (appended !== computed) throw refused(`the image's appended SHA-256 does not match its bytes: it says ${appended}, they give ${computed}`);
          this.hashHex = computed;
          this.phase = 'trailer';
        }
        return taken;
      }
      default:
        return chunk.length - at;
    }
  }

  /** Copies bytes of a fixed-size part into `part`; answers how many it took. */
  private gather(chunk: Buffer, at: number, size: number, hashed = true): number {
    const taken = chunk.copy(this.part, this.partFilled, at, at + Math.min(size - this.partFilled, chunk.length - at));
    if (hashed) this.consume(chunk.subarray(at, at + taken));
    else this.offset += taken;
    this.partFilled += taken;
    return taken;
  }

  private consume(bytes: Buffer): void {
    this.imageHash.update(bytes);
    this.offset += bytes.length;
  }

  private readHeader(): void {
    const header = this.part;
    this.segmentCount = header[1]!;
    this.chipId = header.readUInt16LE(12);
    this.minChipRevision = header.readUInt16LE(15);
    this.maxChipRevision = header.readUInt16LE(17);
    this.hashAppended = header[23] === 1;
    if (!espChipById(this.chipId)) throw refused(`the image header names chip id ${this.chipId}, which is no ESP chip esptool knows`);
    if (this.segmentCount === 0 || this.segmentCount > MAX_SEGMENTS) {
      throw refused(`the image header declares ${this.segmentCount} segments; ESP-IDF's bootloader loads 1 to ${MAX_SEGMENTS}`);
    }
    if (header[23]! > 1) throw refused(`the image header's hash_appended byte is ${header[23]}, neither 0 nor 1`);
    this.startPart('segment_header');
  }

  private readSegmentHeader(): void {
    const length = this.part.readUInt32LE(4);
    if (length % 4 !== 0) throw refused(`segment ${this.segmentIndex} has a length of ${length} bytes, not a multiple of 4`);
    if (length > MAX_SEGMENT_BYTES) throw refused(`segment ${this.segmentIndex} declares ${length} bytes, more than a flash chip holds`);
    if (this.segmentIndex === 0 && length < APP_DESC_BYTES) {
      throw refused(`the first segment holds ${length} bytes, too few for an app descriptor (esp_app_desc_t, ${APP_DESC_BYTES} bytes): is this an application image?`);
    }
    this.segmentLeft = length;
    this.phase = 'segment_data';
    if (length === 0) this.endSegment();
  }

  private endSegment(): void {
    if (this.segmentIndex === 0) this.checkDescriptor();
    this.segmentIndex += 1;
    if (this.segmentIndex < this.segmentCount) {
      this.startPart('segment_header');
      return;
    }
    // The checksum is the last byte of the 16-byte block the segments end in.
    this.padLeft = 15 - (this.offset % 16);
    this.phase = 'checksum';
  }

  private checkDescriptor(): void {
    const magic = this.descriptor.readUInt32LE(0);
    if (magic !== APP_DESC_MAGIC) {
      throw refused(`the first segment holds no app descriptor (esp_app_desc_t, magic 0xABCD5432; found 0x${magic.toString(16).padStart(8, '0')}): is this a bootloader or another kind of image?`);
    }
  }

  private startPart(phase: Phase): void {
    this.phase = phase;
    this.partFilled = 0;
  }

  private image(): EspImage {
    const desc = this.descriptor;
    return {
      chip: espChipById(this.chipId)!.name,
      chipId: this.chipId,
      secureVersion: desc.readUInt32LE(4),
      version: cString(desc, 16, 32),
      projectName: cString(desc, 48, 32),
      idfVersion: cString(desc, 112, 32),
      elfSha256: desc.subarray(144, 176).toString('hex'),
      minChipRevision: this.minChipRevision,
      maxChipRevision: this.maxChipRevision,
      minEfuseBlockRevision: desc.readUInt16LE(176),
      maxEfuseBlockRevision: desc.readUInt16LE(178),
      hashAppended: this.hashHex !== '',
    };
  }
}

type Phase = 'header' | 'segment_header' | 'segment_data' | 'checksum' | 'hash' | 'trailer' | 'not_an_image';

const IMAGE_MAGIC = 0xe9;
const HEADER_BYTES = 24;
const SEGMENT_HEADER_BYTES = 8;
const HASH_BYTES = 32;
const CHECKSUM_SEED = 0xef;
/** ESP_IMAGE_MAX_SEGMENTS: the bootloader refuses an image with more. */
const MAX_SEGMENTS = 16;
/** The largest flash an ESP chip maps; a segment longer cannot be loaded from any. */
const MAX_SEGMENT_BYTES = 32 * 1024 * 1024;
const APP_DESC_MAGIC = 0xabcd5432;
const APP_DESC_BYTES = 256;

function refused(reason: string) {
  return invalidArgument(`the binary starts as an ESP-IDF application image (0xE9) but is not a valid one: ${reason}`);
}

function hex2(byte: number): string {
  return byte.toString(16).padStart(2, '0');
}

/** A C string of a fixed-size field: up to its first NUL, or the whole field. */
function cString(buffer: Buffer, start: number, size: number): string {
  const field = buffer.subarray(start, start + size);
  const end = field.indexOf(0);
  return field.subarray(0, end === -1 ? size : end).toString('utf8');
}
