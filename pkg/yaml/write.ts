// Writing manifests that kubectl reads back unchanged. A string goes out without quotes only when
// sigs.k8s.io/yaml (YAML 1.1 scalars) would read those characters back as that same string: "yes", "on",
// "0o644", "1_000", "0b101" and "<<" are quoted, where a YAML 1.2 writer leaves them bare. Strings with
// characters YAML 1.1 treats as line breaks (U+0085, U+2028, U+2029) or that libyaml refuses raw are
// double-quoted with escapes.

import { Document, Scalar, visit } from 'yaml';
import { resolvePlain } from './scalars.js';

export interface WriteOptions {
  /** Map keys in sorted order (sigs.k8s.io/yaml's output); otherwise in insertion order. */
  sortKeys?: boolean;
  /** Indent list items under their key (`key:\n  - a`); default false, as kubectl writes (`key:\n- a`). */
  indentSeq?: boolean;
  /** Fold long strings at this width; 0 (the default) never folds. */
  lineWidth?: number;
}

/**
 * Characters a double-quoted scalar must carry as escapes: the ones libyaml refuses raw ("control
 * characters are not allowed"; the `yaml` package escapes C0 controls but not DEL or C1), and the YAML
 * 1.1 line breaks.
 */
const ESCAPE = /[\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F\u2028\u2029\uFFFE\uFFFF]/; // eslint-disable-line no-control-regex

// go-yaml v2's own writer quotes base-60 numbers "for compatibility with other parsers" (YAML 1.1 readers
// such as PyYAML read 12:30:45 as 45045), although it reads them as strings itself.
const BASE_60 = /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/;

/**
 * Whether `s`, written without quotes, reads back as the string `s` in YAML 1.1: in sigs.k8s.io/yaml,
 * and also in YAML 1.1 readers that take timestamps and base-60 numbers for what the spec says they are.
 */
export function readsBackPlain(s: string): boolean {
  // "<<" is a merge key when it is a key; as a value it would read back, but quoting it costs nothing.
  return s !== '<<' && resolvePlain(s).kind === 'str' && !BASE_60.test(s);
}

/** One YAML document (no `---`), ending in a newline. */
export function writeYaml(value: unknown, options: WriteOptions = {}): string {
  // The quoting decision is ours (readsBackPlain), not the package's: its YAML 1.1 mode writes a "<<" key
  // bare even when told to quote it.
  const doc = new Document(value, { aliasDuplicateObjects: false, sortMapEntries: options.sortKeys ?? false });
  visit(doc, {
    Scalar(_, node) {
      if (typeof node.value !== 'string') return;
      if (!readsBackPlain(node.value) || ESCAPE.test(node.value)) node.type = Scalar.QUOTE_DOUBLE;
    },
  });
  const text = doc.toString({
    indentSeq: options.indentSeq ?? false,
    lineWidth: options.lineWidth ?? 0,
    minContentWidth: 0,
  });
  // Only double-quoted scalars hold these characters now, and there an escape means the character.
  return text.replace(
    new RegExp(ESCAPE.source, 'g'),
    (c) => `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`,
  );
}
