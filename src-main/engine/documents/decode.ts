// Bytes to text for an XML document: the encoding comes from the byte order mark, else from the XML declaration
// (XML 1.0 Appendix F), else UTF-8. Decoding is streaming and strict: invalid bytes refuse the document.
import { isAscii, isUtf8 } from 'node:buffer';
import { TextDecoder } from 'node:util';
import { DocumentError } from './errors.ts';

/** Bytes held back to find the XML declaration before the encoding is chosen. */
const SNIFF_BYTES = 1024;

const DECLARED_ENCODING = /^<\?xml[^>]*?\sencoding\s*=\s*["']([A-Za-z][A-Za-z0-9._-]*)["']/;

function sniff(head: Uint8Array): string {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return 'utf-8';
  if (head[0] === 0xff && head[1] === 0xfe) return 'utf-16le';
  if (head[0] === 0xfe && head[1] === 0xff) return 'utf-16be';
  if (head[0] === 0x3c && head[1] === 0x00) return 'utf-16le';
  if (head[0] === 0x00 && head[1] === 0x3c) return 'utf-16be';
  const ascii = Buffer.from(head.buffer, head.byteOffset, head.byteLength).toString('latin1');
  const declared = DECLARED_ENCODING.exec(ascii)?.[1].toLowerCase();
  // A declaration read as ASCII cannot truthfully say UTF-16 (which would need a BOM or NUL bytes).
  if (declared === undefined || declared.startsWith('utf-16') || declared === 'unicode') return 'utf-8';
  return declared;
}

/** Length of `bytes` without a UTF-8 sequence cut short at its end (at most 3 bytes are left over). */
function completeUtf8Length(bytes: Uint8Array): number {
  const n = bytes.length;
  for (let back = 1; back <= 3 && back <= n; back++) {
    const b = bytes[n - back];
    if (b < 0x80) return n; // ASCII: nothing pending
    if (b >= 0xc0) {
      // A lead byte: is its sequence complete within the last `back` bytes?
      const needed = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
      return needed > back ? n - back : n;
    }
  }
  return n;
}

/**
 * UTF-8, by far the most common case, through Buffer (simdutf): validated, then decoded, several times faster
 * than a streaming TextDecoder. A multi-byte sequence cut by a chunk boundary waits for the next chunk.
 */
class Utf8Decoder {
  private pending: Uint8Array | null = null;

  /** Throws a TypeError on invalid UTF-8, like a fatal TextDecoder. */
  decode(chunk: Uint8Array, stream: boolean): string {
    let bytes = chunk;
    if (this.pending !== null) {
      bytes = Buffer.concat([this.pending, chunk]);
      this.pending = null;
    }
    let end = bytes.length;
    if (stream) {
      end = completeUtf8Length(bytes);
      if (end < bytes.length) this.pending = bytes.slice(end);
    }
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, end);
    // Pure ASCII (most documents) is valid UTF-8 and reads the same as Latin-1, which is a plain copy into a
    // one-byte string: about twice as fast as validating and decoding UTF-8.
    if (isAscii(buffer)) return buffer.toString('latin1');
    if (!isUtf8(buffer)) throw new TypeError('invalid UTF-8');
    // A BOM is skipped by the XML parser itself.
    return buffer.toString('utf8');
  }
}

interface Decoder {
  decode(bytes: Uint8Array, options: { stream: boolean }): string;
}

export class XmlDecoder {
  private readonly url: string;
  private decoder: Decoder | null = null;
  private head: Uint8Array[] = [];
  private headBytes = 0;
  encoding = 'utf-8';

  constructor(url: string) {
    this.url = url;
  }

  /** Text decoded so far from this chunk (possibly empty while the first bytes are held back). */
  decode(chunk: Uint8Array): string {
    if (this.decoder === null) {
      this.head.push(chunk);
      this.headBytes += chunk.byteLength;
      if (this.headBytes < SNIFF_BYTES) return '';
      return this.run(this.start(), true);
    }
    return this.run(chunk, true);
  }

  /** The rest of the text, at the end of the input. */
  end(): string {
    if (this.decoder === null) {
      if (this.headBytes === 0) return '';
      return this.run(this.start(), false);
    }
    return this.run(new Uint8Array(0), false);
  }

  private start(): Uint8Array {
    const head = this.head.length === 1 ? this.head[0] : Buffer.concat(this.head);
    this.head = [];
    this.encoding = sniff(head);
    try {
      if (this.encoding === 'utf-8' || this.encoding === 'utf8') {
        const utf8 = new Utf8Decoder();
        this.decoder = { decode: (bytes, { stream }) => utf8.decode(bytes, stream) };
      } else {
        this.decoder = new TextDecoder(this.encoding, { fatal: true });
      }
    } catch (err) {
      throw new DocumentError('encoding', `${this.url}: unsupported encoding "${this.encoding}"`, { cause: err });
    }
    return head;
  }

  private run(bytes: Uint8Array, stream: boolean): string {
    try {
      return (this.decoder as Decoder).decode(bytes, { stream });
    } catch (err) {
      throw new DocumentError('encoding', `${this.url}: bytes that are not valid ${this.encoding}`, { cause: err });
    }
  }
}
