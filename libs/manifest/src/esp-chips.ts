/**
 * The ESP chips an application image can be built for: the chip id its header carries (as
 * esptool 5.6 names them, `IMAGE_CHIP_ID` of each target) and how many bits the chip's eFuse has
 * for the anti-rollback `secure_version` (ESP-IDF's eFuse tables: a raise to version N burns bits
 * up to N, and no build below N boots on that chip again).
 */
export interface EspChip {
  id: number;
  /** The family name, as manifests and devices spell `chip_family`. */
  name: string;
  secureVersionBits: number;
}

const ESP_CHIPS: readonly EspChip[] = [
  { id: 0, name: 'esp32', secureVersionBits: 32 },
  { id: 2, name: 'esp32s2', secureVersionBits: 16 },
  { id: 5, name: 'esp32c3', secureVersionBits: 16 },
  { id: 9, name: 'esp32s3', secureVersionBits: 16 },
  { id: 12, name: 'esp32c2', secureVersionBits: 4 },
  { id: 13, name: 'esp32c6', secureVersionBits: 16 },
  { id: 16, name: 'esp32h2', secureVersionBits: 16 },
  { id: 18, name: 'esp32p4', secureVersionBits: 16 },
  { id: 20, name: 'esp32c61', secureVersionBits: 16 },
  { id: 23, name: 'esp32c5', secureVersionBits: 16 },
  { id: 25, name: 'esp32h21', secureVersionBits: 16 },
  { id: 28, name: 'esp32h4', secureVersionBits: 16 },
  { id: 31, name: 'esp32e22', secureVersionBits: 16 },
  { id: 32, name: 'esp32s31', secureVersionBits: 16 },
];

export function espChipById(id: number): EspChip | undefined {
  return ESP_CHIPS.find((chip) => chip.id === id);
}

export function espChipByName(name: string): EspChip | undefined {
  const wanted = chipFamilyKey(name);
  return ESP_CHIPS.find((chip) => chip.name === wanted);
}

/**
 * A chip family as compared with an image's chip: `chip_family` is free text, so `ESP32-S3`,
 * `esp32_s3` and `esp32s3` name one chip.
 */
export function chipFamilyKey(chipFamily: string): string {
  return chipFamily.toLowerCase().replace(/[-_\s]/g, '');
}
