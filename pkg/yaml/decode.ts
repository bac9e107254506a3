// Manifest bytes to text, as libyaml decodes them before parsing.

import { YamlError } from './read.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Decodes the bytes of a manifest as libyaml does: UTF-8, or UTF-16 with a byte-order mark; a UTF-8 BOM
 * is dropped. Invalid text is refused with its line and column, never replaced with U+FFFD.
 */
export function decodeYamlBytes(bytes: Uint8Array): string {
  const b0 = bytes[0];
  const b1 = bytes[1];
  const utf16 = b0 === 0xff && b1 === 0xfe ? 'utf-16le' : b0 === 0xfe && b1 === 0xff ? 'utf-16be' : undefined;
  if (utf16) {
    try {
      return new TextDecoder(utf16, { fatal: true }).decode(bytes);
    } catch {
      const text = new TextDecoder(utf16).decode(bytes);
      const at = text.indexOf('\uFFFD');
      throw new YamlError({
        document: 0,
        ...lineCol(text, at < 0 ? text.length : at),
        message: `invalid ${utf16.toUpperCase()} text (an odd byte count or an unpaired surrogate)`,
      });
    }
  }
  try {
    return utf8.decode(bytes);
  } catch {
    const at = firstInvalidUtf8(bytes);
    const before = utf8.decode(bytes.subarray(0, at));
    throw new YamlError({
      document: 0,
      ...lineCol(before, before.length),
      message: `invalid UTF-8 (byte 0x${(bytes[at] ?? 0).toString(16).padStart(2, '0')} at byte offset ${at}); kubectl refuses it too`,
    });
  }
}

function lineCol(text: string, offset: number): { line: number; col: number } {
  const before = text.slice(0, offset);
  const nl = before.lastIndexOf('\n');
  return { line: before.split('\n').length, col: offset - nl };
}

/** Offset of the first byte that does not start a valid UTF-8 sequence. */
function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i] ?? 0;
    const n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (n === 0 || i + n > b.length) return i;
    try {
      utf8.decode(b.subarray(i, i + n));
    } catch {
      return i;
    }
    i += n;
  }
  return b.length;
}
