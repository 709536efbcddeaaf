// saxes without its per-element attribute dictionaries. For every element saxes allocates `tag.attributes`, an
// `Object.create(null)` dictionary, and fills it to find duplicate attributes; the reader never reads it (it takes
// attributes from the 'attribute' events). Those dictionaries were half of all the memory a large list allocates
// (54 of 109 MB for the bench's 50,000 entries); without them the first read of that list in a process took about
// 50 ms less and later ones about 35 ms less (garbage collection, mostly).
//
// This replaces two of saxes' internal methods, so it is used only with the saxes it was written against (6.0.0,
// recognised by a hash of the source of its whole parser class, and by the states the copied code switches to):
// any other saxes gets the plain parser, which reads the same documents the same way, only slower.
// lean-saxes.test.ts fails when that happens, to have this file looked at again.
//
// The two methods below are adapted from saxes 6.0.0 (https://github.com/lddubeau/saxes), ISC License,
// Copyright Louis-Dominique Dubeau and the authors of sax.
import { createHash } from 'node:crypto';
import { SaxesParser } from 'saxes';

export type PlainSaxesParser = SaxesParser<{ xmlns: false; position: true }>;

/** sha-256 of the source of saxes 6.0.0's SaxesParser class. */
const SAXES_6_0_0 = '389185382e01065de6204f872e6fb2f79f1dc536245a025edb31f23d77bc1502';

// saxes 6.0.0's values for what the copied code uses.
const EOC = -1;
const GREATER = 0x3e;
const FORWARD_SLASH = 0x2f;
const S_OPEN_TAG_SLASH = 35;
const S_ATTRIB = 36;

/** Every element's `attributes`: nothing is ever stored in it. */
const NO_ATTRIBUTES: Record<string, string> = Object.freeze(Object.create(null) as Record<string, string>);

/** Above this many attributes in one element, duplicates are found with a Set rather than by comparing pairs. */
const PAIRWISE_MAX = 8;

function isS(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** The saxes internals the two methods use. */
interface Internals {
  name: string;
  tag: { name: string; attributes: Record<string, string>; ns?: Record<string, string> } | null;
  xmlnsOpt: boolean;
  topNS: Record<string, string> | null;
  openTagStartHandler: ((tag: unknown) => void) | undefined;
  sawRoot: boolean;
  fragmentOpt: boolean;
  closedRoot: boolean;
  state: number;
  attribList: { name: string; value: string }[];
  captureNameChars(): number;
  openTag(): void;
  fail(message: string): void;
}

function isSaxes600(): boolean {
  if (createHash('sha256').update(Function.prototype.toString.call(SaxesParser)).digest('hex') !== SAXES_6_0_0) return false;
  const proto = SaxesParser.prototype as unknown as Record<string, unknown>;
  const { stateTable } = new SaxesParser() as unknown as { stateTable: unknown[] };
  return stateTable[S_OPEN_TAG_SLASH] === proto.sOpenTagSlash && stateTable[S_ATTRIB] === proto.sAttrib;
}

/** Whether the installed saxes is the one these replacements were written for. */
export const LEAN_SAXES = isSaxes600();

// Typed as a plain constructor: TypeScript would not let a subclass override private methods.
const SaxesBase = SaxesParser as unknown as new (options: { xmlns: false; position: true }) => object;

class LeanSaxesParser extends SaxesBase {
  /** saxes 6.0.0's sOpenTag, line for line, but for the attributes object. */
  sOpenTag(this: Internals): void {
    const c = this.captureNameChars();
    if (c === EOC) return;
    const tag = (this.tag = { name: this.name, attributes: NO_ATTRIBUTES } as NonNullable<Internals['tag']>);
    this.name = '';
    if (this.xmlnsOpt) this.topNS = tag.ns = Object.create(null) as Record<string, string>;
    this.openTagStartHandler?.call(this, tag);
    this.sawRoot = true;
    if (!this.fragmentOpt && this.closedRoot) this.fail('documents may contain only one root.');
    switch (c) {
      case GREATER:
        this.openTag();
        break;
      case FORWARD_SLASH:
        this.state = S_OPEN_TAG_SLASH;
        break;
      default:
        if (!isS(c)) this.fail('disallowed character in tag name.');
        this.state = S_ATTRIB;
    }
  }

  /** Only saxes' duplicate check (same message), without filling the attributes object. */
  processAttribsPlain(this: Internals): void {
    const list = this.attribList;
    if (list.length <= PAIRWISE_MAX) {
      for (let i = 1; i < list.length; i++) {
        const { name } = list[i];
        for (let j = 0; j < i; j++) {
          if (list[j].name === name) {
            this.fail(`duplicate attribute: ${name}.`);
            break;
          }
        }
      }
    } else {
      const seen = new Set<string>();
      for (const { name } of list) {
        if (seen.has(name)) this.fail(`duplicate attribute: ${name}.`);
        seen.add(name);
      }
    }
    this.attribList = [];
  }
}

/** A non-namespace-aware saxes parser that tracks positions: the lean one when the installed saxes allows. */
export function createSaxesParser(): PlainSaxesParser {
  const options = { xmlns: false, position: true } as const;
  return LEAN_SAXES ? (new LeanSaxesParser(options) as unknown as PlainSaxesParser) : new SaxesParser(options);
}
